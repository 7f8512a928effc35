-- shardid 0.3 -> 0.4: what CREATE OR REPLACE cannot do (new tables,
-- ALTER TABLE, dropped or changed views and functions). The build appends
-- every function, procedure and view of the install script (src/sql/shardid.sql)
-- (src/sql/include.awk), so the upgrade script build/shardid--0.3--0.4.sql
-- re-creates each of them from the same source as the install script;
-- test/tap/update.pl checks that updating from every release gives the
-- objects of a fresh install.

\echo Use "ALTER EXTENSION shardid UPDATE TO '0.4'" to load this file. \quit

-- The install script's schema check, so a 0.3 installed into a schema that
-- a non-superuser owns or may create in is not updated either.
\ir ../common/extension_schema.sql

-- Moves: the three reports after a rollback are one function,
-- _move_rolled_back(s, after, to_node).
DROP FUNCTION shardid_internal._move_abort_end(shardid_internal._move_run);
DROP FUNCTION shardid_internal._move_aborted(shardid_internal._move_run, text);
DROP FUNCTION shardid_internal._move_failure(shardid_internal._move_run);

-- check_cluster(): one function per kind (operations/router/_check_*.sql);
-- _check_unsafe_name() lists what _node_facts_unsafe() did.
DROP FUNCTION shardid_internal._node_facts_unsafe(jsonb);

-- drop_retired_copies(): _drop_retired_copy_on() drops or keeps one copy
-- and counts it (it took _drop_retired_copy_counted()'s part).
DROP FUNCTION shardid_internal._drop_retired_copy_counted(bigint[], text, name, boolean, text);
DROP FUNCTION shardid_internal._drop_retired_copy_on(text, name);

-- apply_ddl(): batches bounded by time (batch_time), CONCURRENTLY on several
-- connections at once (connections); its internal functions renamed by what
-- they do or folded into their one caller. Dropped here, re-created below.
DROP PROCEDURE shardid.apply_ddl(text, text, integer, text);
DROP PROCEDURE shardid_internal._apply_ddl_here(text, text, integer, text, text);
DROP PROCEDURE shardid_internal._apply_ddl_concurrently(shardid.ddl_changes, integer, integer, text, integer[]);
DROP PROCEDURE shardid_internal._apply_ddl_router(text, text, integer);
DROP FUNCTION shardid_internal._apply_ddl_batch(bigint, integer);
DROP FUNCTION shardid_internal._apply_ddl_next_batch(shardid.ddl_changes, integer, integer, integer);
DROP FUNCTION shardid_internal._apply_ddl_first_batch(shardid.ddl_changes, integer, integer, integer);
DROP FUNCTION shardid_internal._apply_ddl_record(shardid.ddl_changes, integer, integer, integer);
DROP FUNCTION shardid_internal._apply_ddl_announce(shardid.ddl_changes, integer, integer, integer);
DROP FUNCTION shardid_internal._apply_ddl_claim(bigint);
DROP FUNCTION shardid_internal._apply_ddl_done(bigint, text);
DROP FUNCTION shardid_internal._apply_ddl_finish(bigint);
DROP FUNCTION shardid_internal._apply_ddl_finished(shardid.ddl_changes, integer, integer, integer);
DROP FUNCTION shardid_internal._apply_ddl_node(text, bigint, text, integer);
DROP FUNCTION shardid_internal._apply_ddl_node_done(text, bigint, text);
DROP FUNCTION shardid_internal._apply_ddl_on_node(text, shardid.ddl_changes, text, integer);
