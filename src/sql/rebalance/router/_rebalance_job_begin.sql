-- Router, in the job's worker, first (and again each time the postmaster
-- restarts a worker that died): whether the job is still to run. A job
-- that has ended (finished, stopped, failed) or was marked interrupted (a
-- new job resumes its work) is not: false, and the worker exits for good.
-- Otherwise takes the rebalance lock (_rebalance_lock(): 55P03 naming its
-- holder: the job fails), records the worker (process ID and start time)
-- and turns the job to running (stopping stays stopping).
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_job_begin(job_id bigint) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    j shardid.rebalance_jobs;
BEGIN
    SELECT * INTO j FROM shardid.rebalance_jobs AS x WHERE x.job_id = _rebalance_job_begin.job_id FOR UPDATE;
    IF NOT FOUND OR j.state NOT IN ('starting', 'running', 'stopping') THEN
        RETURN false;
    END IF;
    IF j.state <> 'starting' THEN
        RAISE LOG 'shardid rebalance job %: its worker was restarted; it resumes the job', j.job_id;
    END IF;
    PERFORM shardid_internal._rebalance_lock(true, j.job_id);
    UPDATE shardid.rebalance_jobs AS x
       SET state = CASE WHEN x.state = 'stopping' THEN 'stopping' ELSE 'running' END,
           worker_pid = pg_backend_pid(),
           worker_start = (SELECT a.backend_start FROM pg_stat_activity AS a WHERE a.pid = pg_backend_pid()),
           updated_at = pg_catalog.clock_timestamp()
     WHERE x.job_id = j.job_id;
    RETURN true;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_job_begin(bigint) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_job_begin(bigint) IS
    'Router, background rebalance worker (at each start): false for a job that has ended or was interrupted; else takes the rebalance lock, records the worker and turns the job to running.';
