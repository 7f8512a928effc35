-- Router: whether a job's worker is still there, or will be: its process,
-- with the start time it recorded (a process ID is reused after a
-- restart), or a job started since the server last started, whose worker
-- the postmaster restarts (src/pg/rebalance_worker.cpp: within its
-- restart interval, after it was terminated or crashed). A restart of the
-- server ends every job's worker for good: the job is interrupted.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_job_alive(j shardid.rebalance_jobs) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT j.state IN ('starting', 'running', 'stopping')
       AND (EXISTS (SELECT FROM pg_stat_activity AS a
                     WHERE a.pid = j.worker_pid
                       AND (j.worker_start IS NULL OR a.backend_start = j.worker_start))
            OR j.started_at >= pg_catalog.pg_postmaster_start_time())
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_job_alive(shardid.rebalance_jobs) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_job_alive(shardid.rebalance_jobs) IS
    'Router: whether a background rebalance job''s worker is running, or will be restarted by the postmaster (the job started since the server did).';
