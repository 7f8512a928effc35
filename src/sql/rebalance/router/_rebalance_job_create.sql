-- Router: what rebalance_start() and drain_node_start() share: refuses a
-- job while another runs, or while a session holds the rebalance lock
-- (_rebalance_lock(): 55P03 naming it); marks a job whose worker is gone
-- (a restart of the server) interrupted; inserts the job and starts its
-- worker. The worker waits for this transaction to commit.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_job_create(kind text, drain_node text, options jsonb) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    j      shardid.rebalance_jobs;
    id     bigint;
    pid    integer;
BEGIN
    LOCK TABLE shardid.rebalance_jobs IN SHARE ROW EXCLUSIVE MODE;
    FOR j IN SELECT * FROM shardid.rebalance_jobs AS x WHERE x.state IN ('starting', 'running', 'stopping') LOOP
        IF shardid_internal._rebalance_job_alive(j) THEN
            RAISE EXCEPTION 'background rebalance job % is running', j.job_id
                USING ERRCODE = 'lock_not_available',
                      DETAIL = pg_catalog.format('Its worker has process ID %s.', j.worker_pid),
                      HINT = 'Wait for it (SELECT * FROM shardid.rebalance_wait();) or stop it (SELECT shardid.rebalance_stop();).';
        END IF;
        UPDATE shardid.rebalance_jobs AS x SET state = 'interrupted', finished_at = pg_catalog.now(), updated_at = pg_catalog.now()
         WHERE x.job_id = j.job_id;
        RAISE NOTICE 'background rebalance job % was interrupted (its worker is gone: a restart?); this job resumes the work', j.job_id;
    END LOOP;
    -- the lock rebalance() and drain_node() hold: the worker takes it
    PERFORM shardid_internal._rebalance_lock(false);
    INSERT INTO shardid.rebalance_jobs (kind, drain_node, options, state)
    VALUES (kind, drain_node, options, 'starting')
    RETURNING job_id INTO id;
    pid := shardid_internal._rebalance_launch(id);
    UPDATE shardid.rebalance_jobs AS x SET worker_pid = pid WHERE x.job_id = id;
    RETURN id;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_job_create(text, text, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_job_create(text, text, jsonb) IS
    'Router: inserts a background rebalance or drain job and starts its worker, refusing (55P03) while another job or rebalance runs; marks jobs a restart interrupted.';
