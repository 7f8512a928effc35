-- decode: make_id, time_to_id and the decoders with the default layout, the
-- worked examples of the seeds, and every error with its SQLSTATE.
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';

-- The default layout's edges: the first and the last ID.
SELECT shardid.make_id('2011-08-24 21:07:01.721+00', 0, 0) AS first_id,
       shardid.make_id('2046-06-27 17:00:49.496+00', 8191, 1023) AS last_id,
       shardid.make_id('2046-06-27 17:00:49.496+00', 8191, 1023) = 9223372036854775807 AS is_int8_max;
SELECT * FROM shardid.id_decode(0);
SELECT * FROM shardid.id_decode(9223372036854775807);
SELECT shardid.id_time(1024), shardid.id_shard(1024), shardid.id_seq(1024);
SELECT shardid.id_time(8388608), shardid.id_shard(8388607), shardid.id_seq(8388607);

-- Instagram's blog: 1387263000 ms after the epoch, user 31341 on 2000
-- logical shards (shard 1341), the table's 5001st row (seq 5001 % 1024 = 905).
SELECT shardid.make_id(timestamptz '2011-08-24 21:07:01.721+00' + interval '1387263000 ms',
                       31341 % 2000, 5001 % 1024) AS instagram_blog_id;
SELECT shardid.make_id(timestamptz '2011-08-24 21:07:01.721+00' + interval '1387263000 ms',
                       31341 % 2000, 5001 % 1024)
     = (1387263000::bigint << 23) | (1341 << 10) | 905 AS matches_the_formula;
SELECT * FROM shardid.id_decode(11637205501278089);
SELECT (extract(epoch FROM shardid.id_time(11637205501278089)) * 1000)::bigint - 1314220021721
       AS ms_after_epoch;

-- The Vietnamese write-up: time 264384000000 ms, shard 1001, seq 9001 % 1024 = 809.
-- Its printed ID (...832) is off by one: it decodes to seq 808.
SELECT shardid.make_id(timestamptz '2011-08-24 21:07:01.721+00' + interval '264384000000 ms',
                       5001 % 2000, 9001 % 1024) AS vietnamese_id;
SELECT * FROM shardid.id_decode(2217813737473025833);
SELECT * FROM shardid.id_decode(2217813737473025832);

-- An Instagram media ID decodes to its post time with the default layout.
SELECT * FROM shardid.id_decode(908540701891980503);

-- make_id truncates to the millisecond; decode gives the millisecond back.
SELECT shardid.make_id('2020-01-01 00:00:00.123999+00', 7, 9)
     = shardid.make_id('2020-01-01 00:00:00.123+00', 7, 9) AS truncated;
SELECT * FROM shardid.id_decode(shardid.make_id('2020-01-01 00:00:00.123999+00', 7, 9));
SELECT shardid.make_id('2020-01-01 09:00:00.5+09', 1, 2) = shardid.make_id('2020-01-01 00:00:00.5+00', 1, 2)
       AS zone_independent;

-- time_to_id: the smallest ID of a millisecond, which make_id(ts, 0, 0) also is.
SELECT shardid.time_to_id('2011-08-24 21:07:01.721+00') AS first,
       shardid.time_to_id('2011-08-24 21:07:01.722+00') AS second_ms,
       shardid.time_to_id('2046-06-27 17:00:49.496+00') AS last_ms;
SELECT shardid.time_to_id('2020-01-01 00:00:00.123456+00') = shardid.make_id('2020-01-01 00:00:00.123+00', 0, 0)
       AS equals_make_id;
SELECT shardid.time_to_id('2020-01-01 00:00:00.124+00') - shardid.time_to_id('2020-01-01 00:00:00.123+00')
       AS ids_per_ms;
-- a time window as a primary-key range
CREATE TABLE decode_posts (id bigint PRIMARY KEY, body text);
INSERT INTO decode_posts
SELECT shardid.make_id(timestamptz '2020-01-01 00:00+00' + i * interval '1 hour', i % 8192, i % 1024), 'post ' || i
FROM generate_series(0, 47) AS i;
SELECT count(*), min(body), max(body) FROM decode_posts
WHERE id >= shardid.time_to_id('2020-01-01 10:00+00') AND id < shardid.time_to_id('2020-01-01 12:00+00');
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM decode_posts
WHERE id >= shardid.time_to_id('2020-01-01 10:00+00') AND id < shardid.time_to_id('2020-01-01 12:00+00');
RESET enable_seqscan;
DROP TABLE decode_posts;

-- NULL in, NULL out.
SELECT shardid.id_time(NULL) IS NULL AS id_time, shardid.id_shard(NULL) IS NULL AS id_shard,
       shardid.id_seq(NULL) IS NULL AS id_seq, (shardid.id_decode(NULL)).ts IS NULL AS id_decode,
       shardid.time_to_id(NULL) IS NULL AS time_to_id;
SELECT shardid.make_id(NULL, 0, 0) IS NULL AS null_ts, shardid.make_id(now(), NULL, 0) IS NULL AS null_shard,
       shardid.make_id(now(), 0, NULL) IS NULL AS null_seq;

-- Errors: each with its message, DETAIL and SQLSTATE.
\set VERBOSITY default
SELECT shardid.make_id('2020-01-01+00', 8192, 0);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.make_id('2020-01-01+00', -1, 0);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.make_id('2020-01-01+00', 0, 1024);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.make_id('2020-01-01+00', 0, -1);
\echo :LAST_ERROR_SQLSTATE
-- the shard is checked first
SELECT shardid.make_id('1900-01-01+00', 9000, 2000);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.make_id('2011-08-24 21:07:01.720+00', 0, 0);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.make_id('2046-06-27 17:00:49.497+00', 0, 0);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.make_id('infinity', 0, 0);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.make_id('-infinity', 0, 0);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.time_to_id('2011-08-24 21:07:01.720999+00');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.time_to_id('2046-06-27 17:00:49.497+00');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.time_to_id('294276-12-31 23:59:59.999999+00');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.time_to_id('infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.id_time(-1);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.id_shard(-9223372036854775808);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.id_seq(-2);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM shardid.id_decode(-1);
\echo :LAST_ERROR_SQLSTATE

-- Any role may decode and compose; configure() is for superusers only.
CREATE ROLE regress_shardid_decoder;
SET ROLE regress_shardid_decoder;
SELECT shardid.id_shard(11637205501278089), shardid.make_id('2020-01-01+00', 1, 1),
       shardid.time_to_id('2020-01-01+00'), shardid.to_shortcode(64), shardid.from_shortcode('BA'),
       (shardid.layout()).shard_bits;
SELECT shardid.configure('2011-08-24 21:07:01.721+00');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
DROP ROLE regress_shardid_decoder;

-- The functions' volatility, strictness and parallel safety.
SELECT p.proname, p.provolatile, p.proisstrict, p.proparallel
FROM pg_catalog.pg_proc AS p
WHERE p.pronamespace = 'shardid'::regnamespace
  AND p.proname IN ('id_time', 'id_shard', 'id_seq', 'id_decode', 'make_id', 'time_to_id',
                    'to_shortcode', 'from_shortcode', 'layout', 'configure', 'next_id')
ORDER BY p.proname;

-- Every function carries a comment.
SELECT p.proname
FROM pg_catalog.pg_proc AS p
WHERE p.pronamespace = 'shardid'::regnamespace
  AND obj_description(p.oid, 'pg_proc') IS NULL;
