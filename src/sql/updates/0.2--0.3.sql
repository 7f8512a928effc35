-- shardid 0.2 -> 0.3: what CREATE OR REPLACE cannot do. The build appends
-- every function, procedure and view of src/sql/install/*.sql
-- (src/sql/include.awk), so the upgrade script build/shardid--0.2--0.3.sql
-- re-creates each of them from the same source as the install script; test/e2e/update.sh checks that both
-- give the same objects (from 0.1 through 0.2, and from 0.2).

\echo Use "ALTER EXTENSION shardid UPDATE TO '0.3'" to load this file. \quit

-- The install script's schema check, so a 0.2 installed into a schema that
-- a non-superuser owns or may create in is not updated either.
\ir ../checks/extension_schema.sql

-- apply_ddl()'s ledger (part 38)
\ir ../tables/ddl_changes.sql
\ir ../tables/ddl_applied.sql
