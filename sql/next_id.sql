-- next_id: the generator at full speed and at ordinary rates, its state in
-- the sequence, the layout's end, and the shardid.max_drift setting.
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';

-- The library is loaded by the first call; then the setting exists.
SELECT shardid.id_seq(0) AS loaded;
SHOW shardid.max_drift;

CREATE SEQUENCE next_id_gen;
CREATE SEQUENCE next_id_other;

-- At an ordinary rate an ID's time is the clock's millisecond.
SELECT shardid.id_time(id) >= date_trunc('milliseconds', statement_timestamp()) AS not_before_call,
       shardid.id_time(id) <= clock_timestamp() AS not_after_clock,
       shardid.id_shard(id) AS shard
FROM shardid.next_id(5, 'next_id_gen') AS id;

-- The layout is now in use.
SELECT in_use FROM shardid.layout();

-- 2M IDs in one statement: distinct, strictly increasing in call order,
-- carrying their shard, and the last one within max_drift of the clock.
WITH ids AS MATERIALIZED (
    SELECT n, shardid.next_id(5, 'next_id_gen') AS id
    FROM generate_series(1, 2000000) WITH ORDINALITY AS g(v, n)
), ordered AS (
    SELECT n, id, lag(id) OVER (ORDER BY n) AS prev FROM ids
)
SELECT count(*) AS ids,
       count(DISTINCT id) AS distinct_ids,
       bool_and(id > prev) FILTER (WHERE prev IS NOT NULL) AS strictly_increasing,
       bool_and(shardid.id_shard(id) = 5) AS carry_their_shard,
       bool_and(id > 0) AS all_positive,
       shardid.id_time(max(id)) <= clock_timestamp() + current_setting('shardid.max_drift')::interval
           AS last_within_drift,
       shardid.id_time(max(id)) >= date_trunc('milliseconds', statement_timestamp()) AS last_not_before_start
FROM ordered;

-- Many shards on one generator: the IDs are distinct and carry their shard;
-- what increases is the state (time, seq), since the shard sits above seq.
WITH ids AS MATERIALIZED (
    SELECT n, shardid.next_id((n % 8192)::integer, 'next_id_gen') AS id
    FROM generate_series(1, 200000) AS n
), ordered AS (
    SELECT n, id, lag(id) OVER (ORDER BY n) AS prev FROM ids
)
SELECT count(*) AS ids,
       count(DISTINCT id) AS distinct_ids,
       bool_and(((id >> 23) << 10 | (id & 1023)) > ((prev >> 23) << 10 | (prev & 1023)))
           FILTER (WHERE prev IS NOT NULL) AS state_strictly_increasing,
       bool_and(shardid.id_shard(id) = n % 8192) AS carry_their_shard,
       bool_or(id < prev) AS some_id_below_the_previous
FROM ordered;

-- The sequence holds the state of the last ID: time << seq_bits | counter.
SELECT shardid.next_id(8191, 'next_id_gen') AS last_id \gset
SELECT last_value = ((:last_id >> 23) << 10) | (:last_id & 1023) AS state_matches_last_id,
       is_called,
       log_cnt BETWEEN 0 AND 32 * 1024 AS headroom_within_32_ms
FROM next_id_gen;

-- Another generator is independent: its time is the clock's, not the burst's.
SELECT shardid.id_time(id) >= date_trunc('milliseconds', statement_timestamp()) AS not_before_call,
       shardid.id_time(id) <= clock_timestamp() AS not_after_clock
FROM shardid.next_id(0, 'next_id_other') AS id;

-- A rolled-back ID is never issued again.
BEGIN;
SELECT shardid.next_id(1, 'next_id_gen') AS rolled_back \gset
ROLLBACK;
SELECT shardid.next_id(1, 'next_id_gen') > :rolled_back AS above_rolled_back;

-- As a column DEFAULT: IDs increase in insertion order and carry the shard.
CREATE TABLE next_id_posts (
    id bigint PRIMARY KEY DEFAULT shardid.next_id(3, 'next_id_gen'),
    n serial,
    body text
);
INSERT INTO next_id_posts (body) SELECT 'post ' || i FROM generate_series(1, 10000) AS i;
INSERT INTO next_id_posts (body) VALUES ('one more');
SELECT count(*) AS rows,
       bool_and(id > prev) FILTER (WHERE prev IS NOT NULL) AS increasing,
       bool_and(shardid.id_shard(id) = 3) AS shard_3
FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM next_id_posts) AS t;
DROP TABLE next_id_posts;

-- A sequence in a quoted schema, named as regclass text.
CREATE SCHEMA "Next Id";
CREATE SEQUENCE "Next Id"."Gen 1";
SELECT shardid.id_shard(shardid.next_id(42, '"Next Id"."Gen 1"')) AS shard;
DROP SCHEMA "Next Id" CASCADE;

-- A state ahead of the clock (a clock stepped back) keeps counting from it.
CREATE SEQUENCE next_id_ahead;
SELECT setval('next_id_ahead',
              ((shardid.time_to_id('2045-01-01 00:00:00+00') >> 23) << 10) | 5) IS NOT NULL AS set;
SELECT shardid.next_id(7, 'next_id_ahead') = shardid.make_id('2045-01-01 00:00:00+00', 7, 6) AS next_counter;
SELECT shardid.next_id(7, 'next_id_ahead') = shardid.make_id('2045-01-01 00:00:00+00', 7, 7) AS and_the_next;
-- a full millisecond moves to the next one
SELECT setval('next_id_ahead',
              ((shardid.time_to_id('2045-01-01 00:00:00+00') >> 23) << 10) | 1023) IS NOT NULL AS set;
SELECT * FROM shardid.id_decode(shardid.next_id(9, 'next_id_ahead'));

-- The layout's last millisecond: its last ID is 2^63 - 1, then the generator
-- fails cleanly instead of wrapping.
SELECT setval('next_id_ahead', (1::bigint << 50) - 2) IS NOT NULL AS set;
SELECT shardid.next_id(8191, 'next_id_ahead') AS last_possible_id;
\set VERBOSITY default
SELECT shardid.next_id(8191, 'next_id_ahead');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.next_id(0, 'next_id_ahead');
\echo :LAST_ERROR_SQLSTATE
DROP SEQUENCE next_id_ahead;

-- shardid.max_drift = 0: at most 1024 IDs per millisecond of clock, so
-- 100000 IDs take at least 97 ms and no ID is ahead of the clock.
SET shardid.max_drift = 0;
SHOW shardid.max_drift;
SELECT clock_timestamp() AS started \gset
CREATE TEMP TABLE next_id_capped AS
SELECT n, shardid.next_id(1, 'next_id_other') AS id FROM generate_series(1, 100000) AS n;
SELECT count(DISTINCT id) AS distinct_ids,
       clock_timestamp() - :'started'::timestamptz >= interval '96 ms' AS took_97_ms,
       shardid.id_time(max(id)) <= clock_timestamp() AS last_not_ahead
FROM next_id_capped;
DROP TABLE next_id_capped;
RESET shardid.max_drift;

-- The setting: units, range, and who may change it.
SET shardid.max_drift = '250ms';
SHOW shardid.max_drift;
SET shardid.max_drift = '1h';
SHOW shardid.max_drift;
-- out of range: PostgreSQL's own message, worded differently by each major
\set VERBOSITY sqlstate
SET shardid.max_drift = -1;
SET shardid.max_drift = '3600001ms';
\set VERBOSITY default
RESET shardid.max_drift;
CREATE ROLE regress_shardid_drift;
SET ROLE regress_shardid_drift;
SET shardid.max_drift = 10;
\echo :LAST_ERROR_SQLSTATE
SHOW shardid.max_drift;
RESET ROLE;
DROP ROLE regress_shardid_drift;
SET shardid.unknown_setting = 1;
\echo :LAST_ERROR_SQLSTATE

DROP SEQUENCE next_id_gen;
DROP SEQUENCE next_id_other;
