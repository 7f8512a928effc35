-- shardid, area operations: operating the cluster; router/ on the router,
-- the rest what a node answers it. Last: it reads every other area.
--
-- check_cluster() reads every node once over dblink (_node_facts() there)
-- and reports what is wrong, each problem with the command that fixes it:
-- one function per kind (router/_check_<kind>.sql), the kinds listed once
-- (router/check_cluster_kinds.sql). A new kind: its function, its row in
-- check_cluster_kinds, its line here, its rows in docs/reference.md and
-- docs/monitoring.md (test/lint/run kinds checks them).
-- The retired copies moves keep on their sources (move_shard() without
-- drop_old): listed by the view retired_copies, dropped by
-- drop_retired_copies(). All of it is for administrators (EXECUTE revoked
-- from PUBLIC): it reads shardid.nodes and connects to the nodes.

\ir _template_definition.sql
\ir _copy_drift.sql
\ir _align_copy_owner_check.sql
\ir align_copy.sql
\ir align_privileges.sql
-- fixes that never block writes (issue 46): indexes built CONCURRENTLY
\ir _copy_index.sql
\ir _copy_index_duplicates.sql
\ir copy_index_duplicates.sql
\ir _build_copy_index_start.sql
\ir _build_copy_index_wait.sql
\ir build_copy_index.sql
\ir drop_move_leftover.sql
\ir _launcher_standby.sql
\ir _retired_copy_check.sql
\ir _retired_here.sql
\ir _node_facts.sql
\ir router/_node_facts_safe.sql
\ir router/_ddl_finish_by_id.sql
\ir router/_retired_copies.sql
\ir router/retired_copies.sql
\ir _drop_retired_copy.sql
\ir router/_drop_retired_copy_on.sql
\ir router/_retired_copies_due.sql
\ir router/drop_retired_copies.sql
\ir router/_launcher_run.sql
\ir router/_live_shards.sql
\ir router/check_cluster_kinds.sql
\ir router/_check_node_unreachable.sql
\ir router/_check_node_unreadable.sql
\ir router/_check_extension_missing.sql
\ir router/_check_extension_version.sql
\ir router/_check_unsafe_name.sql
\ir router/_check_layout_differs.sql
\ir router/_check_shard_live_twice.sql
\ir router/_check_shard_live_nowhere.sql
\ir router/_check_placement_wrong_node.sql
\ir router/_check_shard_not_placed.sql
\ir router/_check_template_differs.sql
\ir router/_check_move_leftover.sql
\ir router/_check_move_stalled.sql
\ir router/_check_job_stalled.sql
\ir router/_check_proxy_out_of_step.sql
\ir router/_check_ddl_unfinished.sql
\ir router/_check_copy_differs.sql
\ir router/_check_privileges_differ.sql
\ir router/check_cluster.sql
