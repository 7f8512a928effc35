-- Router: one move of a job, run by its own background worker
-- (src/pg/rebalance_worker.cpp, at top level) so that moves whose nodes
-- are disjoint run at the same time, or by the session of rebalance() and
-- drain_node() itself: _rebalance_move_begin() says what to do, then
-- abort_move() (a move to roll back) and the move's loop with the job's
-- move options whole (_move_shard()), and
-- _rebalance_move_done() counts it. An error ends the CALL; a worker
-- records it (_rebalance_move_failed()), a session's CALL fails with it.
-- No SET search_path (PostgreSQL refuses COMMIT in a procedure that has
-- one): this holds the CALLs and COMMITs; the functions it calls pin it.
CREATE OR REPLACE PROCEDURE shardid_internal._rebalance_move_run(job_id bigint, shard integer)
    LANGUAGE plpgsql
AS $$
DECLARE
    step record;
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid_internal._rebalance_move_run()',
                                             'once per phase of the move',
                                             'Start a background rebalance with shardid.rebalance_start().');
    SELECT b.* INTO step FROM shardid_internal._rebalance_move_begin(job_id, shard) AS b;
    COMMIT;
    IF step.action IS NULL THEN
        RETURN;
    END IF;
    IF step.abort THEN
        CALL shardid.abort_move(shard);
    END IF;
    IF step.action OPERATOR(pg_catalog.<>) 'abort' THEN
        CALL shardid_internal._move_shard(shard, step.target, step.options);
    END IF;
    PERFORM shardid_internal._rebalance_move_done(job_id, shard);
    COMMIT;
END
$$;

REVOKE ALL ON PROCEDURE shardid_internal._rebalance_move_run(bigint, integer) FROM PUBLIC;

COMMENT ON PROCEDURE shardid_internal._rebalance_move_run(bigint, integer) IS
    'Router: one move of a rebalance job in a background worker of its own (in parallel with others): rolls back a move being rolled back, then move_shard(), then counts it.';
