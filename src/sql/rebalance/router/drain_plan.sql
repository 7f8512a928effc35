-- Router: the moves that empty a node, without making any: its shards,
-- largest first (by_size, sizes read from the nodes by shard_sizes()) or
-- highest-numbered first (by_count), each to the node that is then the
-- emptiest (by total size, or by number of shards; ties by node name),
-- never to the drained node. Loads count shards in a move on their target
-- (on their source while being rolled back). Shards of the node in a move
-- or frozen on the router are not planned: drain_node() resumes the
-- first and reports the second. Nodes that accept no shards (set_node())
-- are no target (their shards stay out of the plan). The planner is
-- rebalance_plan()'s (src/core/rebalance.cpp through _rebalance_moves()),
-- with the node closed and drain_only.
CREATE OR REPLACE FUNCTION shardid.drain_plan(node text, strategy text DEFAULT 'by_size', max_moves integer DEFAULT NULL)
    RETURNS TABLE (step integer, shard integer, source text, target text, bytes bigint)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT p.step, p.shard, p.source, p.target, p.bytes
      FROM shardid_internal._plan('drain', node, strategy, max_moves, NULL) AS p
$$;

REVOKE ALL ON FUNCTION shardid.drain_plan(text, text, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid.drain_plan(text, text, integer) IS
    'Router: the moves (step, shard, source, target, bytes) that empty a node: its shards largest first (by_size) or by number (by_count), each to the then emptiest other node that accepts shards; shards in a move or frozen stay. Changes nothing.';
