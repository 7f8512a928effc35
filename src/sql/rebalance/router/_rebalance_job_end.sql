-- Router, in the job's worker, at the end: finished (balanced, drained or
-- max_moves) or stopped (rebalance_stop()); releases the rebalance lock. A
-- drain that leaves shards on its node fails (_drain_finish()).
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_job_end(job_id bigint) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    j shardid.rebalance_jobs;
BEGIN
    SELECT * INTO j FROM shardid.rebalance_jobs AS x WHERE x.job_id = _rebalance_job_end.job_id;
    IF j.kind = 'drain' AND j.state <> 'stopping' THEN
        PERFORM shardid_internal._drain_finish(j.drain_node, j.moves_done);
    END IF;
    PERFORM shardid_internal._rebalance_unlock();
    UPDATE shardid.rebalance_jobs AS x
       SET state = CASE WHEN x.state = 'stopping' THEN 'stopped' ELSE 'finished' END,
           current_shard = NULL, current_source = NULL, current_target = NULL,
           finished_at = pg_catalog.clock_timestamp(), updated_at = pg_catalog.clock_timestamp()
     WHERE x.job_id = _rebalance_job_end.job_id;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_job_end(bigint) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_job_end(bigint) IS
    'Router, background rebalance worker: marks the job finished or stopped and releases the rebalance lock.';
