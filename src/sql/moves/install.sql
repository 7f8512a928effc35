-- shardid, area moves: a shard moved to another node while it takes
-- writes. node/ holds what a data node runs, router/ what the router runs.
--
-- CALL shardid.move_shard(shard, node) moves a logical shard to another
-- node while it takes writes; the router drives both nodes over dblink
-- (asked for when a move starts, not required by the extension). The state
-- is the row of shardid.shard_moves, committed per phase, so any
-- interruption resumes (CALL again) or rolls back (abort_move). One
-- session per shard: its row in shardid.session_locks on the router. The
-- nodes' side is shardid functions too (node/: the _move_* functions,
-- freeze_shard_tables, retire_shard), so every node needs this version. A
-- move freezes a shard on its node (a trigger on every table of the shard)
-- rather than on the router, so a move changes the cluster once, at
-- repoint_shard().
--
-- Who runs what: the router's session connects to the nodes as the node
-- connect strings say (a superuser; passwords from ~/.pgpass) with
-- search_path pinned to pg_catalog, pg_temp for the whole session
-- (_pinned_connstr), and runs only schema-qualified shardid functions
-- there. Every statement that writes, empties or reads a shard's rows runs
-- as the table's owner in a security-restricted operation
-- (_run_as_owner); the rows are copied by the target's subscription,
-- which applies them as the tables' owners (16+), or on 15 as a role made
-- for the move with DML rights only, or offline by _move_offline_store as
-- the owners: never as a superuser. shardid's own triggers are known by
-- their function, not their name.

\ir node/_release_lease.sql
\ir node/freeze_shard_tables.sql
\ir node/unfreeze_shard_tables.sql
\ir node/thaw_shard_tables.sql
\ir node/retired_schemas.sql
\ir node/retire_shard.sql
\ir node/_shard_definition.sql
\ir node/_template_ddl.sql
\ir node/_move_source_facts.sql
\ir node/_move_copy_indexes.sql
\ir node/_create_templates.sql
\ir node/_create_shard_copy.sql
\ir node/_move_freeze.sql
\ir node/_move_seal.sql
\ir node/_move_raise_generators.sql
\ir node/_move_row_counts.sql
\ir node/_move_offline_copies.sql
\ir node/_move_offline_load.sql
\ir node/_move_offline_store.sql
\ir node/_move_publish.sql
\ir node/_move_create_slot.sql
\ir node/_move_slot_status.sql
\ir node/_move_unpublish.sql
\ir node/_move_subscribe.sql
\ir node/_move_copy_progress.sql
\ir node/_move_unsubscribe.sql
\ir node/_move_registered.sql
\ir node/_move_drop_copy.sql
\ir node/_move_retire.sql
\ir router/move_progress.sql
\ir router/_definition_diff.sql
\ir router/_move_name.sql
\ir router/_move_pause.sql
\ir router/_move_disconnect.sql
\ir router/_move_lock.sql
\ir router/_move_unlock.sql
\ir router/_move_lock_tables.sql
\ir router/_move_check_launcher.sql
\ir router/_move_prepare.sql
\ir router/_move_schema.sql
\ir router/_move_compare.sql
\ir router/_move_compare_shard.sql
\ir router/move_options.sql
\ir router/_move_options.sql
\ir router/_move_copy.sql
\ir router/_move_cutover.sql
\ir router/_move_repoint.sql
\ir router/_move_finish.sql
\ir router/_move_rollback_step.sql
\ir router/_move_rollback_start.sql
\ir router/_move_rollback_steps.sql
\ir router/_move_rollback_wait.sql
\ir router/_move_rollback.sql
\ir router/_move_outcome.sql
\ir router/_move_run.sql
\ir router/_move_start.sql
\ir router/_move_failed.sql
\ir router/_move_step.sql
\ir router/_move_rolled_back.sql
\ir router/_move_raise.sql
\ir router/_move_report.sql
\ir router/_move_abort_start.sql
\ir router/_move_shard.sql
\ir router/move_shard.sql
\ir router/abort_move.sql
