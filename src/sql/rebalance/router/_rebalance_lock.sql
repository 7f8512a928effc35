-- Router: the one rebalance lock, which every job of the one driver
-- (_rebalance_job_run(): rebalance() and drain_node() in their session, a
-- background job's start and its worker) goes through, so that they run
-- one at a time: the row 'rebalance' of shardid.session_locks, which
-- only administrators may take (0.2's advisory key hashtext('shardid-
-- rebalance') could be taken by any role, and is read no more). With take,
-- takes it for this session (job: the job this session runs, in the
-- background or in_session); without, only checks that it is free (for
-- rebalance_start() and drain_node_start(), whose worker takes it). Either
-- way refuses (55P03 naming the holder: a background job and its worker,
-- or a session with its role and application) while another live session
-- holds it or another background job is alive (one started a moment ago
-- has not taken it yet; a job in a session holds it from its start).
-- The caller commits at once. Released by _rebalance_unlock(), or free
-- once the holder's session ends.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_lock(take boolean, job bigint DEFAULT NULL) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    j      shardid.rebalance_jobs;
    holder integer;
    who    text;
BEGIN
    SELECT * INTO j FROM shardid.rebalance_jobs AS x
     WHERE x.state IN ('starting', 'running', 'stopping') AND x.job_id IS DISTINCT FROM _rebalance_lock.job
       AND NOT x.in_session
       AND shardid_internal._rebalance_job_alive(x)
     ORDER BY x.job_id LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'another rebalance is running: background % job %', j.kind, j.job_id
            USING ERRCODE = 'lock_not_available',
                  DETAIL = pg_catalog.format('Background %s job %s, started by %s at %s, holds the rebalance lock (its worker: process ID %s).',
                                             j.kind, j.job_id, j.started_by, j.started_at, COALESCE(j.worker_pid::text, 'not started yet')),
                  HINT = 'Wait for it (SELECT * FROM shardid.rebalance_wait();) or stop it (SELECT shardid.rebalance_stop();).';
    END IF;
    IF take THEN
        holder := shardid_internal._session_lock('rebalance');
    ELSE
        SELECT l.pid INTO holder FROM shardid.session_locks AS l
         WHERE l.lock_name = 'rebalance' AND shardid_internal._backend_alive(l.pid, l.backend_start);
    END IF;
    IF holder IS NOT NULL THEN
        SELECT pg_catalog.format('The router session with process ID %s (role %s, application "%s", since %s)%s holds the rebalance lock.',
                                 holder, COALESCE(a.usename::text, '?'), COALESCE(a.application_name, ''), l.taken_at,
                                 CASE WHEN holder = pg_catalog.pg_backend_pid() THEN ', this session,' ELSE '' END)
          INTO who
          FROM shardid.session_locks AS l
          LEFT JOIN pg_stat_activity AS a ON a.pid = l.pid
         WHERE l.lock_name = 'rebalance';
        RAISE EXCEPTION 'another rebalance is running'
            USING ERRCODE = 'lock_not_available',
                  DETAIL = COALESCE(who, pg_catalog.format('The router session with process ID %s holds the rebalance lock.', holder)),
                  HINT = 'Wait for its rebalance() or drain_node() to finish, or cancel it (pg_cancel_backend); one that failed keeps the lock until its session ends, or a rebalance() in it ends.';
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_lock(boolean, bigint) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_lock(boolean, bigint) IS
    'Router: the one rebalance lock of rebalance(), drain_node() and the background job: takes it for this session (take) or checks that it is free, refusing (55P03 naming the holder: a background job or a session) while another live session holds it or another job is alive.';
