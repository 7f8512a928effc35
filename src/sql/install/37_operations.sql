-- shardid install script, part 37: operating the cluster from the router.
--
-- check_cluster() reads every node once over dblink (_node_facts() there)
-- and reports what is wrong, each problem with the command that fixes it;
-- add_node() and place_shards() refuse the cheap cases of it at once
-- (_check_node()). All of it is for administrators (EXECUTE revoked from
-- PUBLIC): it reads shardid.nodes and connects to the nodes.
\ir ../functions/_template_definition.sql
\ir ../functions/_copy_drift.sql
\ir ../functions/_retired_copy_check.sql
\ir ../functions/_retired_here.sql
\ir ../functions/_node_facts.sql
\ir ../functions/_unsafe_text.sql
\ir ../functions/_node_facts_unsafe.sql
\ir ../functions/_node_facts_safe.sql
\ir ../functions/_ddl_finish_by_id.sql
\ir ../functions/_check_node.sql
-- The retired copies moves keep on their sources (move_shard() without
-- drop_old): listed by the view retired_copies, dropped by
-- drop_retired_copies().
\ir ../functions/_retired_copies.sql
\ir ../views/retired_copies.sql
\ir ../functions/_drop_retired_copy.sql
\ir ../functions/_drop_retired_copy_on.sql
\ir ../functions/_retired_copies_due.sql
\ir ../functions/_drop_retired_copy_counted.sql
\ir ../procedures/drop_retired_copies.sql
-- Draining a node before remove_node(): drain_plan() says which moves,
-- drain_node() makes them, one at a time with rebalance()'s lock.
\ir ../functions/_rebalance_lock.sql
\ir ../functions/_rebalance_unlock.sql
\ir ../functions/drain_plan.sql
\ir ../functions/_drain_start.sql
\ir ../functions/_drain_finish.sql
\ir ../functions/_drain_next.sql
\ir ../procedures/drain_node.sql
-- Background rebalances and drains: a dynamic background worker per job,
-- registered by the calling backend (no shared_preload_libraries), its
-- state in shardid.rebalance_jobs.
\ir ../tables/rebalance_jobs.sql
\ir ../functions/_rebalance_launch.sql
\ir ../functions/_rebalance_job_alive.sql
\ir ../functions/_rebalance_job_create.sql
\ir ../functions/_rebalance_job_begin.sql
\ir ../functions/_rebalance_job_next.sql
\ir ../functions/_rebalance_job_moved.sql
\ir ../functions/_rebalance_job_end.sql
\ir ../functions/_rebalance_job_failed.sql
\ir ../procedures/_rebalance_job_run.sql
-- check_cluster(), last: it reads the moves and the jobs too.
\ir ../functions/_move_stalled.sql
\ir ../functions/check_cluster.sql
\ir ../functions/rebalance_start.sql
\ir ../functions/drain_node_start.sql
\ir ../functions/rebalance_status.sql
\ir ../functions/rebalance_wait.sql
\ir ../functions/rebalance_stop.sql
