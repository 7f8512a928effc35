-- Router, in a move's worker (_rebalance_move_run()), once its CALLs have
-- returned: a move (or a resumed one) must be done (_require_move_done(),
-- 55000 otherwise: the worker records it as the move's error), then it
-- counts in the job's row and the move's row is done. A rollback counts
-- for nothing: done, or, for a move given up (outcome), failed or
-- cancelled.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_move_done(job_id bigint, shard integer) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r shardid.rebalance_job_moves;
BEGIN
    SELECT * INTO r FROM shardid.rebalance_job_moves AS x
     WHERE x.job_id = _rebalance_move_done.job_id AND x.shard = _rebalance_move_done.shard;
    IF r.action <> 'abort' THEN
        PERFORM shardid_internal._require_move_done(r.shard, r.target);
        UPDATE shardid.rebalance_jobs AS j
           SET moves_done = j.moves_done + 1, moved = j.moved || r.shard, updated_at = pg_catalog.clock_timestamp()
         WHERE j.job_id = r.job_id;
    END IF;
    UPDATE shardid.rebalance_job_moves AS x
       SET state = CASE WHEN r.action = 'abort' AND r.outcome IS NOT NULL THEN r.outcome ELSE 'done' END,
           updated_at = pg_catalog.clock_timestamp()
     WHERE x.job_id = r.job_id AND x.shard = r.shard;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_move_done(bigint, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_move_done(bigint, integer) IS
    'Router, a rebalance move''s worker: checks that the move is done (55000 otherwise) and counts it in the job''s row; the move''s row is done.';
