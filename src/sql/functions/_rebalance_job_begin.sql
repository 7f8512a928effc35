-- Router, in the job's worker: takes the rebalance lock (55P03 naming its
-- holder: the job fails), records the worker (process ID and start time)
-- and turns the job to running. Returns the job's options.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_job_begin(job_id bigint) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    holder integer;
    opts   jsonb;
BEGIN
    holder := shardid_internal._rebalance_lock();
    IF holder IS NOT NULL THEN
        RAISE EXCEPTION 'another rebalance is running'
            USING ERRCODE = 'lock_not_available',
                  DETAIL = pg_catalog.format('The router session with process ID %s holds the rebalance lock.', holder);
    END IF;
    UPDATE shardid.rebalance_jobs AS j
       SET state = CASE WHEN j.state = 'stopping' THEN 'stopping' ELSE 'running' END,
           worker_pid = pg_backend_pid(),
           worker_start = (SELECT a.backend_start FROM pg_stat_activity AS a WHERE a.pid = pg_backend_pid()),
           updated_at = pg_catalog.clock_timestamp()
     WHERE j.job_id = _rebalance_job_begin.job_id
    RETURNING j.options INTO opts;
    RETURN opts;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_job_begin(bigint) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_job_begin(bigint) IS
    'Router, background rebalance worker: takes the rebalance lock, records the worker and turns the job to running; the job''s options.';
