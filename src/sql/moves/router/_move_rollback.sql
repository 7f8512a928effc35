-- Router: rolls a move back unless it has been repointed, committing as it
-- goes: first the phase is read under the lock on shard_placement that
-- repoint_shard() takes and turned to 'aborting' in that transaction, so
-- a move that the router already points at the target is never undone
-- (it stays repointed: _move_rollback_start); then the steps, the source
-- made writable first, each on its own so one unreachable node stops none
-- of the others (_move_rollback_steps). When all succeeded the row is
-- deleted; else, when the move failed because a node could not be
-- reached (cause: the failure's SQLSTATE) and the steps left something at
-- a node that could not be reached (a failover under way), they run again
-- every second for up to node_timeout from the start of the rollback
-- (_move_rollback_wait); what is still left then stays in phase
-- 'aborting', listed in last_error, for abort_move(), move_shard() or the
-- job's retry to finish. The caller reads the outcome from the row
-- (_move_outcome). Never raises: its caller holds the shard's lock.
-- No SET clause (it COMMITs): it holds the loop, the work is done by
-- functions that pin search_path.
CREATE OR REPLACE PROCEDURE shardid_internal._move_rollback(shard integer, node_timeout interval DEFAULT NULL, cause text DEFAULT NULL)
    LANGUAGE plpgsql
AS $$
DECLARE
    m      shardid.shard_moves;
    since  timestamptz := pg_catalog.clock_timestamp();
    outage boolean;
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid_internal._move_rollback()',
                                             'after each step',
                                             'It is called by shardid.move_shard() and shardid.abort_move(): CALL those on their own.');
    m := shardid_internal._move_rollback_start(shard);
    COMMIT;
    IF m.shard IS NULL THEN
        RETURN;
    END IF;
    LOOP
        outage := shardid_internal._move_rollback_steps(m);
        COMMIT;
        EXIT WHEN NOT shardid_internal._move_rollback_wait(m, since, node_timeout, cause, outage);
        COMMIT;
    END LOOP;
END
$$;

REVOKE ALL ON PROCEDURE shardid_internal._move_rollback(integer, interval, text) FROM PUBLIC;

COMMENT ON PROCEDURE shardid_internal._move_rollback(integer, interval, text) IS
    'Router: rolls back a move not yet repointed (phase read under the repoint''s lock), the source made writable first, retrying for up to node_timeout a node that does not answer when the move failed at one; deletes its row, or leaves it aborting with what is left.';
