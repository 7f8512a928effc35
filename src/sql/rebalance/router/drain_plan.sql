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
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    node_names text[];
    closed     boolean[];
    pl         record;
BEGIN
    PERFORM shardid_internal._check_rebalance_options(strategy, max_moves);
    IF node IS NULL OR NOT EXISTS (SELECT FROM shardid.nodes AS x WHERE x.node = drain_plan.node) THEN
        RAISE EXCEPTION 'node "%" does not exist', node USING ERRCODE = 'undefined_object';
    END IF;
    IF NOT EXISTS (SELECT FROM shardid.nodes AS x WHERE x.node <> drain_plan.node) THEN
        RAISE EXCEPTION 'there is no other node to drain node "%" onto', node
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Add a node first (shardid.add_node()).';
    END IF;
    SELECT pg_catalog.array_agg(n.node ORDER BY n.node COLLATE "C"), pg_catalog.array_agg(n.node = drain_plan.node ORDER BY n.node COLLATE "C")
      INTO node_names, closed
      FROM shardid.nodes AS n
     WHERE n.accepts_shards OR n.node = drain_plan.node;
    pl := shardid_internal._plan_placement(strategy, NULL, node_names);
    RETURN QUERY
        SELECT r.step, r.shard, r.source, r.target, r.bytes
          FROM shardid_internal._rebalance_moves(strategy, max_moves, node_names, pl.placed, pl.counted_on, pl.sizes,
                                                 pl.pinned, closed, drain_only => true) AS r;
END
$$;

REVOKE ALL ON FUNCTION shardid.drain_plan(text, text, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid.drain_plan(text, text, integer) IS
    'Router: the moves (step, shard, source, target, bytes) that empty a node: its shards largest first (by_size) or by number (by_count), each to the then emptiest other node that accepts shards; shards in a move or frozen stay. Changes nothing.';
