-- Router: whether a job's driver is still there, or will be. A job run in
-- a session (rebalance(), drain_node()): that session (its process with
-- the start time it recorded: a process ID is reused), running a
-- statement (a CALL that failed leaves it idle: the job is over,
-- interrupted), and not this session (which is not running it if it
-- asks). A background job: its worker, registered with this server's
-- postmaster (_rebalance_worker_alive(): running, or to be restarted
-- after it died), or the process that recorded itself as the driver (a
-- worker the postmaster restarted after a crash of the server has a new
-- handle). Never by comparing start times: after a restart, or on a
-- promoted standby, the postmaster has no such worker and the job is
-- interrupted until the launcher, rebalance_resume() or rebalance_start()
-- resumes it. A driver that is gone but ended its job after the caller's
-- snapshot (it commits the end, then exits) was alive in that snapshot:
-- _rebalance_job_ended() reads the row again, after the look at the
-- process (CASE keeps that order), so that a job that ends as
-- rebalance_status() or check_cluster() reads it shows its last state in
-- the snapshot, never interrupted.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_job_alive(j shardid.rebalance_jobs) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT j.state IN ('starting', 'running', 'stopping')
       AND CASE WHEN j.in_session
                 AND EXISTS (SELECT FROM pg_stat_activity AS a
                              WHERE a.pid = j.worker_pid AND a.pid <> pg_catalog.pg_backend_pid()
                                AND (a.backend_start = j.worker_start OR a.backend_start IS NULL)
                                AND a.state IS DISTINCT FROM 'idle' AND a.state IS DISTINCT FROM 'idle in transaction (aborted)')
                THEN true
                WHEN NOT j.in_session
                 AND (COALESCE(shardid_internal._rebalance_worker_alive(j.worker_slot, j.worker_generation, j.worker_server), false)
                      OR (j.worker_start IS NOT NULL AND shardid_internal._backend_alive(j.worker_pid, j.worker_start)))
                THEN true
                -- gone now: did it end the job after the caller's snapshot?
                ELSE shardid_internal._rebalance_job_ended(j.job_id)
           END
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_job_alive(shardid.rebalance_jobs) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_job_alive(shardid.rebalance_jobs) IS
    'Router: whether a rebalance job''s driver is there or will be: its session running a statement (in_session), or its background worker registered with this server''s postmaster (or the process it recorded); a driver gone since it ended the job (read again in a new snapshot) was there in the caller''s snapshot.';
