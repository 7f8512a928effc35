-- The rebalance planner itself, in C++: src/core/rebalance.hpp says how it
-- chooses, src/pg/rebalance.cpp reads the arrays and raises its refusals.
-- _rebalance_moves() checks the strategy and max_moves, then returns what
-- this returns. closed (parallel to nodes) marks the nodes that take no
-- shard and whose shards all leave; drain_only plans only those moves
-- (drain_plan()).
CREATE OR REPLACE FUNCTION shardid_internal._plan_moves(strategy text, max_moves integer, nodes text[],
                                               shards integer[], shard_nodes text[], shard_bytes bigint[],
                                               pinned integer[], closed boolean[], drain_only boolean)
    RETURNS TABLE (step integer, shard integer, source text, target text, bytes bigint)
    LANGUAGE c IMMUTABLE AS 'MODULE_PATHNAME', 'shardid_plan_moves';

REVOKE ALL ON FUNCTION shardid_internal._plan_moves(text, integer, text[], integer[], text[], bigint[], integer[], boolean[], boolean) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._plan_moves(text, integer, text[], integer[], text[], bigint[], integer[], boolean[], boolean) IS
    'Internal: the rebalance and drain planner of _rebalance_moves(), in C++, after _rebalance_moves() has checked the strategy and max_moves.';
