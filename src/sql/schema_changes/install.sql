-- shardid, area schema changes: apply_ddl() over a sharded table's
-- template and every copy.
--
-- CALL shardid.apply_ddl(template, command) runs one DDL statement, %s
-- standing for each table's schema-qualified name (Citus's
-- run_command_on_shards convention), on a sharded table's template first
-- (new shards are made from it) and then on its copy in every shard; on a
-- router, on every node, one after another in name order (router/). Each
-- statement runs as the template's owner in a security-restricted
-- operation (_run_as_owner: the owner's code it reaches cannot change the
-- role back), never as the caller's superuser; a copy another role owns is
-- refused (_apply_ddl_owners). Only a statement PostgreSQL's parser reads
-- as one change of that one table (_ddl_command) is run. The ledger
-- (ddl_changes, ddl_applied) is written in the same transactions as the
-- tables, so an interrupted apply_ddl() is finished by CALLing it again
-- with the same command, and a different command for that template waits
-- until then. A batch commits after batch_size tables or once it has held
-- its first table's lock for batch_time. Statements that cannot run in a
-- transaction block (CREATE and DROP INDEX CONCURRENTLY) run over dblink,
-- on up to `connections` tables of a node at once: on a node to the node
-- itself, from the router to each node (the options are one record,
-- shardid.ddl_options, sent whole); PostgreSQL runs the
-- owner's index expressions as the owner. It comes before the shards
-- area, which records a new copy in the ledger.
--
-- shardid.run_on_shards(template, command) runs what changes no definition
-- the copies share (GRANT, REVOKE, COMMENT, reads) on every copy, with the
-- same %s and the same fence, as each copy's owner, and returns a row per
-- copy; batches commit on dblink connections (to this database itself on
-- a node, to each node from a router), so it needs no ledger and is a
-- function.

\ir ddl_changes.sql
\ir ddl_applied.sql
\ir ddl_progress.sql
\ir _apply_ddl_check.sql
\ir ddl_options.sql
\ir _ddl_options.sql
\ir _apply_ddl_owner.sql
\ir _apply_ddl_owners.sql
\ir _apply_ddl_grants.sql
\ir _apply_ddl_start.sql
\ir _apply_ddl_record.sql
\ir _apply_ddl_rerun.sql
\ir _apply_ddl_open.sql
\ir _apply_ddl_skip.sql
\ir _apply_ddl_targets.sql
\ir _apply_ddl_raise.sql
\ir _apply_ddl_batch.sql
\ir _apply_ddl_claim.sql
\ir _apply_ddl_mark_done.sql
\ir _apply_ddl_close_change.sql
\ir _apply_ddl_unfinished.sql
\ir _apply_ddl_connect.sql
\ir _apply_ddl_send.sql
\ir _apply_ddl_busy.sql
\ir _apply_ddl_failed.sql
\ir _apply_ddl_same_indexes.sql
\ir _apply_ddl_result.sql
\ir _apply_ddl_claim_next.sql
\ir _apply_ddl_collect.sql
\ir router/_apply_ddl_on_nodes.sql
\ir router/_apply_ddl_origin.sql
\ir router/_router_template.sql
\ir router/_apply_ddl_router_start.sql
\ir router/_apply_ddl_next_node.sql
\ir router/_apply_ddl_node_start.sql
\ir router/_apply_ddl_on_node.sql
\ir router/_apply_ddl_router_failed.sql
\ir _apply_ddl_first_batch.sql
\ir _apply_ddl_notice_end.sql
\ir router/_apply_ddl_router.sql
\ir _apply_ddl_concurrently.sql
\ir _apply_ddl_here.sql
\ir apply_ddl.sql
-- abandon_ddl(template, undo => true): the way back (issue 46)
\ir _ddl_inverse.sql
\ir _undo_ddl_inverse.sql
\ir _undo_ddl_original.sql
\ir _undo_ddl_previous.sql
\ir _undo_ddl_prepare.sql
\ir _undo_ddl_plan.sql
\ir _undo_ddl_start.sql
\ir _undo_ddl_nodes.sql
\ir _undo_ddl.sql
\ir _abandon_ddl_undo.sql
\ir abandon_ddl.sql
\ir _finish_ddl_change.sql
\ir finish_ddl.sql
\ir _run_on_shards_command.sql
\ir _run_on_shards_check.sql
\ir _run_on_shards_start.sql
\ir _run_on_shards_batch.sql
\ir _run_on_shards_send.sql
\ir _run_on_shards_here.sql
\ir router/_run_on_shards_router.sql
\ir run_on_shards.sql
\ir _grant_shards_command.sql
\ir grant_shards.sql
\ir revoke_shards.sql
