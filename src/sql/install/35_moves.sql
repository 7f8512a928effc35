-- shardid install script, part 35: shard moves, as SQL on the router.
--
-- CALL shardid.move_shard(shard, node) moves a logical shard to another
-- node while it takes writes; the router drives both nodes over dblink
-- (asked for when a move starts, not required by the extension). The state
-- is the row of shardid.shard_moves, committed per phase, so any
-- interruption resumes (CALL again) or rolls back (abort_move). One
-- session per shard: its row in shardid.session_locks on the router. The
-- nodes' side is shardid functions too (the _move_* functions below,
-- freeze_shard_tables, retire_shard), so every node needs this version.
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
-- both sides
\ir ../functions/_raise.sql
\ir ../functions/_run_as_owner.sql
\ir ../functions/_acl_words.sql
\ir ../functions/_acl_items.sql
\ir ../functions/_apply_acl.sql
\ir ../functions/_shard_definition.sql
-- data nodes
\ir ../functions/_template_ddl.sql
\ir ../functions/_move_source_facts.sql
\ir ../functions/_move_copy_indexes.sql
\ir ../functions/_create_templates.sql
\ir ../functions/_create_shard_copy.sql
\ir ../functions/_move_freeze.sql
\ir ../functions/_move_seal.sql
\ir ../functions/_move_raise_generators.sql
\ir ../functions/_move_row_counts.sql
\ir ../functions/_move_offline_copies.sql
\ir ../functions/_move_offline_load.sql
\ir ../functions/_move_offline_store.sql
\ir ../functions/_move_publish.sql
\ir ../functions/_move_create_slot.sql
\ir ../functions/_move_slot_status.sql
\ir ../functions/_move_unpublish.sql
\ir ../functions/_move_subscribe.sql
\ir ../functions/_move_copy_progress.sql
\ir ../functions/_move_unsubscribe.sql
\ir ../functions/_move_registered.sql
\ir ../functions/_move_drop_copy.sql
\ir ../functions/_move_retire.sql
-- router
\ir ../views/move_progress.sql
\ir ../functions/_dblink_schema.sql
\ir ../functions/_node_close.sql
\ir ../functions/_pinned_connstr.sql
\ir ../functions/_node_connect.sql
\ir ../functions/_node_send.sql
\ir ../functions/_node_wait.sql
\ir ../functions/_node.sql
\ir ../functions/_node_alive.sql
\ir ../functions/_node_unreachable.sql
\ir ../functions/_definition_diff.sql
\ir ../functions/_move_name.sql
\ir ../functions/_move_pause.sql
\ir ../functions/_absorb_cancel.sql
\ir ../functions/_move_disconnect.sql
\ir ../functions/_backend_alive.sql
\ir ../functions/_session_lock.sql
\ir ../functions/_session_unlock.sql
\ir ../functions/_move_lock.sql
\ir ../functions/_move_unlock.sql
\ir ../functions/_move_lock_tables.sql
\ir ../functions/_move_check_launcher.sql
\ir ../functions/_move_prepare.sql
\ir ../functions/_move_schema.sql
\ir ../functions/_move_compare.sql
\ir ../functions/_move_compare_shard.sql
\ir ../functions/_move_copy.sql
\ir ../functions/_move_cutover.sql
\ir ../functions/_move_repoint.sql
\ir ../functions/_move_finish.sql
\ir ../functions/_move_rollback_step.sql
\ir ../functions/_move_rollback_start.sql
\ir ../functions/_move_rollback_steps.sql
\ir ../procedures/_move_rollback.sql
\ir ../functions/_move_outcome.sql
\ir ../types/_move_run.sql
\ir ../functions/_move_start.sql
\ir ../functions/_move_failed.sql
\ir ../functions/_move_step.sql
\ir ../functions/_move_failure.sql
\ir ../functions/_move_aborted.sql
\ir ../functions/_move_raise.sql
\ir ../functions/_move_report.sql
\ir ../functions/_move_abort_start.sql
\ir ../functions/_move_abort_end.sql
\ir ../procedures/move_shard.sql
\ir ../procedures/abort_move.sql
