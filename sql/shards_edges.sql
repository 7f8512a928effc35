-- shards_edges: a generator sequence set past the layout's last state, and
-- NULL arguments to the shard functions.
SET client_min_messages = warning;
SET timezone = 'UTC';
\set regress_db :DBNAME
DROP DATABASE IF EXISTS regress_shards_edges;
CREATE DATABASE regress_shards_edges;
\c regress_shards_edges
SET client_min_messages = warning;
SET timezone = 'UTC';
\set SHOW_CONTEXT never
CREATE EXTENSION shardid;
CREATE TABLE public.posts (id bigint PRIMARY KEY, body text);
SELECT shardid.create_shards(1, 2);
SELECT shardid.create_table('public.posts');
INSERT INTO shard_0002.posts (body) VALUES ('a');

-- A state past the layout's last one (2^50 - 1 with 13 shard bits): the
-- view does not decode it into a negative ID or a year-287438 time ...
SELECT setval('shard_0001.id_seq', (9223372036854775807 >> 13) + 5) > 0 AS set_past_end;
SELECT shard, last_id, last_time, drift FROM shardid.shards WHERE shard = 1;
SELECT shard, last_id > 0 AS positive, last_time < now() + interval '1 minute' AS sane_time
  FROM shardid.shards WHERE shard = 2;
-- ... and next_id says what is wrong, not that the layout has run out
SELECT shardid.next_id(1, 'shard_0001.id_seq'::regclass);
\echo :LAST_ERROR_SQLSTATE
-- the state at the layout's very end is the true end of time
SELECT setval('shard_0001.id_seq', 9223372036854775807 >> 13) > 0 AS set_at_end;
SELECT shard, last_id, last_time FROM shardid.shards WHERE shard = 1;
SELECT shardid.next_id(1, 'shard_0001.id_seq'::regclass);
\echo :LAST_ERROR_SQLSTATE

-- NULL arguments: the shard functions that change something refuse them
-- (22004); shard_schema(), like the decoders, returns NULL.
SELECT shardid.create_shard(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.create_shards(NULL, 3);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.create_table(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.create_table('public.posts', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.attach_shard(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.detach_shard(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.adopt('public.posts', NULL, 'shard_0002.id_seq');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.adopt(NULL, 2, 'shard_0002.id_seq');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.shard_schema(NULL) IS NULL AS shard_schema_null,
       shardid.id_shard(NULL) IS NULL AS id_shard_null,
       shardid.next_id(NULL, 'shard_0002.id_seq'::regclass) IS NULL AS next_id_null;
SELECT count(*) AS shards FROM shardid.shard_registry;

\c :regress_db
SET client_min_messages = warning;
DROP DATABASE regress_shards_edges;
