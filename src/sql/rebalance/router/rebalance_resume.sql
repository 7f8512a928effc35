-- Router: resumes a background rebalance or drain job (the last, or the
-- given one) whose driver is gone (a restart of the server, a promotion
-- of this router from its standby): starts its driver again as the role
-- that started it (another role than the caller's only for a superuser:
-- 42501), which goes on where the ledger says (moves left in progress
-- first; a job being stopped stops). The launcher (shardid in
-- shared_preload_libraries) calls it for every such job after a start or
-- a promotion; without it an administrator does, or rebalance_start(),
-- which starts a new job that resumes the work. Returns the job's ID, or
-- NULL when there is no such job or its driver is alive (nothing to do).
-- A job whose role is gone fails (its last error says so).
CREATE OR REPLACE FUNCTION shardid.rebalance_resume(job bigint DEFAULT NULL) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    j    shardid.rebalance_jobs;
    role oid;
    w    record;
BEGIN
    -- One job resumes at a time, and none while a job is created
    -- (_rebalance_job_create(), _launcher_resume()): SHARE ROW EXCLUSIVE,
    -- then the row's lock. Whoever locks a job's row to update it later
    -- (the driver's _rebalance_job_begin() and _rebalance_job_step(),
    -- rebalance_stop()) takes ROW EXCLUSIVE first, so that this waits for
    -- it; holding only the row's lock, it would wait for this at its
    -- UPDATE, a deadlock (a launcher's visit once failed a running job so).
    LOCK TABLE shardid.rebalance_jobs IN SHARE ROW EXCLUSIVE MODE;
    SELECT * INTO j FROM shardid.rebalance_jobs AS x
     WHERE x.job_id = COALESCE(rebalance_resume.job, (SELECT pg_catalog.max(y.job_id) FROM shardid.rebalance_jobs AS y))
     FOR UPDATE;
    IF NOT FOUND OR j.in_session OR j.state NOT IN ('starting', 'running', 'stopping')
       OR shardid_internal._rebalance_job_alive(j) THEN
        RETURN NULL;
    END IF;
    SELECT r.oid INTO role FROM pg_catalog.pg_roles AS r WHERE r.rolname = j.started_by;
    IF role IS NULL THEN
        UPDATE shardid.rebalance_jobs AS x
           SET state = 'failed', last_error = pg_catalog.format('not resumed: role %s, which started it, no longer exists', j.started_by),
               finished_at = pg_catalog.clock_timestamp(), updated_at = pg_catalog.clock_timestamp()
         WHERE x.job_id = j.job_id;
        RETURN j.job_id;
    END IF;
    RAISE LOG 'shardid rebalance job %: its driver is gone; resumed as role %', j.job_id, j.started_by;
    w := shardid_internal._rebalance_launch(j.job_id, NULL, role);
    UPDATE shardid.rebalance_jobs AS x
       SET worker_pid = w.pid, worker_start = NULL, worker_slot = w.slot, worker_generation = w.generation, worker_server = w.server,
           updated_at = pg_catalog.clock_timestamp()
     WHERE x.job_id = j.job_id;
    RETURN j.job_id;
END
$$;

REVOKE ALL ON FUNCTION shardid.rebalance_resume(bigint) FROM PUBLIC;

COMMENT ON FUNCTION shardid.rebalance_resume(bigint) IS
    'Router: starts again the driver of a background rebalance or drain job whose driver is gone (a restart, a promotion), as the role that started it; the launcher calls it by itself. Returns the job''s ID, or NULL when there is nothing to resume.';
