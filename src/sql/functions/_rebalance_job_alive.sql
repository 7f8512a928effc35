-- Router: whether a job's worker is still there: its process, with the
-- start time it recorded (a process ID is reused after a restart). A job
-- still 'starting' has not recorded it yet: it counts as alive for a
-- minute after it was started.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_job_alive(j shardid.rebalance_jobs) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT j.state IN ('starting', 'running', 'stopping')
       AND (EXISTS (SELECT FROM pg_stat_activity AS a
                     WHERE a.pid = j.worker_pid
                       AND (j.worker_start IS NULL OR a.backend_start = j.worker_start))
            OR (j.state = 'starting' AND j.started_at > pg_catalog.now() - interval '1 minute'))
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_job_alive(shardid.rebalance_jobs) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_job_alive(shardid.rebalance_jobs) IS
    'Router: whether a background rebalance job''s worker is still running.';
