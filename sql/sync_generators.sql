-- sync_generators(): generators raised above rows that arrived without them
-- (logical replication, a data restore). IDs depend on the clock, so the
-- checks print booleans and decoded parts relative to the copied rows.
-- It returns one row per generator raised, per DEFAULT it would not
-- read (action 'untrusted' or 'skipped') and per column it could not use
-- (action 'failed': that generator is left as it was, the others are
-- raised); nothing when all is in order.
\set SHOW_CONTEXT never
SELECT * FROM shardid.sync_generators();

CREATE SCHEMA sg;
CREATE SEQUENCE sg.gen5 AS bigint;
CREATE SEQUENCE sg.gen6 AS bigint;
CREATE TABLE sg.a (id bigint PRIMARY KEY DEFAULT shardid.next_id(5, 'sg.gen5'::regclass), v text);
CREATE TABLE sg.b (id bigint PRIMARY KEY DEFAULT shardid.next_id(5, 'sg.gen5'::regclass), v text);
CREATE TABLE sg.c (id bigint PRIMARY KEY DEFAULT shardid.next_id(6, 'sg.gen6'::regclass));
-- empty tables: nothing to raise
SELECT * FROM shardid.sync_generators();

-- Rows copied in with their IDs, as logical replication does: shard 5's
-- from a generator that ran an hour ahead of the clock, in two tables.
CREATE TEMP TABLE copied AS SELECT now() + interval '1 hour' AS ahead;
INSERT INTO sg.a (id, v) SELECT shardid.make_id((SELECT ahead FROM copied), 5, s), 'copied' FROM generate_series(1, 10) AS s;
INSERT INTO sg.b (id, v) VALUES (shardid.make_id((SELECT ahead FROM copied), 5, 500), 'copied');
INSERT INTO sg.c (id) VALUES (shardid.make_id(now() - interval '1 day', 6, 7));
-- Without a sync the generator issues below the copied rows: the defect.
SELECT shardid.next_id(5, 'sg.gen5') < (SELECT max(id) FROM sg.b) AS below_copied;

-- gen5 (above sg.b's row) and gen6 (never called) are raised; each row
-- names the column holding the largest ID
SELECT generator, action, table_name, column_name,
       max_id = (SELECT max(id) FROM sg.b) OR max_id = (SELECT max(id) FROM sg.c) AS max_id_read, detail
  FROM shardid.sync_generators();
SELECT count(*) AS rows_again FROM shardid.sync_generators();
INSERT INTO sg.a (v) VALUES ('new') RETURNING id > (SELECT max(id) FROM sg.b) AS above_copied,
    shardid.id_time(id) = (SELECT date_trunc('milliseconds', ahead) FROM copied) AS same_ms,
    shardid.id_seq(id) AS seq, shardid.id_shard(id) AS shard;

-- A state already above the rows is never lowered.
SELECT setval('sg.gen5', (SELECT last_value FROM sg.gen5) + 100000) AS set_to \gset
SELECT count(*) AS raised FROM shardid.sync_generators() WHERE action = 'raised';
SELECT last_value = :set_to AS unchanged FROM sg.gen5;

-- Every generator on its own (issue 27, finding 4: in 0.2 one bad row in
-- one shard's table made the whole call fail, with the generators visited
-- before it raised). A negative ID, then an ID of another shard (what
-- another layout's IDs look like) in sg.c: its generator gen6 is reported
-- 'failed' and left as it was; gen5, with a newer row in sg.b, is still
-- raised in the same call, which does not fail.
SELECT last_value AS gen6_before FROM sg.gen6 \gset
INSERT INTO sg.c (id) VALUES (-5);
INSERT INTO sg.b (id, v) VALUES (shardid.make_id((SELECT ahead FROM copied) + interval '1 minute', 5, 1), 'newer');
SELECT generator, action, table_name, column_name, detail FROM shardid.sync_generators();
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT last_value = :gen6_before AS gen6_unchanged, shardid.id_time(shardid.next_id(5, 'sg.gen5')) >= (SELECT date_trunc('milliseconds', ahead + interval '1 minute') FROM copied) AS gen5_raised FROM sg.gen6;
DELETE FROM sg.c WHERE id < 0;
INSERT INTO sg.c (id) VALUES (shardid.make_id('2040-01-01 00:00:00+00', 9, 1));
INSERT INTO sg.b (id, v) VALUES (shardid.make_id((SELECT ahead FROM copied) + interval '2 minutes', 5, 1), 'newer');
SELECT generator, action, table_name, column_name, detail FROM shardid.sync_generators();
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT last_value = :gen6_before AS gen6_unchanged, shardid.id_time(shardid.next_id(5, 'sg.gen5')) >= (SELECT date_trunc('milliseconds', ahead + interval '2 minutes') FROM copied) AS gen5_raised FROM sg.gen6;
DELETE FROM sg.c WHERE shardid.id_shard(id) = 9;
DELETE FROM sg.b WHERE v = 'newer';

-- A DEFAULT whose shard is not a literal: the copied row's whole
-- millisecond is skipped, so the next ID starts the next millisecond.
CREATE SEQUENCE sg.gen7 AS bigint;
CREATE TABLE sg.d (id bigint PRIMARY KEY DEFAULT shardid.next_id(2 + 1, 'sg.gen7'::regclass));
INSERT INTO sg.d (id) VALUES (shardid.make_id((SELECT ahead FROM copied), 3, 10));
SELECT generator, action, table_name FROM shardid.sync_generators();
INSERT INTO sg.d DEFAULT VALUES RETURNING shardid.id_seq(id) AS seq,
    extract(epoch FROM shardid.id_time(id) - (SELECT date_trunc('milliseconds', ahead) FROM copied)) * 1000 AS ms_after_copied;
-- (such a generator is raised to the end of its newest row's millisecond
-- at every sync, so leave it out of the counts below)
DROP TABLE sg.d;

-- Tables restored without the shard registry: create_table's DEFAULTs are
-- found from the catalog all the same (their owner may update the generator).
SELECT shardid.create_shard(40);
CREATE TABLE public.sg_tpl (id bigint PRIMARY KEY, v text);
SELECT shardid.create_table('public.sg_tpl');
SELECT shardid.detach_shard(40);
INSERT INTO shard_0040.sg_tpl (id, v) VALUES (shardid.make_id((SELECT ahead FROM copied), 40, 77), 'copied');
SELECT generator, action, table_name FROM shardid.sync_generators();
INSERT INTO shard_0040.sg_tpl (v) VALUES ('new') RETURNING shardid.id_seq(id) AS seq, shardid.id_shard(id) AS shard;
SELECT shardid.attach_shard(40);

-- Which DEFAULTs it trusts (issue 19). A role that may create tables in its
-- own schema only names shard 40's generator by OID (a numeric regclass
-- literal needs no privilege on it) and stores the last ID of the layout.
-- Trusting it would move shard 40's generator to the end of the layout, and
-- every insert into shard 40 would fail: the DEFAULT is reported, never read.
CREATE ROLE regress_sg_mallory;
CREATE SCHEMA mallory AUTHORIZATION regress_sg_mallory;
SELECT 'shard_0040.id_seq'::regclass::oid AS gen40 \gset
SELECT last_value AS gen40_before FROM shard_0040.id_seq \gset
SET ROLE regress_sg_mallory;
CREATE TABLE mallory.bait (id bigint DEFAULT shardid.next_id(40, :'gen40'::regclass));
INSERT INTO mallory.bait VALUES (shardid.make_id((shardid.layout()).last_time, 40, 1023));
RESET ROLE;
SELECT generator, action, table_name, column_name, max_id, detail FROM shardid.sync_generators();
SELECT last_value = :gen40_before AS gen40_unchanged FROM shard_0040.id_seq;
INSERT INTO shard_0040.sg_tpl (v) VALUES ('after the bait') RETURNING shardid.id_shard(id) AS shard;
-- A negative ID in the bait cannot make sync_generators() fail for
-- everyone either: it is never read.
SET ROLE regress_sg_mallory;
INSERT INTO mallory.bait VALUES (-5);
RESET ROLE;
SELECT generator, action, table_name FROM shardid.sync_generators();
-- Her own generator, with her own table, is hers to raise.
SET ROLE regress_sg_mallory;
CREATE SEQUENCE mallory.gen AS bigint;
CREATE TABLE mallory.own (id bigint DEFAULT shardid.next_id(41, 'mallory.gen'::regclass));
RESET ROLE;
INSERT INTO mallory.own VALUES (shardid.make_id((SELECT ahead FROM copied), 41, 3));
SELECT generator, action, table_name FROM shardid.sync_generators();
SELECT shardid.id_seq(shardid.next_id(41, 'mallory.gen')) AS seq_after_copied;
DROP TABLE mallory.bait;

-- Adopted tables are trusted through the registry, even when their owner
-- may not update the generator; another shard's number in a DEFAULT in
-- that schema is not.
CREATE ROLE regress_sg_app;
CREATE SCHEMA sga AUTHORIZATION regress_sg_app;
CREATE SEQUENCE sga.gen AS bigint;
SET ROLE regress_sg_app;
CREATE TABLE sga.legacy (id bigint PRIMARY KEY);
RESET ROLE;
SELECT shardid.adopt('sga.legacy', 42, 'sga.gen') AS adopted_max;
INSERT INTO sga.legacy (id) VALUES (shardid.make_id((SELECT ahead FROM copied), 42, 9));
SET ROLE regress_sg_app;
CREATE TABLE sga.other (id bigint DEFAULT shardid.next_id(43, 'sga.gen'::regclass));
INSERT INTO sga.other VALUES (shardid.make_id((shardid.layout()).last_time, 43, 1));
RESET ROLE;
SELECT has_sequence_privilege('regress_sg_app', 'sga.gen', 'UPDATE') AS app_may_update;
SELECT generator, action, table_name, column_name, max_id IS NULL AS not_read, detail FROM shardid.sync_generators();

-- Temporary tables are never read (another session's cannot be, and no
-- row arrives in one by replication); a column that is not bigint is
-- reported.
CREATE TEMP TABLE sg_tmp (id bigint DEFAULT shardid.next_id(5, 'sg.gen5'::regclass));
INSERT INTO sg_tmp VALUES (shardid.make_id((shardid.layout()).last_time, 5, 1));
CREATE TABLE sg.n (id numeric DEFAULT shardid.next_id(6, 'sg.gen6'::regclass));
SELECT generator, action, table_name, column_name, max_id, detail FROM shardid.sync_generators();
DROP TABLE sg_tmp, sg.n;

-- Privileges: reading the tables needs SELECT, raising a generator UPDATE
-- on its sequence (as setval()). What the caller may not do fails for that
-- generator alone, reported with its error.
CREATE ROLE regress_sg_reader;
GRANT USAGE ON SCHEMA sg TO regress_sg_reader;
GRANT SELECT ON ALL TABLES IN SCHEMA sg TO regress_sg_reader;
INSERT INTO sg.c (id) VALUES (shardid.make_id((SELECT ahead FROM copied), 6, 900));
SET ROLE regress_sg_reader;
SELECT generator, action, table_name, column_name, detail FROM shardid.sync_generators();
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
RESET ROLE;

SET client_min_messages = warning;
DROP SCHEMA sg, sga, mallory CASCADE;
SELECT shardid.detach_shard(40);
SELECT shardid.detach_shard(42);
DROP SCHEMA shard_0040 CASCADE;
DELETE FROM shardid.sharded_tables;
DROP TABLE public.sg_tpl;
DROP ROLE regress_sg_reader, regress_sg_mallory, regress_sg_app;
RESET client_min_messages;

-- Row-level security would hide rows from the max: that generator fails
-- (42501) rather than being raised too little.
CREATE ROLE regress_sg_owner;
CREATE SCHEMA sgr AUTHORIZATION regress_sg_owner;
SET ROLE regress_sg_owner;
CREATE SEQUENCE sgr.gen AS bigint;
CREATE TABLE sgr.t (id bigint DEFAULT shardid.next_id(44, 'sgr.gen'::regclass), secret boolean);
ALTER TABLE sgr.t ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
CREATE POLICY hide ON sgr.t USING (NOT secret);
RESET ROLE;
INSERT INTO sgr.t VALUES (shardid.make_id((SELECT ahead FROM copied), 44, 1), false),
                         (shardid.make_id((SELECT ahead FROM copied), 44, 2), true);
-- (a superuser reads every row)
SELECT generator, action, table_name FROM shardid.sync_generators();
SELECT setval('sgr.gen', 1, false) IS NOT NULL AS reset;
SET ROLE regress_sg_owner;
SELECT generator, action, table_name, detail FROM shardid.sync_generators();
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
RESET ROLE;

SET client_min_messages = warning;
DROP SCHEMA sgr CASCADE;
DROP ROLE regress_sg_owner;
RESET client_min_messages;

-- _raise_generator(), its primitive: raises, never lowers, under setval()'s
-- privilege (UPDATE to raise; SELECT, USAGE or UPDATE to compare), only a
-- permanent generator, only to a state of the layout.
CREATE SEQUENCE public.sg_raise AS bigint;
SELECT shardid_internal._raise_generator('public.sg_raise', 1000) AS raised;
SELECT last_value, is_called FROM public.sg_raise;
SELECT shardid_internal._raise_generator('public.sg_raise', 999) AS raised;
SELECT last_value FROM public.sg_raise;
SELECT shardid_internal._raise_generator('public.sg_raise', 1000) AS raised;
CREATE ROLE regress_sg_raiser;
SET ROLE regress_sg_raiser;
SELECT shardid_internal._raise_generator('public.sg_raise', 2000);
RESET ROLE;
GRANT SELECT ON public.sg_raise TO regress_sg_raiser;
SET ROLE regress_sg_raiser;
SELECT shardid_internal._raise_generator('public.sg_raise', 999) AS raised;
SELECT shardid_internal._raise_generator('public.sg_raise', 2000);
RESET ROLE;
GRANT UPDATE ON public.sg_raise TO regress_sg_raiser;
SET ROLE regress_sg_raiser;
SELECT shardid_internal._raise_generator('public.sg_raise', 2000) AS raised;
RESET ROLE;
SELECT shardid_internal._raise_generator('public.sg_raise', -1);
SELECT shardid_internal._raise_generator('public.sg_raise', (1::bigint << 50));
CREATE TEMP SEQUENCE sg_temp_seq;
SELECT shardid_internal._raise_generator('sg_temp_seq', 5);
SELECT shardid_internal._raise_generator('pg_class', 5);
SELECT last_value FROM public.sg_raise;
DROP SEQUENCE public.sg_raise;
DROP ROLE regress_sg_raiser;
