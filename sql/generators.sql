-- generators: the view shardid.generators, generator health for monitoring:
-- the generators column DEFAULTs name, the lead a burst leaves, the IDs of
-- the current millisecond, the layout's end, who may read it, and the
-- alerting queries of docs/monitoring.md. In a database of its own, with a
-- layout of 16 IDs per millisecond that ends in about a week.
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
\set regress_db :DBNAME
CREATE DATABASE regress_shardid_generators;
\c regress_shardid_generators
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
CREATE EXTENSION shardid;
-- 35 time bits (397.7 days) from an epoch 390 days ago
SELECT time_bits, ids_per_ms FROM shardid.configure(now() - interval '390 days', 24, 4);

-- Shards 1 and 2 with two sharded tables; a generator of its own serving a
-- partitioned table and a plain one, on shard 7; one named with two
-- different shards; and a sequence that no DEFAULT names.
SELECT shardid.create_shards(1, 2);
CREATE TABLE photos (id bigint PRIMARY KEY, caption text);
CREATE TABLE likes (id bigint PRIMARY KEY);
SELECT shardid.create_table('photos') AS photos, shardid.create_table('likes') AS likes;
CREATE SEQUENCE app_gen AS bigint;
CREATE TABLE events (id bigint DEFAULT shardid.next_id(7, 'app_gen'), at date) PARTITION BY RANGE (at);
CREATE TABLE events_2024 PARTITION OF events FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
CREATE TABLE audit (id bigint DEFAULT shardid.next_id(7, 'app_gen'));
CREATE SEQUENCE mixed_gen AS bigint;
CREATE TABLE mixed_a (id bigint DEFAULT shardid.next_id(1, 'mixed_gen'));
CREATE TABLE mixed_b (id bigint DEFAULT shardid.next_id(2, 'mixed_gen'));
CREATE SEQUENCE not_a_generator;

-- Every generator, none with a state yet, none with a failover move to
-- make (timeline 1; test/tap/failover.pl shows one after a promotion).
SELECT schema, sequence, shard, tables, last_time, lead, failover_pending, ids_in_ms, ids_per_ms
  FROM shardid.generators ORDER BY schema, sequence;

-- A burst of 20,000 IDs in one statement: 1,250 milliseconds' worth at 16
-- per millisecond, so however fast it ran, the state ends at least 1.249 s
-- past the clock at its start, and so past now(), the transaction's start.
BEGIN;
INSERT INTO audit SELECT FROM generate_series(1, 20000);
SELECT sequence, lead > interval '1.2 seconds' AS ahead_of_now,
       last_time = shardid.id_time(a.max_id) AS last_time_is_last_id,
       ids_in_ms = shardid.id_seq(a.max_id) + 1 AS ids_in_ms_of_last_id,
       ids_in_ms BETWEEN 1 AND ids_per_ms AS within_budget
  FROM shardid.generators, (SELECT max(id) AS max_id FROM audit) AS a
 WHERE sequence = 'app_gen';
-- docs/monitoring.md: generators ahead of the clock by more than
-- shardid.max_drift (none: the burst stayed under its 2 s) ...
SELECT schema, sequence FROM shardid.generators
 WHERE lead > current_setting('shardid.max_drift')::interval;
-- ... but 1 s would have been exceeded
SET LOCAL shardid.max_drift = '1s';
SELECT schema, sequence FROM shardid.generators
 WHERE lead > current_setting('shardid.max_drift')::interval;
COMMIT;

-- One ID on shard 2: its state is the time of that ID, its first of the
-- millisecond unless the clock stood still.
INSERT INTO shard_00000002.photos (caption) VALUES ('one') RETURNING shardid.id_shard(id);
SELECT g.sequence, g.shard, g.last_time = shardid.id_time(p.id) AS last_time_is_its_time,
       g.ids_in_ms = shardid.id_seq(p.id) + 1 AS ids_in_ms_of_it
  FROM shardid.generators AS g, shard_00000002.photos AS p
 WHERE g.schema = 'shard_00000002';

-- The layout's end, in about 7.7 days, for every generator; and
-- docs/monitoring.md's alert on the layout ending within 5 years.
SELECT DISTINCT time_left > interval '7 days' AND time_left < interval '8 days' AS ends_in_a_week,
       layout_end = (SELECT last_time FROM shardid.layout()) AS is_layout_last_time
  FROM shardid.generators;
SELECT last_time - now() < interval '8 days' AS ends_soon
  FROM shardid.layout() WHERE last_time < now() + interval '5 years';

-- A state outside the layout (set by hand past its last state) is shown
-- without a time, not an error.
SELECT setval('mixed_gen', (1::bigint << 39) + 5);
SELECT sequence, last_time, lead, ids_in_ms FROM shardid.generators WHERE sequence = 'mixed_gen';

-- A monitoring role without superuser and without any privilege on the
-- sequences reads every state; a role outside pg_monitor reads nothing.
CREATE ROLE regress_shardid_monitor IN ROLE pg_monitor;
CREATE ROLE regress_shardid_nobody;
SET ROLE regress_shardid_monitor;
SELECT has_sequence_privilege('app_gen', 'SELECT, USAGE') AS may_read_app_gen;
SELECT last_value FROM app_gen;
SELECT schema, sequence, shard, last_time IS NOT NULL AS has_state, lead IS NOT NULL AS has_lead
  FROM shardid.generators ORDER BY schema, sequence;
RESET ROLE;
SET ROLE regress_shardid_nobody;
SELECT * FROM shardid.generators;
SELECT * FROM shardid_internal._generator_states();
RESET ROLE;

\c :regress_db
DROP DATABASE regress_shardid_generators;
DROP ROLE regress_shardid_monitor, regress_shardid_nobody;
