-- Router, check_cluster() step 6: a background rebalance or drain job
-- that has not ended and whose driver is gone (_rebalance_job_alive(): no
-- worker registered with this server's postmaster, e.g. after a restart of
-- the router or a promotion of its standby without the launcher); its
-- moves left in progress are reported as move_stalled. The fix starts its
-- driver again, as the role that started it (rebalance_resume()).
CREATE OR REPLACE FUNCTION shardid_internal._check_job_stalled(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'job_stalled', NULL::integer, j.drain_node,
           pg_catalog.format('background %s job %s (started by %s at %s, %s) has not ended and its driver is gone (a restart or a promotion of the router without the launcher); the fix resumes it, as the role that started it; to end it instead: SELECT shardid.rebalance_stop(%s); then the fix',
                             j.kind, j.job_id, j.started_by, j.started_at, j.state, j.job_id),
           NULL::text,
           pg_catalog.format('SELECT shardid.rebalance_resume(%s);', j.job_id)
      FROM shardid.rebalance_jobs AS j
     WHERE j.state IN ('starting', 'running', 'stopping') AND NOT j.in_session
       AND NOT shardid_internal._rebalance_job_alive(j)
     ORDER BY j.job_id
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_job_stalled(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_job_stalled(jsonb, jsonb) IS
    'Router, check_cluster(): job_stalled, a background rebalance or drain job that has not ended and whose driver is gone, with the call that resumes it.';
