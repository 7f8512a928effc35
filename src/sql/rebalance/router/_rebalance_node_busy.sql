-- Router, the parallel driver (_rebalance_job_step()): how many moves a
-- node is in at once, as source or target: every move in progress
-- (shardid.shard_moves, whoever drives it) and the job's moves started
-- whose row there is not written yet.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_node_busy(job_id bigint, node text) RETURNS integer
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT (SELECT pg_catalog.count(*)::integer FROM shardid.shard_moves AS m
             WHERE _rebalance_node_busy.node IN (m.source, m.target))
         + (SELECT pg_catalog.count(*)::integer FROM shardid.rebalance_job_moves AS x
             WHERE x.job_id = _rebalance_node_busy.job_id AND x.state IN ('starting', 'running')
               AND _rebalance_node_busy.node IN (x.source, x.target)
               AND NOT EXISTS (SELECT FROM shardid.shard_moves AS m WHERE m.shard = x.shard))
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_node_busy(bigint, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_node_busy(bigint, text) IS
    'Router, the parallel rebalance driver: the moves a node is in at once (every move in progress, and the job''s moves started without their row yet).';
