-- attach_layout: attach_shard() refuses a shard whose generator state or
-- IDs were made under another layout (issue 10: one was accepted and the
-- shards view showed a 3051-day drift).
SET client_min_messages = warning;
SET timezone = 'UTC';
\set regress_db :DBNAME
DROP DATABASE IF EXISTS regress_attach_layout;
CREATE DATABASE regress_attach_layout;
\c regress_attach_layout
SET client_min_messages = warning;
SET timezone = 'UTC';
\set SHOW_CONTEXT never
CREATE EXTENSION shardid;
CREATE TABLE public.posts (id bigint PRIMARY KEY, body text);
SELECT shardid.create_shard(5);
SELECT shardid.create_table('public.posts');
INSERT INTO shard_0005.posts (body) SELECT 'p' FROM generate_series(1, 3);
SELECT shardid.detach_shard(5);
SELECT last_value AS good_state FROM shard_0005.id_seq \gset

-- A state that decodes 3051 days ahead (a 2003 epoch's state read with
-- the 2011 epoch): refused, nothing registered.
SELECT setval('shard_0005.id_seq', :good_state + ((3051::bigint * 86400000) << 10)) > 0 AS moved_ahead;
\set VERBOSITY sqlstate
SELECT shardid.attach_shard(5);
\set VERBOSITY default
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS registered FROM shardid.shard_registry;

-- A state past the last one the layout can hold (another seq_bits).
SELECT setval('shard_0005.id_seq', (9223372036854775807 >> 13) + 1) > 0 AS past_end;
SELECT shardid.attach_shard(5);
\echo :LAST_ERROR_SQLSTATE

-- A state within the layout, but IDs of another shard in a table.
SELECT setval('shard_0005.id_seq', :good_state) > 0 AS restored;
INSERT INTO shard_0005.posts (id, body) VALUES (shardid.make_id(now() + interval '1 hour', 6, 0), 'stray');
\set VERBOSITY sqlstate
SELECT shardid.attach_shard(5);
\set VERBOSITY default
\echo :LAST_ERROR_SQLSTATE
-- and one of the last millisecond the layout holds (shard 8191, 2046)
DELETE FROM shard_0005.posts WHERE body = 'stray';
INSERT INTO shard_0005.posts (id, body) VALUES (9223372036854775807, 'far');
SELECT shardid.attach_shard(5);
\echo :LAST_ERROR_SQLSTATE
DELETE FROM shard_0005.posts WHERE body = 'far';
SELECT count(*) AS registered FROM shardid.shard_registry;

-- The shard as it was: attached, and the view shows a sane state.
SELECT shardid.attach_shard(5);
SELECT shard, last_time BETWEEN now() - interval '1 hour' AND now() + interval '1 hour' AS last_time_now,
       drift < interval '3 seconds' AS small_drift
  FROM shardid.shards;

-- DROP EXTENSION CASCADE drops the freeze with the layout (documented):
-- a new CREATE EXTENSION is unfrozen and configure() takes any layout.
SELECT shardid.detach_shard(5);
DROP EXTENSION shardid CASCADE;
CREATE EXTENSION shardid;
SELECT in_use FROM shardid.layout();
SELECT (shardid.configure('2019-08-24 21:07:01.721+00')).in_use;
-- what attach_shard can see is refused: the state now decodes 8 years ahead
\set VERBOSITY sqlstate
SELECT shardid.attach_shard(5);
\set VERBOSITY default
SELECT count(*) AS registered FROM shardid.shard_registry;

\c :regress_db
SET client_min_messages = warning;
DROP DATABASE regress_attach_layout;
