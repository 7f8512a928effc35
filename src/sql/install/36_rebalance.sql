-- shardid install script, part 36: rebalancing, on the router.
--
-- rebalance_plan() says which shards to move so that the nodes hold about
-- the same total shard size (by_size, read from the nodes over dblink by
-- shard_sizes()) or the same number of shards (by_count); the planner
-- itself, _rebalance_moves(), is pure (sizes in, moves out) so tests give
-- it sizes of their own; it is C++ (src/core/rebalance.cpp) behind
-- _plan_moves(). CALL rebalance() makes those moves one at a time
-- with move_shard() (part 35). All of it is for administrators (EXECUTE
-- revoked from PUBLIC): it reads shardid.nodes and connects to the nodes.
\ir ../functions/_check_rebalance_options.sql
\ir ../functions/_plan_moves.sql
\ir ../functions/_rebalance_moves.sql
\ir ../functions/shard_sizes.sql
\ir ../functions/rebalance_plan.sql
\ir ../functions/_check_move_done.sql
\ir ../functions/_rebalance_begin.sql
\ir ../functions/_rebalance_next.sql
\ir ../functions/_rebalance_moved.sql
\ir ../functions/_rebalance_end.sql
\ir ../procedures/rebalance.sql
