-- The rebalance planner itself, in C++: src/core/rebalance.hpp says how it
-- chooses, src/pg/rebalance.cpp reads the arrays and raises its refusals.
-- _rebalance_moves() checks the strategy and max_moves, then returns what
-- this returns.
CREATE OR REPLACE FUNCTION shardid_internal._plan_moves(strategy text, max_moves integer, nodes text[],
                                               shards integer[], shard_nodes text[], shard_bytes bigint[],
                                               pinned integer[])
    RETURNS TABLE (step integer, shard integer, source text, target text, bytes bigint)
    LANGUAGE c IMMUTABLE AS 'MODULE_PATHNAME', 'shardid_plan_moves';

REVOKE ALL ON FUNCTION shardid_internal._plan_moves(text, integer, text[], integer[], text[], bigint[], integer[]) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._plan_moves(text, integer, text[], integer[], text[], bigint[], integer[]) IS
    'Internal: the rebalance planner of _rebalance_moves(), in C++, after _rebalance_moves() has checked the strategy and max_moves.';
