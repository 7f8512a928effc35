-- Router, the driver (_rebalance_job_run()): whether a job runs its moves
-- in sessions of their own (_rebalance_job_step()): max_parallel over 1
-- or move_retries over 0 (a move can be retried only from another
-- session: a failed move_shard() ends the CALL that made it).
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_job_parallel(job_id bigint) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT COALESCE((j.options->>'max_parallel')::integer, 1) > 1 OR COALESCE((j.options->>'move_retries')::integer, 0) > 0
      FROM shardid.rebalance_jobs AS j WHERE j.job_id = _rebalance_job_parallel.job_id
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_job_parallel(bigint) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_job_parallel(bigint) IS
    'Router, the rebalance driver: whether a job runs each move in a background worker of its own (max_parallel > 1 or move_retries > 0).';
