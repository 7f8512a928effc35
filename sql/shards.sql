-- Logical shards: create_shard(s), the registry, shard_schema, create_table,
-- attach/detach, and their errors. Runs in its own database so that its
-- layout (the default) does not depend on other tests.
SET client_min_messages = warning;
\set regress_db :DBNAME
DROP DATABASE IF EXISTS regress_shards;
CREATE DATABASE regress_shards;
\c regress_shards
SET client_min_messages = warning;
\set SHOW_CONTEXT never
CREATE EXTENSION shardid;

-- Shards are schemas named shard_NNNN with a bigint generator sequence.
SELECT shardid.create_shards(0, 2);
SELECT shardid.create_shard(8191);
SELECT shard, schema, sequence, last_id, last_time, drift FROM shardid.shards ORDER BY shard;
SELECT shardid.shard_schema(2), shardid.shard_schema(8191), shardid.shard_schema(NULL);
SELECT schemaname, sequencename, data_type, max_value, last_value
  FROM pg_sequences WHERE schemaname LIKE 'shard\_%' ORDER BY 1;
SELECT * FROM shardid.shard_registry ORDER BY shard;

-- Errors, each before anything is created.
SELECT shardid.create_shard(8192);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.create_shard(-1);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.create_shard(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.create_shard(1);
\echo :LAST_ERROR_SQLSTATE
CREATE SCHEMA shard_0004;
SELECT shardid.create_shard(4);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.create_shards(3, 5);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.create_shards(2, 3);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.create_shards(5, 3);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.create_shards(8190, 8192);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.shard_schema(3);
\echo :LAST_ERROR_SQLSTATE
-- nothing of the refused ranges exists
SELECT count(*) AS shards, count(*) FILTER (WHERE shard IN (3, 5, 8190)) AS refused
  FROM shardid.shard_registry;
SELECT nspname FROM pg_namespace WHERE nspname LIKE 'shard\_%' ORDER BY 1;
DROP SCHEMA shard_0004;

-- Sharded tables: created LIKE the template in every shard, id DEFAULT next_id.
CREATE TABLE public.photos (
    id       bigint PRIMARY KEY,
    user_id  bigint NOT NULL,
    caption  text CHECK (length(caption) < 100),
    created  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ON public.photos (user_id);
CREATE TABLE public.likes (
    like_id  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    photo_id bigint NOT NULL
);
SELECT shardid.create_table('public.photos');
SELECT shardid.create_table('public.likes', 'like_id');
SELECT * FROM shardid.sharded_tables ORDER BY position;
SELECT n.nspname, c.relname, a.attname, pg_get_expr(d.adbin, d.adrelid) AS default, a.attidentity
  FROM pg_attrdef d
  JOIN pg_class c ON c.oid = d.adrelid
  JOIN pg_namespace n ON n.oid = c.relnamespace
  JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
 WHERE n.nspname LIKE 'shard\_%'
 ORDER BY 1, 2, 3;
-- indexes and constraints came along
SELECT indexrelid::regclass FROM pg_index WHERE indrelid = 'shard_0001.photos'::regclass ORDER BY 1;
-- (NOT NULL is a pg_constraint row from 18 on: left out, as on 15 and 17)
SELECT conname, contype FROM pg_constraint WHERE conrelid = 'shard_0001.photos'::regclass AND contype <> 'n' ORDER BY 1;

-- IDs: the shard's number inside, one generator for every table of a shard,
-- so IDs are unique and increasing across its tables.
CREATE TEMP TABLE issued (n serial, id bigint);
WITH x AS (INSERT INTO shard_0001.photos (user_id, caption) SELECT g, 'p' FROM generate_series(1, 300) g RETURNING id)
INSERT INTO issued (id) SELECT id FROM x;
WITH x AS (INSERT INTO shard_0001.likes (photo_id) SELECT g FROM generate_series(1, 300) g RETURNING like_id)
INSERT INTO issued (id) SELECT like_id FROM x;
WITH x AS (INSERT INTO shard_0001.photos (user_id, caption) SELECT g, 'q' FROM generate_series(1, 300) g RETURNING id)
INSERT INTO issued (id) SELECT id FROM x;
SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids,
       bool_and(shardid.id_shard(id) = 1) AS all_shard_1,
       bool_and(shardid.id_time(id) BETWEEN now() - interval '1 minute' AND clock_timestamp() + interval '2 seconds') AS fresh
  FROM issued;
SELECT count(*) AS not_increasing FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM issued) s WHERE id <= prev;
INSERT INTO shard_0002.photos (user_id) VALUES (1) RETURNING shardid.id_shard(id);
-- the registry view reports the generator state
SELECT s.last_id = (SELECT max(id) FROM issued) AS last_id_is_max,
       s.last_time = shardid.id_time(s.last_id) AS last_time_decodes,
       s.drift >= interval '0' AND s.drift < interval '3 seconds' AS drift_small
  FROM shardid.shards s WHERE shard = 1;
SELECT shard, last_id IS NULL AS unused FROM shardid.shards ORDER BY shard;

-- Shards created later get every sharded table.
SELECT shardid.create_shard(3);
SELECT c.relname FROM pg_class c WHERE c.relnamespace = 'shard_0003'::regnamespace AND c.relkind = 'r' ORDER BY 1;
SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE adrelid = 'shard_0003.likes'::regclass;
INSERT INTO shard_0003.likes (photo_id) VALUES (7) RETURNING shardid.id_shard(like_id);

-- create_table errors, before any shard gets the table.
CREATE VIEW public.photo_view AS SELECT * FROM public.photos;
SELECT shardid.create_table('public.photo_view');
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE public.parted (id bigint) PARTITION BY RANGE (id);
SELECT shardid.create_table('public.parted');
\echo :LAST_ERROR_SQLSTATE
CREATE TEMP TABLE scratch (id bigint);
SELECT shardid.create_table('scratch');
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE public.users (uid integer, name text);
SELECT shardid.create_table('public.users');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.create_table('public.users', 'uid');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.create_table('public.photos');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.create_table('shard_0001.photos');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.create_table(NULL);
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE public.comments (id bigint PRIMARY KEY, body text);
CREATE TABLE shard_0002.comments (x int);
SELECT shardid.create_table('public.comments');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS comments_tables FROM pg_class WHERE relname = 'comments';
SELECT count(*) AS registered FROM shardid.sharded_tables WHERE table_name = 'comments';
DROP TABLE shard_0002.comments;
SELECT shardid.create_table('public.comments');

-- A dropped template stops create_shard before it creates anything. (The
-- event trigger shardid_template_drop refuses the DROP, drop_table.sql
-- tests it; a superuser can go past it with session_replication_role,
-- as a database of 0.2, which had no such trigger, may have done.)
SET session_replication_role = replica;
DROP TABLE public.comments;
RESET session_replication_role;
SELECT shardid.create_shard(5);
\echo :LAST_ERROR_SQLSTATE
SELECT to_regnamespace('shard_0005') IS NULL AS no_schema,
       NOT EXISTS (SELECT FROM shardid.shard_registry WHERE shard = 5) AS not_registered;
DELETE FROM shardid.sharded_tables WHERE table_name = 'comments';

-- Moving a shard out: detach leaves the schema; attach registers a schema
-- that exists (e.g. restored by pg_dump -n) and adds missing sharded tables.
SELECT shardid.detach_shard(3);
SELECT shardid.detach_shard(3);
\echo :LAST_ERROR_SQLSTATE
DROP TABLE shard_0003.likes;
SELECT shardid.attach_shard(3);
SELECT c.relname FROM pg_class c WHERE c.relnamespace = 'shard_0003'::regnamespace AND c.relkind = 'r' ORDER BY 1;
SELECT shardid.attach_shard(3);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.attach_shard(6);
\echo :LAST_ERROR_SQLSTATE
CREATE SCHEMA shard_0006;
SELECT shardid.attach_shard(6);
\echo :LAST_ERROR_SQLSTATE
CREATE UNLOGGED SEQUENCE shard_0006.id_seq;
SELECT shardid.attach_shard(6);
\echo :LAST_ERROR_SQLSTATE
DROP SCHEMA shard_0006 CASCADE;
-- a registered shard whose schema was dropped is reported, not half-served
DROP SCHEMA shard_0003 CASCADE;
CREATE TABLE public.tags (id bigint);
SELECT shardid.create_table('public.tags');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.detach_shard(3);

-- A hostile search_path cannot redirect the helpers.
CREATE SCHEMA evil;
CREATE FUNCTION evil.lpad(text, integer, text) RETURNS text LANGUAGE sql AS $$ SELECT 'hijacked' $$;
CREATE FUNCTION evil.int4eq_always(integer, integer) RETURNS boolean LANGUAGE sql AS $$ SELECT true $$;
CREATE OPERATOR evil.= (LEFTARG = integer, RIGHTARG = integer, FUNCTION = evil.int4eq_always);
SET search_path = evil, pg_catalog, public;
SELECT 1 = 2 AS hijacked_here, lpad('1', 4, '0') AS hijacked_too;
SELECT shardid.create_shard(7);
SELECT shardid.shard_schema(2), shardid.shard_schema(7);
RESET search_path;
DROP SCHEMA evil CASCADE;

-- More shard bits than 4 digits can number: the names get wider.
\c :regress_db
SET client_min_messages = warning;
DROP DATABASE IF EXISTS regress_shards_wide;
CREATE DATABASE regress_shards_wide;
\c regress_shards_wide
\set SHOW_CONTEXT never
CREATE EXTENSION shardid;
SELECT max_shard FROM shardid.configure('2024-01-01', shard_bits => 15, seq_bits => 10);
SELECT shardid.create_shard(7), shardid.create_shard(32767);
SELECT shardid.create_shard(32768);
\echo :LAST_ERROR_SQLSTATE

\c :regress_db
SET client_min_messages = warning;
DROP DATABASE regress_shards;
DROP DATABASE regress_shards_wide;
