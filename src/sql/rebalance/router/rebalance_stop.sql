-- Router: stops the running background job (the last, or the given one):
-- it finishes the move in progress and makes no other (the default), or,
-- with cancel_move, cancels that move (pg_cancel_backend of the worker),
-- which rolls it back unless it was already repointed, as a cancelled
-- move_shard() does (with moves in workers of their own: each of them). Either way the job ends 'stopped'; rebalance_wait()
-- waits for that. Returns whether a running job was asked to stop.
CREATE OR REPLACE FUNCTION shardid.rebalance_stop(job bigint DEFAULT NULL, cancel_move boolean DEFAULT false) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    j shardid.rebalance_jobs;
BEGIN
    SELECT * INTO j FROM shardid.rebalance_jobs AS x
     WHERE x.job_id = COALESCE(rebalance_stop.job, (SELECT pg_catalog.max(y.job_id) FROM shardid.rebalance_jobs AS y))
     FOR UPDATE;
    IF NOT FOUND OR NOT shardid_internal._rebalance_job_alive(j) THEN
        RETURN false;
    END IF;
    UPDATE shardid.rebalance_jobs AS x SET state = 'stopping', updated_at = pg_catalog.clock_timestamp()
     WHERE x.job_id = j.job_id;
    IF cancel_move AND j.worker_pid IS NOT NULL THEN
        -- the worker records the cancel's error in this row, which waits
        -- for this transaction to commit and then reads 'stopping'
        PERFORM pg_catalog.pg_cancel_backend(j.worker_pid) WHERE NOT shardid_internal._rebalance_job_parallel(j.job_id);
        -- a job whose moves run in workers of their own: those workers
        PERFORM pg_catalog.pg_cancel_backend(x.worker_pid) FROM shardid.rebalance_job_moves AS x
         WHERE x.job_id = j.job_id AND x.state IN ('starting', 'running') AND x.worker_pid IS NOT NULL;
    END IF;
    RETURN true;
END
$$;

REVOKE ALL ON FUNCTION shardid.rebalance_stop(bigint, boolean) FROM PUBLIC;

COMMENT ON FUNCTION shardid.rebalance_stop(bigint, boolean) IS
    'Router: asks the running background rebalance or drain to stop: after the move in progress, or at once with cancel_move (that move rolls back unless repointed); the job ends stopped. Whether a running job was asked.';
