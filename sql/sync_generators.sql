-- sync_generators(): generators raised above rows that arrived without them
-- (logical replication, a data restore). IDs depend on the clock, so the
-- checks print booleans and decoded parts relative to the copied rows.
\set SHOW_CONTEXT never
SELECT shardid.sync_generators() AS raised;

CREATE SCHEMA sg;
CREATE SEQUENCE sg.gen5 AS bigint;
CREATE SEQUENCE sg.gen6 AS bigint;
CREATE TABLE sg.a (id bigint PRIMARY KEY DEFAULT shardid.next_id(5, 'sg.gen5'::regclass), v text);
CREATE TABLE sg.b (id bigint PRIMARY KEY DEFAULT shardid.next_id(5, 'sg.gen5'::regclass), v text);
CREATE TABLE sg.c (id bigint PRIMARY KEY DEFAULT shardid.next_id(6, 'sg.gen6'::regclass));
-- empty tables: nothing to raise
SELECT shardid.sync_generators() AS raised;

-- Rows copied in with their IDs, as logical replication does: shard 5's
-- from a generator that ran an hour ahead of the clock, in two tables.
CREATE TEMP TABLE copied AS SELECT now() + interval '1 hour' AS ahead;
INSERT INTO sg.a (id, v) SELECT shardid.make_id((SELECT ahead FROM copied), 5, s), 'copied' FROM generate_series(1, 10) AS s;
INSERT INTO sg.b (id, v) VALUES (shardid.make_id((SELECT ahead FROM copied), 5, 500), 'copied');
INSERT INTO sg.c (id) VALUES (shardid.make_id(now() - interval '1 day', 6, 7));
-- Without a sync the generator issues below the copied rows: the defect.
SELECT shardid.next_id(5, 'sg.gen5') < (SELECT max(id) FROM sg.b) AS below_copied;

-- gen5 (above sg.b's row) and gen6 (never called) are raised
SELECT shardid.sync_generators() AS raised;
SELECT shardid.sync_generators() AS raised_again;
INSERT INTO sg.a (v) VALUES ('new') RETURNING id > (SELECT max(id) FROM sg.b) AS above_copied,
    shardid.id_time(id) = (SELECT date_trunc('milliseconds', ahead) FROM copied) AS same_ms,
    shardid.id_seq(id) AS seq, shardid.id_shard(id) AS shard;

-- A state already above the rows is never lowered.
SELECT setval('sg.gen5', (SELECT last_value FROM sg.gen5) + 100000) AS set_to \gset
SELECT shardid.sync_generators() AS raised;
SELECT last_value = :set_to AS unchanged FROM sg.gen5;

-- Refusals: a negative ID, and an ID of another shard (what another
-- layout's IDs look like); nothing is raised.
INSERT INTO sg.c (id) VALUES (-5);
SELECT shardid.sync_generators();
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
DELETE FROM sg.c WHERE id < 0;
INSERT INTO sg.c (id) VALUES (shardid.make_id('2040-01-01 00:00:00+00', 9, 1));
SELECT shardid.sync_generators();
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
DELETE FROM sg.c WHERE shardid.id_shard(id) = 9;

-- A DEFAULT whose shard is not a literal: the copied row's whole
-- millisecond is skipped, so the next ID starts the next millisecond.
CREATE SEQUENCE sg.gen7 AS bigint;
CREATE TABLE sg.d (id bigint PRIMARY KEY DEFAULT shardid.next_id(2 + 1, 'sg.gen7'::regclass));
INSERT INTO sg.d (id) VALUES (shardid.make_id((SELECT ahead FROM copied), 3, 10));
SELECT shardid.sync_generators() AS raised;
INSERT INTO sg.d DEFAULT VALUES RETURNING shardid.id_seq(id) AS seq,
    extract(epoch FROM shardid.id_time(id) - (SELECT date_trunc('milliseconds', ahead) FROM copied)) * 1000 AS ms_after_copied;
-- (such a generator is raised to the end of its newest row's millisecond
-- at every sync, so leave it out of the counts below)
DROP TABLE sg.d;

-- Tables restored without the shard registry: create_table's DEFAULTs are
-- found from the catalog all the same.
SELECT shardid.create_shard(40);
CREATE TABLE public.sg_tpl (id bigint PRIMARY KEY, v text);
SELECT shardid.create_table('public.sg_tpl');
SELECT shardid.detach_shard(40);
INSERT INTO shard_0040.sg_tpl (id, v) VALUES (shardid.make_id((SELECT ahead FROM copied), 40, 77), 'copied');
SELECT shardid.sync_generators() AS raised;
INSERT INTO shard_0040.sg_tpl (v) VALUES ('new') RETURNING shardid.id_seq(id) AS seq, shardid.id_shard(id) AS shard;

-- Privileges: raising a generator needs its ownership (ALTER SEQUENCE).
CREATE ROLE regress_sg_reader;
GRANT USAGE ON SCHEMA sg TO regress_sg_reader;
GRANT SELECT ON ALL TABLES IN SCHEMA sg TO regress_sg_reader;
SET ROLE regress_sg_reader;
SELECT shardid.sync_generators();
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
RESET ROLE;

DROP SCHEMA sg CASCADE;
DROP SCHEMA shard_0040 CASCADE;
DROP TABLE public.sg_tpl;
DELETE FROM shardid.sharded_tables;
DROP ROLE regress_sg_reader;
