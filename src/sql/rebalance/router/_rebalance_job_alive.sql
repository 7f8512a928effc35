-- Router: whether a job's worker is still there, or will be. A job run
-- in a session (rebalance(), drain_node()): that session, with the start
-- time it recorded, running a statement (a CALL that failed leaves it
-- idle: the job is over, interrupted), and not this session (which is
-- not running it if it asks). A background job: its process, with the
-- start time it recorded (a process ID is reused after a restart), or a
-- job started since the server last started, whose worker the postmaster
-- restarts (src/pg/rebalance_worker.cpp: within its restart interval,
-- after it was terminated or crashed). A restart of the server ends every
-- job's worker for good: the job is interrupted.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_job_alive(j shardid.rebalance_jobs) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT j.state IN ('starting', 'running', 'stopping')
       AND CASE WHEN j.in_session
                THEN EXISTS (SELECT FROM pg_stat_activity AS a
                              WHERE a.pid = j.worker_pid AND a.pid <> pg_catalog.pg_backend_pid()
                                AND (a.backend_start = j.worker_start OR a.backend_start IS NULL)
                                AND a.state IS DISTINCT FROM 'idle' AND a.state IS DISTINCT FROM 'idle in transaction (aborted)')
                ELSE EXISTS (SELECT FROM pg_stat_activity AS a
                              WHERE a.pid = j.worker_pid
                                AND (j.worker_start IS NULL OR a.backend_start = j.worker_start))
                     OR j.started_at >= pg_catalog.pg_postmaster_start_time()
           END
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_job_alive(shardid.rebalance_jobs) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_job_alive(shardid.rebalance_jobs) IS
    'Router: whether a rebalance job''s worker is running: its session running a statement (in_session), or its background worker, running or to be restarted by the postmaster (the job started since the server did).';
