-- Router: the start of every rebalance and drain, in the background
-- (rebalance_start(), drain_node_start()) or in this session (rebalance(),
-- drain_node(), in_session): marks a job whose worker is gone (a restart
-- of the server, a failed CALL) interrupted, with a NOTICE for a
-- background one (this job resumes its work); inserts the job's row. In
-- the background it refuses while another job runs, or while a session
-- holds the rebalance lock (_rebalance_lock(): 55P03 naming it), and
-- starts the worker (its handle recorded: _rebalance_job_alive()), which
-- waits for this transaction to commit; in a
-- session the caller goes on with CALL _rebalance_job_run(), whose start
-- takes the lock (the same refusals) before anything commits.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_job_create(kind text, drain_node text, options jsonb,
                                                                  in_session boolean DEFAULT false) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    j      shardid.rebalance_jobs;
    id     bigint;
    w      record;
BEGIN
    LOCK TABLE shardid.rebalance_jobs IN SHARE ROW EXCLUSIVE MODE;
    FOR j IN SELECT * FROM shardid.rebalance_jobs AS x WHERE x.state IN ('starting', 'running', 'stopping') ORDER BY x.job_id LOOP
        IF shardid_internal._rebalance_job_alive(j) THEN
            CONTINUE WHEN j.in_session OR in_session;
            RAISE EXCEPTION 'background rebalance job % is running', j.job_id
                USING ERRCODE = 'lock_not_available',
                      DETAIL = pg_catalog.format('Its worker has process ID %s.', j.worker_pid),
                      HINT = 'Wait for it (SELECT * FROM shardid.rebalance_wait();) or stop it (SELECT shardid.rebalance_stop();).';
        END IF;
        UPDATE shardid.rebalance_jobs AS x SET state = 'interrupted', finished_at = pg_catalog.now(), updated_at = pg_catalog.now()
         WHERE x.job_id = j.job_id;
        IF NOT j.in_session THEN
            RAISE NOTICE 'background rebalance job % was interrupted (its worker is gone: a restart?); this job resumes the work', j.job_id;
        END IF;
    END LOOP;
    IF in_session THEN
        INSERT INTO shardid.rebalance_jobs (kind, drain_node, options, state, in_session)
        VALUES (kind, drain_node, options, 'starting', true)
        RETURNING job_id INTO id;
        RETURN id;
    END IF;
    -- the worker moves over dblink; the lock rebalance() and drain_node()
    -- hold: the worker takes it
    PERFORM shardid_internal._dblink_schema();
    PERFORM shardid_internal._rebalance_lock(false);
    INSERT INTO shardid.rebalance_jobs (kind, drain_node, options, state)
    VALUES (kind, drain_node, options, 'starting')
    RETURNING job_id INTO id;
    w := shardid_internal._rebalance_launch(id, NULL, NULL);
    UPDATE shardid.rebalance_jobs AS x
       SET worker_pid = w.pid, worker_slot = w.slot, worker_generation = w.generation, worker_server = w.server
     WHERE x.job_id = id;
    RETURN id;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_job_create(text, text, jsonb, boolean) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_job_create(text, text, jsonb, boolean) IS
    'Router: inserts a rebalance or drain job, in the background (starts its worker, refusing with 55P03 while another job or rebalance runs) or in this session; marks jobs whose worker is gone interrupted.';
