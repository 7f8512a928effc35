-- The rebalance planner, pure: from the nodes, the node each shard counts
-- on and its size, the moves that even out the nodes' load. It reads no
-- table and reaches no node: rebalance_plan() gathers its input (placement,
-- moves in progress, sizes read from the nodes) and calls it, and the
-- regression tests call it with sizes of their own.
--
-- By size, a node's load is the total bytes of its shards, by count their
-- number. Each step moves one shard from a fuller node to an emptier one
-- where it narrows their gap by at least its own size, the shard nearest
-- half the gap; a shard moves at most once; pinned shards (in a move,
-- frozen, excluded) count where they are but never move. Closed nodes
-- (closed, parallel to nodes: one being drained, one that accepts no
-- shards) receive none, and their shards leave first, largest first, each
-- to the emptiest open node; with drain_only the plan ends there
-- (drain_plan()). The planner is
-- C++, src/core/rebalance.cpp (rebalance.hpp says exactly how it chooses),
-- called through _plan_moves(); this checks the strategy and max_moves the
-- way rebalance_plan() and rebalance() do, then returns its plan.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_moves(strategy text, max_moves integer, nodes text[],
                                                    shards integer[], shard_nodes text[], shard_bytes bigint[],
                                                    pinned integer[] DEFAULT '{}', closed boolean[] DEFAULT NULL,
                                                    drain_only boolean DEFAULT false)
    RETURNS TABLE (step integer, shard integer, source text, target text, bytes bigint)
    LANGUAGE sql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT shardid_internal._require_rebalance_options(strategy, max_moves);
    SELECT p.step, p.shard, p.source, p.target, p.bytes
      FROM shardid_internal._plan_moves(strategy, max_moves, nodes, shards, shard_nodes, shard_bytes, pinned,
                                      closed, drain_only) AS p;
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_moves(text, integer, text[], integer[], text[], bigint[], integer[], boolean[], boolean) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_moves(text, integer, text[], integer[], text[], bigint[], integer[], boolean[], boolean) IS
    'Internal: the rebalance planner without I/O: the moves (step, shard, source, target, bytes) that even out the given nodes'' load by_size or by_count; shards in pinned count but never move; closed nodes receive none and are emptied first (only that with drain_only).';
