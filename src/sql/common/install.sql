-- shardid's common floor: what several areas use, installed first, calling
-- into no area. Every object is schema-qualified so a hostile search_path
-- cannot hijack it.
--
-- Both sides: the install-time schema check and shardid_internal; the one
-- fence for a table owner's code (_run_as_owner: a security-restricted
-- operation as the owner, never SET ROLE); errors (_raise); procedures'
-- COMMIT checks and batch progress (_require_commit, _commit_allowed,
-- _require_batch_size, _batch_progress); privileges (_acl_*, _apply_acl,
-- _grantee; _privilege_steps and _align_privileges: shards follow their
-- templates' privileges);
-- the registry of logical shards and sharded tables (shard_registry,
-- sharded_tables: extension configuration tables, so pg_dump carries
-- them); the checks of a sharded table's template; the parser of an
-- apply_ddl() command (_ddl_command, _ddl_template).
--
-- router/: the router's ledgers (nodes, shard_placement, shard_moves,
-- session_locks) and its connections to the nodes over dblink (_node*,
-- _pinned_connstr: search_path pinned to pg_catalog, pg_temp for the whole
-- session), and the locks held across commits (_session_lock).

\echo Use "CREATE EXTENSION shardid" to load this file. \quit

\ir extension_schema.sql
\ir shardid_internal.sql
\ir _fit_name.sql
\ir _next_id_defaults.sql
\ir shard_registry.sql
\ir sharded_tables.sql
\ir _commit_allowed.sql
\ir _require_commit.sql
\ir _require_batch_size.sql
\ir _batch_progress.sql
\ir _require_template.sql
\ir _require_templates.sql
\ir _connstr_options.sql
\ir _connstr_secret.sql
\ir router/nodes.sql
\ir router/shard_placement.sql
\ir router/shard_moves.sql
\ir router/session_locks.sql
\ir _for_tables.sql
\ir _raise.sql
\ir _run_as_owner.sql
\ir _index_statement.sql
\ir _acl_words.sql
\ir _acl_items.sql
\ir _apply_acl.sql
\ir _grantee.sql
\ir _privilege_steps.sql
\ir _align_privileges.sql
\ir router/_dblink_schema.sql
\ir router/_node_close.sql
\ir router/_pinned_connstr.sql
\ir _one_line.sql
\ir router/_node_connect.sql
\ir router/_node_send.sql
\ir router/_node_session.sql
\ir router/_node_wait.sql
\ir router/_node_outcome.sql
\ir router/_node.sql
\ir router/_node_alive.sql
\ir router/_node_unreachable.sql
\ir router/_absorb_cancel.sql
\ir router/_backend_alive.sql
\ir router/_session_lock.sql
\ir router/_session_unlock.sql
\ir _unsafe_text.sql
\ir _ddl_command.sql
\ir _ddl_template.sql

GRANT USAGE ON SCHEMA shardid TO PUBLIC;
