-- Router: stops a job that has not ended (the last, or the given one):
-- its moves in flight finish and no other starts (the default), or, with
-- cancel_move, those moves are cancelled (pg_cancel_backend of each move's
-- worker; of the session of rebalance() and drain_node()) and every one
-- that is not yet repointed is rolled back before the job ends (the
-- scheduler starts a worker that rolls back what a cancelled move left;
-- a repointed one is finished), so that when the job says 'stopped' no
-- move of it is left in shardid.shard_moves. The driver is woken at once
-- (_rebalance_wake()). A job whose driver is gone (a restart of the
-- server) is stopped the same way when it is resumed (the launcher,
-- rebalance_resume()). rebalance_wait() waits for the end. Returns
-- whether a job that had not ended was asked to stop.
CREATE OR REPLACE FUNCTION shardid.rebalance_stop(job bigint DEFAULT NULL, cancel_move boolean DEFAULT false) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    j shardid.rebalance_jobs;
BEGIN
    IF cancel_move IS NULL THEN
        RAISE EXCEPTION 'cancel_move must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    -- ROW EXCLUSIVE on the table before the row's lock (see rebalance_resume())
    LOCK TABLE shardid.rebalance_jobs IN ROW EXCLUSIVE MODE;
    SELECT * INTO j FROM shardid.rebalance_jobs AS x
     WHERE x.job_id = COALESCE(rebalance_stop.job, (SELECT pg_catalog.max(y.job_id) FROM shardid.rebalance_jobs AS y))
     FOR UPDATE;
    IF NOT FOUND OR j.state NOT IN ('starting', 'running', 'stopping') THEN
        RETURN false;
    END IF;
    UPDATE shardid.rebalance_jobs AS x
       SET state = 'stopping', cancel_moves = x.cancel_moves OR rebalance_stop.cancel_move, updated_at = pg_catalog.clock_timestamp()
     WHERE x.job_id = j.job_id;
    IF cancel_move THEN
        -- each worker records the cancel's error in its row, which waits
        -- for this transaction to commit; the scheduler then reads 'stopping'
        PERFORM pg_catalog.pg_cancel_backend(x.worker_pid) FROM shardid.rebalance_job_moves AS x
         WHERE x.job_id = j.job_id AND x.state IN ('starting', 'running') AND x.worker_pid IS NOT NULL
           AND NOT j.in_session;
        PERFORM pg_catalog.pg_cancel_backend(j.worker_pid) WHERE j.in_session AND shardid_internal._rebalance_job_alive(j);
    END IF;
    PERFORM shardid_internal._rebalance_wake(j.worker_pid) WHERE NOT j.in_session AND j.worker_pid IS NOT NULL;
    RETURN true;
END
$$;

REVOKE ALL ON FUNCTION shardid.rebalance_stop(bigint, boolean) FROM PUBLIC;

COMMENT ON FUNCTION shardid.rebalance_stop(bigint, boolean) IS
    'Router: stops a rebalance or drain job (the last by default): its moves in flight finish and no other starts, or with cancel_move they are cancelled and rolled back (finished if already repointed) before the job says stopped; true if a job that had not ended was asked to stop.';
