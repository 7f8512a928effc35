-- Router: rolls back a move that the router does not point at yet (see
-- _move_rollback: the source made writable first, then the subscription,
-- the slots and publication, the target's copy), e.g. one left by a
-- session that was terminated, or a rollback that could not finish
-- because a node was down. A move being run by another session is refused
-- (cancel that session instead: its rollback is the same); a repointed one
-- too: CALL move_shard() again to finish it.
CREATE OR REPLACE PROCEDURE shardid.abort_move(shard integer)
    LANGUAGE plpgsql
AS $$
DECLARE
    m       shardid.shard_moves;
    outcome text;
BEGIN
    IF NOT shardid_internal._commit_allowed() THEN
        RAISE EXCEPTION 'shardid.abort_move() cannot run inside a transaction block'
            USING ERRCODE = 'active_sql_transaction',
                  DETAIL = 'It commits after each step of the rollback, which a CALL inside BEGIN ... COMMIT, a function, an EXCEPTION block or a multi-statement query string cannot do.',
                  HINT = 'CALL it on its own (autocommit).';
    END IF;
    PERFORM shardid_internal._move_lock(shard, 'shardid.abort_move()');
    SELECT x.* INTO m FROM shardid.shard_moves AS x WHERE x.shard OPERATOR(pg_catalog.=) abort_move.shard;
    IF NOT FOUND THEN
        PERFORM shardid_internal._move_unlock(shard);
        COMMIT;
        RAISE EXCEPTION 'no move of shard % is in progress', shard
            USING ERRCODE = 'undefined_object',
                  HINT = 'See shardid.move_progress.';
    END IF;
    COMMIT;
    CALL shardid_internal._move_rollback(shard);
    outcome := shardid_internal._move_outcome(shard);
    PERFORM shardid_internal._move_unlock(shard);
    COMMIT;
    IF outcome OPERATOR(pg_catalog.=) 'repointed' THEN
        RAISE EXCEPTION 'shard % is already served by node "%": the move cannot be aborted', shard, m.target
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = pg_catalog.format('CALL shardid.move_shard(%s, %L); to finish it.', shard, m.target);
    ELSIF outcome OPERATOR(pg_catalog.=) 'cancelled' THEN
        RAISE EXCEPTION 'canceling statement due to user request'
            USING ERRCODE = 'query_canceled',
                  DETAIL = 'The rollback stopped part way: CALL shardid.abort_move() again to finish it.';
    ELSIF outcome OPERATOR(pg_catalog.<>) 'rolled back' AND outcome OPERATOR(pg_catalog.<>) 'none' THEN
        RAISE EXCEPTION 'the rollback of the move of shard % is not complete', shard
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = outcome,
                  HINT = pg_catalog.format('The shard is writable on node "%s" unless that node is down. Fix the cause, then CALL shardid.abort_move(%s); again.', m.source, shard);
    END IF;
END
$$;

REVOKE ALL ON PROCEDURE shardid.abort_move(integer) FROM PUBLIC;

COMMENT ON PROCEDURE shardid.abort_move(integer) IS
    'Router: rolls back a shard move that has not been repointed (source writable first, then subscription, slots, publication, target copy); refused while another session runs the move.';
