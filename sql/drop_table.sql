-- A registered template cannot be dropped (event trigger
-- shardid_template_drop, naming shardid.drop_table()); drop_table() drops a
-- sharded table in every shard and unregisters it, with the caller's
-- rights. Unrelated drops pass; DROP EXTENSION shardid still works and
-- takes the event trigger with it. In a database of its own.
SET client_min_messages = warning;
\set regress_db :DBNAME
DROP DATABASE IF EXISTS regress_drop_table;
DROP ROLE IF EXISTS regress_dt_admin, regress_dt_other;
CREATE DATABASE regress_drop_table;
CREATE ROLE regress_dt_admin;
CREATE ROLE regress_dt_other;
\c regress_drop_table
SET client_min_messages = warning;
\set SHOW_CONTEXT errors
CREATE EXTENSION shardid;
SELECT evtname, evtevent, evtenabled FROM pg_event_trigger ORDER BY 1;
SELECT shardid.create_shards(0, 2);
CREATE TABLE public.photos (id bigint PRIMARY KEY, user_id bigint NOT NULL, caption text);
SELECT shardid.create_table('public.photos');

-- The template is not where rows go: an INSERT into it has no ID.
INSERT INTO public.photos (user_id) VALUES (1);
\echo :LAST_ERROR_SQLSTATE

-- Dropping the template, however it is dropped, is refused, with no
-- CONTEXT line of shardid's helpers (SHOW_CONTEXT errors is on).
DROP TABLE public.photos;
\echo :LAST_ERROR_SQLSTATE
DROP TABLE public.photos, shard_0000.photos;
\echo :LAST_ERROR_SQLSTATE
DROP SCHEMA public CASCADE;
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS copies FROM pg_class WHERE relname = 'photos';
\set SHOW_CONTEXT never

-- Unrelated drops pass: another table, a column of the template, a copy.
CREATE TABLE public.unrelated (id bigint);
DROP TABLE public.unrelated;
ALTER TABLE public.photos DROP COLUMN caption;
CREATE TABLE public.scratch (id bigint PRIMARY KEY);
CREATE TABLE shard_0000.scratch (id bigint);
DROP TABLE shard_0000.scratch, public.scratch;
SELECT table_name FROM shardid.sharded_tables ORDER BY 1;

-- drop_table(): arguments, an unregistered table.
SELECT shardid.drop_table(NULL);
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE public.loose (id bigint);
SELECT shardid.drop_table('public.loose');
\echo :LAST_ERROR_SQLSTATE

-- Privileges: a role that may not write the registry is refused; one that
-- may, but does not own the template, too; and DROP TABLE refuses the
-- copies a role does not own: nothing is dropped.
GRANT CREATE ON DATABASE regress_drop_table TO regress_dt_admin;
GRANT CREATE ON SCHEMA public TO regress_dt_admin;
SET ROLE regress_dt_other;
SELECT shardid.drop_table('public.photos');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
GRANT INSERT, UPDATE, DELETE ON shardid.shard_registry, shardid.sharded_tables TO regress_dt_admin, regress_dt_other;
SET ROLE regress_dt_other;
SELECT shardid.drop_table('public.photos');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SET ROLE regress_dt_admin;
CREATE TABLE public.tags (id bigint PRIMARY KEY, tag text);
RESET ROLE;
SELECT shardid.create_table('public.tags');     -- copies owned by the superuser
GRANT USAGE ON SCHEMA shard_0000, shard_0001, shard_0002 TO regress_dt_admin;
SET ROLE regress_dt_admin;
SELECT shardid.drop_table('public.tags');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT count(*) AS tags_copies FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relname = 'tags' AND n.nspname LIKE 'shard\_%';
SELECT table_name FROM shardid.sharded_tables ORDER BY 1;

-- The owner of everything drops it: every copy, the registration; the
-- template stays, and can be dropped now. Shards created later lack it.
DROP TABLE shard_0002.photos;                   -- a shard that lost its copy is skipped
SELECT shardid.drop_table('public.photos') AS dropped;
SELECT table_name FROM shardid.sharded_tables ORDER BY 1;
SELECT count(*) AS photos_copies FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relname = 'photos' AND n.nspname LIKE 'shard\_%';
DROP TABLE public.photos;
SELECT shardid.create_shard(3);
SELECT relname FROM pg_class WHERE relnamespace = 'shard_0003'::regnamespace AND relkind = 'r' ORDER BY 1;

-- DROP EXTENSION works with a template still registered (public.tags), and
-- takes the event trigger with it: the template can be dropped afterwards.
DO $$
DECLARE s name;
BEGIN
    FOR s IN SELECT schema_name FROM shardid.shard_registry LOOP
        EXECUTE format('DROP SCHEMA %I CASCADE', s);
    END LOOP;
END $$;
DROP EXTENSION shardid;
SELECT count(*) AS event_triggers FROM pg_event_trigger;
DROP TABLE public.tags;
CREATE EXTENSION shardid;
SELECT evtname FROM pg_event_trigger ORDER BY 1;
DROP EXTENSION shardid;

\c :regress_db
DROP DATABASE regress_drop_table;
DROP ROLE regress_dt_admin, regress_dt_other;
