-- Router, in the job's worker after an error ended its CALL: records it.
-- A job being stopped whose move was cancelled (rebalance_stop(cancel_move
-- => true)) is stopped, not failed. The worker then exits, releasing the
-- rebalance lock with its session.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_job_failed(job_id bigint, error text) RETURNS void
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    UPDATE shardid.rebalance_jobs AS j
       SET state = CASE WHEN j.state = 'stopping' THEN 'stopped' ELSE 'failed' END,
           last_error = error,
           finished_at = pg_catalog.clock_timestamp(), updated_at = pg_catalog.clock_timestamp()
     WHERE j.job_id = _rebalance_job_failed.job_id
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_job_failed(bigint, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_job_failed(bigint, text) IS
    'Router, background rebalance worker: records the error that ended a job (failed, or stopped when it was being stopped).';
