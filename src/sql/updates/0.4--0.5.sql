-- shardid 0.4 -> 0.5: what CREATE OR REPLACE cannot do (new tables,
-- ALTER TABLE, dropped or changed views and functions). The build appends
-- every function, procedure and view of the install script (src/sql/shardid.sql)
-- (src/sql/include.awk), so the upgrade script build/shardid--0.4--0.5.sql
-- re-creates each of them from the same source as the install script;
-- test/tap/update.pl checks that updating from every release gives the
-- objects of a fresh install.

\echo Use "ALTER EXTENSION shardid UPDATE TO '0.5'" to load this file. \quit

-- The install script's schema check, so a 0.4 installed into a schema that
-- a non-superuser owns or may create in is not updated either.
\ir ../common/extension_schema.sql
