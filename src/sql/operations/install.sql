-- shardid, area operations: operating the cluster; router/ on the router,
-- the rest what a node answers it. Last: it reads every other area.
--
-- check_cluster() reads every node once over dblink (_node_facts() there)
-- and reports what is wrong, each problem with the command that fixes it.
-- The retired copies moves keep on their sources (move_shard() without
-- drop_old): listed by the view retired_copies, dropped by
-- drop_retired_copies(). All of it is for administrators (EXECUTE revoked
-- from PUBLIC): it reads shardid.nodes and connects to the nodes.

\ir _template_definition.sql
\ir _copy_drift.sql
\ir _retired_copy_check.sql
\ir _retired_here.sql
\ir _node_facts.sql
\ir router/_node_facts_unsafe.sql
\ir router/_node_facts_safe.sql
\ir router/_ddl_finish_by_id.sql
\ir router/_retired_copies.sql
\ir router/retired_copies.sql
\ir _drop_retired_copy.sql
\ir router/_drop_retired_copy_on.sql
\ir router/_retired_copies_due.sql
\ir router/_drop_retired_copy_counted.sql
\ir router/drop_retired_copies.sql
\ir router/check_cluster.sql
