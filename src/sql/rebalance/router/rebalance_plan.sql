-- The moves that would even out the nodes, without making any: the
-- placement and the moves in progress from the router's tables, the sizes
-- (by_size) from the nodes through shard_sizes(), the plan from the pure
-- planner _rebalance_moves() (which says how it chooses). Every node of
-- shardid.nodes takes part, also one that holds no shard yet. A shard in a
-- move counts on the node it is going to (on its source while the move is
-- being rolled back) and is not moved; so are frozen shards and
-- excluded_shards. A node that accepts no shards (set_node()) is closed
-- to the planner: it receives none, and its shards move off first.
-- by_count reaches no node and reports no bytes.
CREATE OR REPLACE FUNCTION shardid.rebalance_plan(strategy text DEFAULT 'by_size', max_moves integer DEFAULT NULL,
                                                  excluded_shards integer[] DEFAULT '{}')
    RETURNS TABLE (step integer, shard integer, source text, target text, bytes bigint)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT p.step, p.shard, p.source, p.target, p.bytes
      FROM shardid_internal._plan('rebalance', NULL, strategy, max_moves, excluded_shards) AS p
$$;

REVOKE ALL ON FUNCTION shardid.rebalance_plan(text, integer, integer[]) FROM PUBLIC;

COMMENT ON FUNCTION shardid.rebalance_plan(text, integer, integer[]) IS
    'Router: the moves (step, shard, source, target, bytes) that would even out the nodes'' total shard size (by_size, read from the nodes) or shard count (by_count), at most max_moves; shards in a move, frozen or excluded stay put; none goes to a node that accepts no shards, whose shards move off. Changes nothing.';
