-- Router: the loop of a move (move_shard(), and each move of a rebalance
-- or drain job: _rebalance_move_run), with its options record o whole
-- (_move_options): the shard's lock (shardid.session_locks, committed
-- first, released before the CALL ends), _move_start(), then one
-- _move_step() per phase, committing after each; a failure or a cancel
-- before the repoint rolls the move back (_move_rollback); a terminated
-- session leaves it for the next CALL or abort_move(). No SET clause (it
-- COMMITs): this holds the loop and its COMMITs, the work is done by
-- functions that pin search_path.
CREATE OR REPLACE PROCEDURE shardid_internal._move_shard(shard integer, to_node text, o shardid.move_options)
    LANGUAGE plpgsql
AS $$
DECLARE
    s        shardid_internal._move_run;
    t_start  timestamptz := pg_catalog.clock_timestamp();
    t_routed timestamptz;
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid.move_shard()',
                                             'once per phase (so that an interruption resumes or rolls back from there)');
    PERFORM shardid_internal._move_lock(shard, 'shardid.move_shard()');
    COMMIT;
    s := shardid_internal._move_start(shard, to_node, o);
    COMMIT;
    PERFORM shardid_internal._move_raise(s);
    IF s.aborting THEN
        CALL shardid_internal._move_rollback(shard);
        s := shardid_internal._move_rolled_back(s, 'resume', to_node);
        COMMIT;
        PERFORM shardid_internal._move_raise(s);
    END IF;
    WHILE s.phase IS NOT NULL LOOP
        s := shardid_internal._move_step(s, o);
        EXIT WHEN s.err IS NOT NULL;
        COMMIT;
        IF s.routed AND t_routed IS NULL THEN
            t_routed := pg_catalog.clock_timestamp();
        END IF;
        EXIT WHEN s.waiting;
    END LOOP;
    IF s.err IS NOT NULL THEN
        COMMIT;
        -- rolled back unless it is repointed (or gone): _move_rollback_start;
        -- a node that failed it is waited for, up to node_timeout
        CALL shardid_internal._move_rollback(shard, o.node_timeout, s.err[1]);
        s := shardid_internal._move_rolled_back(s, 'failure');
        COMMIT;
        PERFORM shardid_internal._move_raise(s);
    END IF;
    PERFORM shardid_internal._move_unlock(shard);
    COMMIT;
    PERFORM shardid_internal._move_report(s.m, t_start, t_routed, s.old, s.steps);
END
$$;

REVOKE ALL ON PROCEDURE shardid_internal._move_shard(integer, text, shardid.move_options) FROM PUBLIC;

COMMENT ON PROCEDURE shardid_internal._move_shard(integer, text, shardid.move_options) IS
    'Router: the loop of one move with its options record (move_shard(), a rebalance''s moves): the shard''s lock, then one step per phase, committing after each; a failure before the repoint rolls it back.';
