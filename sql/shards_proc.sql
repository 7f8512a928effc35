-- create_shards_proc() and create_table_proc(): batches that commit, what
-- they skip on a re-run, and their refusals (a transaction block, bad
-- arguments, missing privileges), each before anything is created. Runs in
-- its own database. The 8192-shard run on a default-configured server, with
-- an interruption, is test/tap/shards_8192.pl.
SET client_min_messages = warning;
\set regress_db :DBNAME
DROP DATABASE IF EXISTS regress_shards_proc;
DROP ROLE IF EXISTS regress_proc_admin;
CREATE DATABASE regress_shards_proc;
CREATE ROLE regress_proc_admin;
\c regress_shards_proc
SET client_min_messages = warning;
\set SHOW_CONTEXT never
CREATE EXTENSION shardid;
CREATE TABLE public.photos (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, caption text);
CREATE TABLE public.tags (tag_id bigint NOT NULL, photo_id bigint NOT NULL, tag text, UNIQUE (photo_id, tag));
CREATE INDEX ON public.tags (tag);

-- A procedure that commits cannot run inside a transaction block, a
-- function, an EXCEPTION block or a multi-statement query string.
BEGIN;
CALL shardid.create_shards_proc(0, 3);
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
CALL shardid.create_table_proc('public.photos');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
CREATE FUNCTION public.shards_in_a_function() RETURNS void LANGUAGE plpgsql
    AS $$ BEGIN CALL shardid.create_shards_proc(0, 3); END $$;
SELECT public.shards_in_a_function();
\echo :LAST_ERROR_SQLSTATE
DO $$ BEGIN CALL shardid.create_shards_proc(0, 3); EXCEPTION WHEN division_by_zero THEN NULL; END $$;
\echo :LAST_ERROR_SQLSTATE
SELECT 1 AS first_statement \; CALL shardid.create_table_proc('public.photos');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS shards FROM shardid.shard_registry;
SELECT count(*) AS sharded_tables FROM shardid.sharded_tables;

-- Arguments.
CALL shardid.create_shards_proc(NULL, 3);
\echo :LAST_ERROR_SQLSTATE
CALL shardid.create_shards_proc(0, 3, NULL);
\echo :LAST_ERROR_SQLSTATE
CALL shardid.create_shards_proc(0, 3, 0);
\echo :LAST_ERROR_SQLSTATE
CALL shardid.create_shards_proc(5, 3);
\echo :LAST_ERROR_SQLSTATE
CALL shardid.create_shards_proc(8190, 8192);
\echo :LAST_ERROR_SQLSTATE
CALL shardid.create_table_proc(NULL);
\echo :LAST_ERROR_SQLSTATE
CALL shardid.create_table_proc('public.photos', batch_size => -1);
\echo :LAST_ERROR_SQLSTATE
CALL shardid.create_table_proc('public.photos', 'caption');
\echo :LAST_ERROR_SQLSTATE
CALL shardid.create_table_proc('public.photos', 'nope');
\echo :LAST_ERROR_SQLSTATE
CREATE VIEW public.photos_view AS SELECT * FROM public.photos;
CALL shardid.create_table_proc('public.photos_view');
\echo :LAST_ERROR_SQLSTATE
-- A schema of the range that is not a registered shard: nothing created.
CREATE SCHEMA shard_0003;
CALL shardid.create_shards_proc(0, 4);
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS shards FROM shardid.shard_registry;
DROP SCHEMA shard_0003;

-- Privileges: the same as create_shards() and create_table().
SET ROLE regress_proc_admin;
CALL shardid.create_shards_proc(0, 3);
\echo :LAST_ERROR_SQLSTATE
CALL shardid.create_table_proc('public.photos');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
GRANT CREATE ON DATABASE regress_shards_proc TO regress_proc_admin;
SET ROLE regress_proc_admin;
CALL shardid.create_shards_proc(0, 3);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT count(*) AS shards FROM shardid.shard_registry;

-- Batches of 2, each committed: the NOTICEs count them. application_name
-- shows the progress during a batch and is restored after the CALL.
SELECT current_setting('application_name') AS app \gset
SET client_min_messages = notice;
CALL shardid.create_shards_proc(0, 4, 2);
-- A re-run skips the shards that exist: as after an interruption.
CALL shardid.create_shards_proc(3, 7, 2);
CALL shardid.create_shards_proc(0, 7);
SET client_min_messages = warning;
SELECT current_setting('application_name') = :'app' AS application_name_restored;
SELECT shard, schema_name, sequence_name FROM shardid.shard_registry ORDER BY shard;
-- From a DO block (not atomic), the procedure may commit.
DO $$ BEGIN CALL shardid.create_shards_proc(8, 9, 1); END $$;
SELECT count(*) AS shards, max(shard) FROM shardid.shard_registry;

-- create_table_proc: the identity column of the template is replaced by the
-- shard's generator, as create_table() does.
SET client_min_messages = notice;
CALL shardid.create_table_proc('public.photos', batch_size => 4);
SET client_min_messages = warning;
SELECT c.relnamespace::regnamespace AS schema, pg_get_expr(d.adbin, d.adrelid) AS id_default, a.attidentity = '' AS no_identity
  FROM pg_class c
  JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'id'
  JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
 WHERE c.relname = 'photos' AND c.relnamespace <> 'public'::regnamespace
 ORDER BY 1;
INSERT INTO shard_0007.photos (caption) VALUES ('seven') RETURNING shardid.id_shard(id) AS shard;
-- An interrupted run leaves shards without the table (here: dropped); a
-- re-run creates only those and keeps the others (and their rows).
DROP TABLE shard_0002.photos, shard_0009.photos;
SET client_min_messages = notice;
CALL shardid.create_table_proc('public.photos', 'id', 1);
CALL shardid.create_table_proc('public.photos');
SET client_min_messages = warning;
SELECT count(*) AS photos_tables FROM pg_class WHERE relname = 'photos' AND relnamespace <> 'public'::regnamespace;
SELECT caption FROM shard_0007.photos;
-- A template whose name some shard already uses: refused, nothing created.
CREATE TABLE shard_0004.tags (x int);
CALL shardid.create_table_proc('public.tags', 'tag_id');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS tags_registered FROM shardid.sharded_tables WHERE table_name = 'tags';
DROP TABLE shard_0004.tags;
-- Indexes and constraints come along; shards created later get every table.
CALL shardid.create_table_proc('public.tags', 'tag_id', 3);
CALL shardid.create_shards_proc(10, 11);
SELECT n.nspname AS schema,
       (SELECT string_agg(relname, ', ' ORDER BY relname) FROM pg_class WHERE relnamespace = n.oid AND relkind IN ('r', 'i')) AS relations
  FROM pg_namespace n WHERE n.nspname IN ('shard_0000', 'shard_0011') ORDER BY 1;
SELECT pg_get_expr(d.adbin, d.adrelid) AS tag_id_default
  FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
 WHERE d.adrelid = 'shard_0011.tags'::regclass AND a.attname = 'tag_id';
-- A re-run must name the same template and id column; create_table() of a
-- registered table is refused.
CALL shardid.create_table_proc('public.tags', 'photo_id');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.create_table('public.tags', 'tag_id');
\echo :LAST_ERROR_SQLSTATE

-- A shard admin with the grants of create_table() may call them; it cannot
-- add a table to shards another role owns.
GRANT INSERT, UPDATE, DELETE ON shardid.shard_registry, shardid.sharded_tables TO regress_proc_admin;
CREATE TABLE public.likes (id bigint PRIMARY KEY);
GRANT SELECT ON public.likes, public.photos, public.tags TO regress_proc_admin;
SET ROLE regress_proc_admin;
CALL shardid.create_shards_proc(20, 21);
CALL shardid.create_table_proc('public.likes');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT n.nspname AS schema, pg_get_userbyid(n.nspowner) AS owner,
       (SELECT count(*) FROM pg_class WHERE relnamespace = n.oid AND relkind = 'r') AS tables
  FROM pg_namespace n WHERE n.nspname IN ('shard_0011', 'shard_0020', 'shard_0021') ORDER BY 1;
SELECT count(*) AS likes_registered FROM shardid.sharded_tables WHERE table_name = 'likes';

\c :regress_db
DROP DATABASE regress_shards_proc;
DROP ROLE regress_proc_admin;
