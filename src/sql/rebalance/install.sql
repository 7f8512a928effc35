-- shardid, area rebalance, on the router (router/): rebalancing and
-- draining, in the foreground and in background workers.
--
-- rebalance_plan() says which shards to move so that the nodes hold about
-- the same total shard size (by_size, read from the nodes over dblink by
-- shard_sizes()) or the same number of shards (by_count); the planner
-- itself, _rebalance_moves(), is pure (sizes in, moves out) so tests give
-- it sizes of their own; it is C++ (src/core/rebalance.cpp) behind
-- _plan_moves(). Draining a node before remove_node(): drain_plan() says
-- which moves. One driver makes the moves of both, _rebalance_job_run(),
-- one at a time with move_shard(), a job's row in shardid.rebalance_jobs
-- as its state, one lock (_rebalance_lock()): CALLed in the caller's
-- session by rebalance() and drain_node(), or in the background by a
-- dynamic background worker per job (rebalance_start(),
-- drain_node_start(); registered by the calling backend, no
-- shared_preload_libraries). One scheduler decides what starts
-- (_rebalance_job_step(), serial is one slot): a background job runs each
-- move in a worker of its own (_rebalance_move_run(), rows of
-- shardid.rebalance_job_moves), by default one per pair of disjoint
-- nodes at once, woken when one ends, a failed one retried, a cancelled
-- one rolled back; rebalance_resume() (and the opt-in launcher,
-- src/pg/launcher.cpp) resumes a job whose driver is gone. All of it is for administrators
-- (EXECUTE revoked from PUBLIC): it reads shardid.nodes and connects to
-- the nodes.

\ir router/_require_rebalance_options.sql
\ir router/_require_parallel_options.sql
\ir router/_plan_moves.sql
\ir router/_rebalance_moves.sql
\ir router/shard_sizes.sql
\ir router/_plan_placement.sql
\ir router/_plan.sql
\ir router/rebalance_plan.sql
\ir router/_require_move_done.sql
\ir router/_rebalance_lock.sql
\ir router/_rebalance_unlock.sql
\ir router/drain_plan.sql
\ir router/rebalance_jobs.sql
\ir router/rebalance_job_moves.sql
\ir router/_rebalance_launch.sql
\ir router/_rebalance_worker_alive.sql
\ir router/_rebalance_sleep.sql
\ir router/_rebalance_wake.sql
\ir router/_rebalance_job_ended.sql
\ir router/_rebalance_job_alive.sql
\ir router/_rebalance_options.sql
\ir router/_rebalance_job_create.sql
\ir router/_rebalance_job_begin.sql
\ir router/_rebalance_refuse_offline.sql
\ir router/_rebalance_job_end.sql
\ir router/_rebalance_job_failed.sql
\ir router/_rebalance_node_busy.sql
\ir router/_rebalance_move_start.sql
\ir router/_rebalance_move_begin.sql
\ir router/_rebalance_move_done.sql
\ir router/_rebalance_move_failed.sql
\ir router/_rebalance_move_run.sql
\ir router/_rebalance_job_step.sql
\ir router/_rebalance_job_run.sql
\ir router/rebalance.sql
\ir router/drain_node.sql
\ir router/_move_stalled.sql
\ir router/rebalance_start.sql
\ir router/drain_node_start.sql
\ir router/rebalance_status.sql
\ir router/rebalance_wait.sql
\ir router/rebalance_stop.sql
\ir router/rebalance_resume.sql
\ir router/_launcher_resume.sql
