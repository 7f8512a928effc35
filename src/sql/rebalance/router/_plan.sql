-- Router: the one body of rebalance_plan(), drain_plan() and the
-- scheduler's plans (_rebalance_job_step()): the planner's input from the
-- router's tables and the nodes (_plan_placement(), one view), then the
-- pure planner (_rebalance_moves(): rebalance_plan() says how it
-- chooses). kind 'rebalance': every node takes part, those that accept
-- no shards closed (they receive none, their shards move off first).
-- kind 'drain': the drained node closed and drain_only, the nodes that
-- accept no shards left out (no target, their shards not planned); 42704
-- for an unknown node, 55000 when there is no other node. going_shards
-- and going_to: a job's moves under way, counted on their targets.
CREATE OR REPLACE FUNCTION shardid_internal._plan(kind text, drain_node text, strategy text, max_moves integer,
                                                  excluded_shards integer[], going_shards integer[] DEFAULT '{}',
                                                  going_to text[] DEFAULT '{}')
    RETURNS TABLE (step integer, shard integer, source text, target text, bytes bigint)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    node_names text[];
    closed     boolean[];
    pl         record;
BEGIN
    PERFORM shardid_internal._require_rebalance_options(strategy, max_moves);
    IF kind = 'drain' THEN
        IF drain_node IS NULL OR NOT EXISTS (SELECT FROM shardid.nodes AS x WHERE x.node = _plan.drain_node) THEN
            RAISE EXCEPTION 'node "%" does not exist', drain_node USING ERRCODE = 'undefined_object';
        END IF;
        IF NOT EXISTS (SELECT FROM shardid.nodes AS x WHERE x.node <> _plan.drain_node) THEN
            RAISE EXCEPTION 'there is no other node to drain node "%" onto', drain_node
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'Add a node first (shardid.add_node()).';
        END IF;
    END IF;
    SELECT COALESCE(pg_catalog.array_agg(n.node ORDER BY n.node COLLATE "C"), '{}'),
           COALESCE(pg_catalog.array_agg(CASE WHEN kind = 'drain' THEN n.node = _plan.drain_node ELSE NOT n.accepts_shards END
                                         ORDER BY n.node COLLATE "C"), '{}')
      INTO node_names, closed
      FROM shardid.nodes AS n
     WHERE kind <> 'drain' OR n.accepts_shards OR n.node = _plan.drain_node;
    pl := shardid_internal._plan_placement(strategy, excluded_shards, CASE WHEN kind = 'drain' THEN node_names END,
                                           going_shards, going_to);
    RETURN QUERY
        SELECT r.step, r.shard, r.source, r.target, r.bytes
          FROM shardid_internal._rebalance_moves(strategy, max_moves, node_names, pl.placed, pl.counted_on, pl.sizes,
                                                 pl.pinned, closed, drain_only => kind = 'drain') AS r;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._plan(text, text, text, integer, integer[], integer[], text[]) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._plan(text, text, text, integer, integer[], integer[], text[]) IS
    'Router: the one body of rebalance_plan(), drain_plan() and a job''s plans: the placement and sizes read in one view (a job''s moves under way counted on their targets), then the pure planner; kind rebalance or drain.';
