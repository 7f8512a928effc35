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
