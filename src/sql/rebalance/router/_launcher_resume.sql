-- Router, the launcher (_launcher_run()): resumes the background job whose
-- driver is gone (rebalance_resume(), as the role that started it), the
-- newest unfinished one; an older unfinished one whose driver is gone is
-- marked interrupted (one job runs at a time: the newest resumes the
-- work). Returns the job resumed, or NULL.
CREATE OR REPLACE FUNCTION shardid_internal._launcher_resume() RETURNS bigint
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    newest bigint;
BEGIN
    LOCK TABLE shardid.rebalance_jobs IN SHARE ROW EXCLUSIVE MODE;
    SELECT pg_catalog.max(x.job_id) INTO newest FROM shardid.rebalance_jobs AS x
     WHERE x.state IN ('starting', 'running', 'stopping') AND NOT x.in_session;
    UPDATE shardid.rebalance_jobs AS x
       SET state = 'interrupted', finished_at = pg_catalog.clock_timestamp(), updated_at = pg_catalog.clock_timestamp()
     WHERE x.state IN ('starting', 'running', 'stopping') AND NOT x.in_session AND x.job_id < newest
       AND NOT shardid_internal._rebalance_job_alive(x);
    RETURN CASE WHEN newest IS NOT NULL THEN shardid.rebalance_resume(newest) END;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._launcher_resume() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._launcher_resume() IS
    'Router, the launcher: resumes the newest unfinished background rebalance job whose driver is gone (older ones are marked interrupted); returns it, or NULL.';
