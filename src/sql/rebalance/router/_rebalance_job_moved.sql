-- Router, the driver (_rebalance_job_run()), after a move_shard() (or
-- abort_move()): the move must be done (_check_move_done(), for a move),
-- then it counts in the job's row.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_job_moved(job_id bigint, action text, shard integer, target text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF action = 'abort' THEN
        UPDATE shardid.rebalance_jobs AS j
           SET current_shard = NULL, current_source = NULL, current_target = NULL, updated_at = pg_catalog.clock_timestamp()
         WHERE j.job_id = _rebalance_job_moved.job_id;
        RETURN;
    END IF;
    PERFORM shardid_internal._check_move_done(shard, target);
    UPDATE shardid.rebalance_jobs AS j
       SET moves_done = j.moves_done + 1, moved = j.moved || _rebalance_job_moved.shard,
           current_shard = NULL, current_source = NULL, current_target = NULL,
           updated_at = pg_catalog.clock_timestamp()
     WHERE j.job_id = _rebalance_job_moved.job_id;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_job_moved(bigint, text, integer, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_job_moved(bigint, text, integer, text) IS
    'Router, the rebalance driver: checks that a move is done (55000 otherwise) and counts it in the job''s row.';
