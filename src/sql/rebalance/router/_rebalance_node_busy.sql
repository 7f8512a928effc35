-- Router, the scheduler (_rebalance_job_step()): whether a move of shard
-- from source to target must wait because one of its two nodes is in
-- per_node moves already, as source or target, but for shard's own: the
-- job's moves under way (starting, running) and every other move in
-- progress (shardid.shard_moves, whoever drives it). A move's own row in
-- shardid.shard_moves (its worker died in it and it waits for its retry
-- or rollback) never blocks that move. One check for the three kinds of
-- move the scheduler starts (retries, moves left in progress, the plan's).
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_node_busy(job_id bigint, source text, target text, shard integer,
                                                                 per_node integer) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT pg_catalog.max(b.moves) >= _rebalance_node_busy.per_node
      FROM (SELECT n.node,
                   (SELECT pg_catalog.count(*)::integer FROM shardid.rebalance_job_moves AS x
                     WHERE x.job_id = _rebalance_node_busy.job_id AND x.state IN ('starting', 'running')
                       AND x.shard <> _rebalance_node_busy.shard AND n.node IN (x.source, x.target))
                   + (SELECT pg_catalog.count(*)::integer FROM shardid.shard_moves AS m
                       WHERE n.node IN (m.source, m.target) AND m.shard <> _rebalance_node_busy.shard
                         AND NOT EXISTS (SELECT FROM shardid.rebalance_job_moves AS x
                                          WHERE x.job_id = _rebalance_node_busy.job_id AND x.shard = m.shard
                                            AND x.state IN ('starting', 'running'))) AS moves
              FROM (VALUES (_rebalance_node_busy.source), (_rebalance_node_busy.target)) AS n(node)) AS b
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_node_busy(bigint, text, text, integer, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_node_busy(bigint, text, text, integer, integer) IS
    'Router, the rebalance scheduler: whether a move must wait because its source or target is in per_node moves at once already (the job''s under way and every other move in progress), the shard''s own move not counted.';
