-- Migration: a schema made the way Instagram published it (insta5.next_id()
-- in PL/pgSQL over insta5.table_id_seq % 1024) switches to the native
-- generator with adopt(), and new IDs continue above the old ones.
SET client_min_messages = warning;
\set regress_db :DBNAME
DROP DATABASE IF EXISTS regress_shards_adopt;
CREATE DATABASE regress_shards_adopt;
\c regress_shards_adopt
SET client_min_messages = warning;
\set SHOW_CONTEXT never
CREATE EXTENSION shardid;

CREATE SCHEMA insta5;
CREATE SEQUENCE insta5.table_id_seq;
CREATE OR REPLACE FUNCTION insta5.next_id(OUT result bigint) AS $$
DECLARE
    our_epoch bigint := 1314220021721;
    seq_id bigint;
    now_millis bigint;
    shard_id int := 5;
BEGIN
    SELECT nextval('insta5.table_id_seq') % 1024 INTO seq_id;
    SELECT FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) INTO now_millis;
    result := (now_millis - our_epoch) << 23;
    result := result | (shard_id << 10);
    result := result | (seq_id);
END;
$$ LANGUAGE PLPGSQL;
CREATE TABLE insta5.our_table (
    "id" bigint NOT NULL DEFAULT insta5.next_id(),
    n    serial,
    body text
);
-- old rows: from the PL/pgSQL function, plus backfilled history
INSERT INTO insta5.our_table (body) SELECT 'old' FROM generate_series(1, 2000);
INSERT INTO insta5.our_table (id, body) VALUES (shardid.make_id('2015-06-01 12:00', 5, 3), 'history');
SELECT count(*) AS old_rows, bool_and(shardid.id_shard(id) = 5) AS all_shard_5,
       bool_and(id > 0) AS positive FROM insta5.our_table;
SELECT max(id) AS old_max FROM insta5.our_table \gset

-- refused adoptions change nothing
SELECT shardid.adopt('insta5.our_table', 6, 'insta5.table_id_seq');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.adopt('insta5.our_table', 8192, 'insta5.table_id_seq');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.adopt('insta5.our_table', 5, 'insta5.our_table');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.adopt('insta5.our_table', 5, 'insta5.table_id_seq', 'nope');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.adopt('insta5.our_table', 5, 'insta5.table_id_seq', 'n');
\echo :LAST_ERROR_SQLSTATE
CREATE TEMP SEQUENCE tmp_seq;
SELECT shardid.adopt('insta5.our_table', 5, 'tmp_seq');
\echo :LAST_ERROR_SQLSTATE
SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef
 WHERE adrelid = 'insta5.our_table'::regclass AND adnum = 1;
SELECT count(*) AS registered FROM shardid.shard_registry;

-- adopt: returns the largest existing ID, sets the generator above it
SELECT shardid.adopt('insta5.our_table', 5, 'insta5.table_id_seq') = :old_max AS returns_old_max;
SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef
 WHERE adrelid = 'insta5.our_table'::regclass AND adnum = 1;
SELECT last_value = ((:old_max >> 23) << 10 | (:old_max & 1023)) AS state_is_old_max,
       is_called FROM insta5.table_id_seq;
SELECT shard, schema, sequence FROM shardid.shards;
SELECT shardid.shard_schema(5);

-- continuity: every new ID is above every old one, shard 5, increasing
INSERT INTO insta5.our_table (body) SELECT 'new' FROM generate_series(1, 2000);
SELECT count(*) AS new_rows,
       min(id) > :old_max AS above_old,
       bool_and(shardid.id_shard(id) = 5) AS all_shard_5,
       bool_and(shardid.id_time(id) BETWEEN now() - interval '1 minute' AND clock_timestamp() + interval '2 seconds') AS fresh
  FROM insta5.our_table WHERE body = 'new';
SELECT count(*) AS not_increasing
  FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM insta5.our_table WHERE body = 'new') s
 WHERE id <= prev;
SELECT count(*) = count(DISTINCT id) AS unique_ids FROM insta5.our_table;

-- a second table of the schema on the same generator: its older IDs never
-- lower the state
CREATE TABLE insta5.other_table (id bigint NOT NULL DEFAULT insta5.next_id());
INSERT INTO insta5.other_table VALUES (shardid.make_id('2020-01-01', 5, 9));
SELECT last_value AS state_before FROM insta5.table_id_seq \gset
SELECT shardid.adopt('insta5.other_table', 5, 'insta5.table_id_seq') = shardid.make_id('2020-01-01', 5, 9) AS returns_its_max;
SELECT last_value = :state_before AS state_kept FROM insta5.table_id_seq;
-- an empty table adopts without touching the state
CREATE TABLE insta5.empty_table (id bigint DEFAULT insta5.next_id());
SELECT shardid.adopt('insta5.empty_table', 5, 'insta5.table_id_seq') IS NULL AS empty_returns_null;
SELECT last_value = :state_before AS state_kept FROM insta5.table_id_seq;
-- one generator per shard
CREATE SEQUENCE insta5.second_seq;
SELECT shardid.adopt('insta5.empty_table', 5, 'insta5.second_seq');
\echo :LAST_ERROR_SQLSTATE

-- The last ID of a millisecond (seq 1023), a little ahead of the clock: the
-- generator carries into the next millisecond instead of repeating it.
CREATE SCHEMA insta6;
CREATE SEQUENCE insta6.table_id_seq AS integer;
CREATE TABLE insta6.edge (id bigint, n serial);
INSERT INTO insta6.edge (id)
    VALUES (shardid.make_id(clock_timestamp() + interval '1500 ms', 6, 1023)) RETURNING id AS edge_id \gset
SELECT shardid.adopt('insta6.edge', 6, 'insta6.table_id_seq') = :edge_id AS adopted;
-- the integer sequence was widened to hold the state
SELECT data_type, max_value FROM pg_sequences WHERE sequencename = 'table_id_seq' AND schemaname = 'insta6';
INSERT INTO insta6.edge DEFAULT VALUES RETURNING id > :edge_id AS above, shardid.id_shard(id) AS shard,
       shardid.id_seq(id) AS seq, shardid.id_time(id) > shardid.id_time(:edge_id) AS later_ms;

-- IDs that do not decode under this layout are refused.
CREATE SCHEMA legacy;
CREATE SEQUENCE legacy.seq;
CREATE TABLE legacy.neg (id bigint);
INSERT INTO legacy.neg VALUES (-5), (42);
SELECT shardid.adopt('legacy.neg', 0, 'legacy.seq');
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE legacy.mixed (id bigint);
INSERT INTO legacy.mixed VALUES (shardid.make_id('2020-01-01', 7, 0)), (shardid.make_id('2020-01-01', 8, 0));
SELECT shardid.adopt('legacy.mixed', 7, 'legacy.seq');
\echo :LAST_ERROR_SQLSTATE
-- made with an earlier epoch (the Vietnamese seed's 1293843600000): decodes
-- to the future under Instagram's epoch
CREATE TABLE legacy.vi (id bigint);
INSERT INTO legacy.vi
    SELECT (((extract(epoch FROM clock_timestamp()) * 1000)::bigint - 1293843600000) << 23) | (9 << 10) | 1;
\set VERBOSITY terse
SELECT shardid.adopt('legacy.vi', 9, 'legacy.seq');
\set VERBOSITY default
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS legacy_registered FROM shardid.shard_registry WHERE schema_name = 'legacy';
SELECT pg_get_expr(adbin, adrelid) IS NULL AS no_default FROM pg_class c
  LEFT JOIN pg_attrdef d ON d.adrelid = c.oid WHERE c.oid = 'legacy.mixed'::regclass;
CREATE VIEW legacy.v AS SELECT 1::bigint AS id;
SELECT shardid.adopt('legacy.v', 1, 'legacy.seq');
\echo :LAST_ERROR_SQLSTATE

\c :regress_db
SET client_min_messages = warning;
DROP DATABASE regress_shards_adopt;
