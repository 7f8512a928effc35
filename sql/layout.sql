-- layout: layout() and configure(). Non-default layouts run in databases of
-- their own, since the first next_id() freezes a database's layout.
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';

-- The default layout is Instagram's (in_use depends on the tests before).
SELECT epoch, time_bits, shard_bits, seq_bits, max_shard, ids_per_ms, ids_per_second, last_time
FROM shardid.layout();
SELECT (extract(epoch FROM epoch) * 1000)::bigint AS epoch_ms FROM shardid.layout();

\set regress_db :DBNAME
CREATE DATABASE regress_shardid_layout;
\c regress_shardid_layout
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
CREATE EXTENSION shardid;
SELECT * FROM shardid.layout();
SELECT count(*) AS config_rows FROM shardid.layout_config;

-- Refused layouts: each says what is allowed.
\set VERBOSITY default
\set SHOW_CONTEXT never
SELECT shardid.configure('2012-01-01+00', -1, 10);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.configure('2012-01-01+00', 32, 10);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.configure('2012-01-01+00', 13, -1);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.configure('2012-01-01+00', 0, 32);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.configure('2012-01-01+00', 15, 14);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.configure('2012-01-01+00', 31, 31);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.configure('2012-01-01+00', 0, 0);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.configure('9999-12-31 23:59:59.999+00', 10, 0);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.configure('1969-12-31 23:59:59.999+00');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.configure('10000-01-01+00');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.configure('infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.configure(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.configure('2012-01-01+00', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.configure('2012-01-01+00', 13, NULL);
\echo :LAST_ERROR_SQLSTATE
-- nothing was written
SELECT count(*) AS config_rows FROM shardid.layout_config;

-- The edges that are accepted.
SELECT epoch, time_bits, shard_bits, seq_bits, max_shard, ids_per_ms, ids_per_second, last_time, in_use
FROM shardid.configure('2011-08-24 21:07:01.721+00', 14, 14);
SELECT epoch, time_bits, shard_bits, seq_bits, max_shard, ids_per_ms, ids_per_second, last_time
FROM shardid.configure('1970-01-01+00', 0, 28);
SELECT epoch, time_bits, shard_bits, seq_bits, max_shard, ids_per_ms, ids_per_second, last_time
FROM shardid.configure('1970-01-01+00', 28, 0);
SELECT epoch, time_bits, shard_bits, seq_bits, max_shard, ids_per_ms, ids_per_second, last_time
FROM shardid.configure('1970-01-01+00', 10, 0);
SELECT epoch, time_bits, shard_bits, seq_bits, max_shard, ids_per_ms, ids_per_second, last_time
FROM shardid.configure('9999-12-31 23:59:59.999+00', 11, 0);
-- an epoch is kept to the millisecond
SELECT epoch FROM shardid.configure('2012-01-01 00:00:00.123999+00');
SELECT count(*) AS config_rows FROM shardid.layout_config;

-- With a 1970 epoch, times before 2000 round down to their millisecond.
SELECT shardid.configure('1970-01-01+00') IS NOT NULL AS configured;
SELECT shardid.make_id('1999-12-31 23:59:59.999999+00', 0, 0) >> 23 AS ms_since_1970;
SELECT shardid.make_id('1970-01-01 00:00:00.000999+00', 0, 0) AS first_ms;

-- The Chinese write-up's layout: epoch 2012-01-01, 13 shard and 10 seq bits.
-- 2046-11-01 is its last month; 2046-12-01 went negative there, here it fails.
SELECT epoch, time_bits, last_time FROM shardid.configure('2012-01-01 00:00:00+00', 13, 10);
SELECT shardid.make_id('2046-11-01 00:00:00+00', 5, 112345 % 1024) AS id_2046_11;
SELECT * FROM shardid.id_decode(9221321628057605849);
SELECT shardid.make_id('2046-11-03 19:53:47.775+00', 8191, 1023) AS last_id;
SELECT shardid.make_id('2046-12-01 00:00:00+00', 5, 112345 % 1024);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.time_to_id('2046-11-03 19:53:47.776+00');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.make_id('2011-12-31 23:59:59.999+00', 5, 0);
\echo :LAST_ERROR_SQLSTATE

-- A change is seen at once by this session's decoders (the layout is cached).
SELECT shardid.id_time(8388608) AS one_ms_2012, shardid.id_shard(1024) AS shard_13_bits;
SELECT shard_bits FROM shardid.configure('2020-01-01+00', 2, 20);
SELECT shardid.id_time(8388608) AS with_22_bits, shardid.id_shard(1024) AS shard_2_bits,
       shardid.id_seq(1024) AS seq_20_bits;
SELECT shardid.make_id('2020-01-01+00', 4, 0);
\echo :LAST_ERROR_SQLSTATE
-- and a rolled-back change is forgotten
BEGIN;
SELECT shard_bits FROM shardid.configure('2012-01-01+00', 13, 10);
SELECT shardid.id_shard(1024) AS inside;
ROLLBACK;
SELECT shardid.id_shard(1024) AS after_rollback, (shardid.layout()).shard_bits;
-- a new session reads the committed layout
\c regress_shardid_layout
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
SELECT epoch, shard_bits, seq_bits FROM shardid.layout();

-- Only superusers may configure.
CREATE ROLE regress_shardid_layout_user;
SET ROLE regress_shardid_layout_user;
SELECT shardid.configure('2012-01-01+00');
\echo :LAST_ERROR_SQLSTATE
SELECT shard_bits FROM shardid.layout();
RESET ROLE;
DROP ROLE regress_shardid_layout_user;

-- The first next_id() freezes the layout, even if its transaction aborts.
SELECT shard_bits FROM shardid.configure('2012-01-01+00', 13, 10);
CREATE SEQUENCE layout_gen;
BEGIN;
SELECT shardid.id_shard(shardid.next_id(77, 'layout_gen')) AS shard;
ROLLBACK;
SELECT in_use FROM shardid.layout();
SELECT shardid.configure('2012-01-01+00', 13, 10);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.configure('2020-01-01+00', 6, 6);
\echo :LAST_ERROR_SQLSTATE
-- validation still comes first
SELECT shardid.configure('2020-01-01+00', 40, 6);
\echo :LAST_ERROR_SQLSTATE
SELECT epoch, shard_bits, seq_bits, in_use FROM shardid.layout();

\c :regress_db
DROP DATABASE regress_shardid_layout;
