-- Router: whether a job has ended by now (finished, stopped or failed), read
-- in a snapshot of its own: VOLATILE, so that in READ COMMITTED it sees
-- what committed after the snapshot of the statement that calls it.
-- _rebalance_job_alive() asks it only once it has found the job's driver
-- gone: a driver commits the job's end and then exits, so a driver that
-- ended its job between a statement's snapshot and the look at its
-- process left that end for this read to see.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_job_ended(job bigint) RETURNS boolean
    LANGUAGE sql VOLATILE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT EXISTS (SELECT FROM shardid.rebalance_jobs AS x
                    WHERE x.job_id = _rebalance_job_ended.job AND x.state IN ('finished', 'stopped', 'failed'))
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_job_ended(bigint) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_job_ended(bigint) IS
    'Router: whether a rebalance job has ended (finished, stopped or failed), read in a new snapshot: what its driver committed before it exited.';
