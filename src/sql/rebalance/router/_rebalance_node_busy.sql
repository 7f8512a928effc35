-- Router, the scheduler (_rebalance_job_step()): how many moves a node is
-- in at once, as source or target, but for shard's own: the job's moves
-- under way (starting, running) and every other move in progress
-- (shardid.shard_moves, whoever drives it). A move's own row in
-- shardid.shard_moves (its worker died in it and it waits for its retry
-- or rollback) never blocks that move.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_node_busy(job_id bigint, node text, shard integer) RETURNS integer
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT (SELECT pg_catalog.count(*)::integer FROM shardid.rebalance_job_moves AS x
             WHERE x.job_id = _rebalance_node_busy.job_id AND x.state IN ('starting', 'running')
               AND x.shard <> _rebalance_node_busy.shard AND _rebalance_node_busy.node IN (x.source, x.target))
         + (SELECT pg_catalog.count(*)::integer FROM shardid.shard_moves AS m
             WHERE _rebalance_node_busy.node IN (m.source, m.target) AND m.shard <> _rebalance_node_busy.shard
               AND NOT EXISTS (SELECT FROM shardid.rebalance_job_moves AS x
                                WHERE x.job_id = _rebalance_node_busy.job_id AND x.shard = m.shard
                                  AND x.state IN ('starting', 'running')))
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_node_busy(bigint, text, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_node_busy(bigint, text, integer) IS
    'Router, the rebalance scheduler: how many moves a node is in at once (the job''s under way and every other move in progress), a shard''s own move not counted.';
