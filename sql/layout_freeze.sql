-- layout_freeze: once IDs have been issued the layout cannot change, by
-- configure() or by any write to shardid.layout_config, whatever setval()
-- did to the marker shardid.ids_issued. Writes that keep the layout pass.
SET client_min_messages = warning;
\set regress_db :DBNAME
DROP DATABASE IF EXISTS regress_layout_freeze;
DROP DATABASE IF EXISTS regress_layout_freeze_default;
DROP DATABASE IF EXISTS regress_layout_freeze_generators;
CREATE DATABASE regress_layout_freeze;
\c regress_layout_freeze
SET client_min_messages = warning;
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
\set SHOW_CONTEXT never
CREATE EXTENSION shardid;

-- Before any ID the layout may be written directly, as a restore does.
INSERT INTO shardid.layout_config VALUES (true, 1577836800000, 12, 11);
SELECT epoch, shard_bits, seq_bits, in_use FROM shardid.layout();
UPDATE shardid.layout_config SET shard_bits = 14, seq_bits = 9;
DELETE FROM shardid.layout_config;
SELECT shard_bits, seq_bits FROM shardid.configure('2020-01-01+00', 12, 11);

CREATE SEQUENCE public.g AS bigint;
CREATE TABLE public.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(5, 'public.g'::regclass), v int);
INSERT INTO public.t (v) VALUES (1), (2), (3);
-- the first ID wrote the freeze record, with the layout
SELECT count(*) AS records, min(epoch_ms) AS epoch_ms, min(shard_bits) AS shard_bits,
       min(seq_bits) AS seq_bits, min(issued_at) > now() - interval '1 hour' AS recent
  FROM shardid.layout_freeze;

-- The marker set back to "never issued": configure() still refuses, as it
-- does with the layout in force.
SELECT setval('shardid.ids_issued', 1, false);
SELECT is_called FROM shardid.ids_issued;
SELECT in_use FROM shardid.layout();
SELECT shardid.configure('2021-01-01+00', 12, 11);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.configure('2020-01-01+00', 12, 11);
\echo :LAST_ERROR_SQLSTATE

-- Writes to layout_config that change the layout are refused ...
UPDATE shardid.layout_config SET shard_bits = 13;
\echo :LAST_ERROR_SQLSTATE
DELETE FROM shardid.layout_config;
\echo :LAST_ERROR_SQLSTATE
TRUNCATE shardid.layout_config;
\echo :LAST_ERROR_SQLSTATE
INSERT INTO shardid.layout_config VALUES (true, 1577836800000, 12, 12)
    ON CONFLICT (singleton) DO UPDATE SET seq_bits = excluded.seq_bits;
\echo :LAST_ERROR_SQLSTATE
-- ... also with session_replication_role = replica, as replication applies rows
SET session_replication_role = replica;
UPDATE shardid.layout_config SET seq_bits = 12;
\echo :LAST_ERROR_SQLSTATE
RESET session_replication_role;
-- ... while writes that keep it pass: an UPDATE to the same values, and an
-- INSERT of the row already there, skipped rather than a duplicate key.
UPDATE shardid.layout_config SET shard_bits = 12;
INSERT INTO shardid.layout_config VALUES (true, 1577836800000, 12, 11);
SELECT epoch, shard_bits, seq_bits FROM shardid.layout();
SELECT count(*) AS config_rows FROM shardid.layout_config;
SELECT shardid.id_shard(id) AS shard, count(*) FROM public.t GROUP BY 1;

-- The freeze record cannot be removed, by any session.
DELETE FROM shardid.layout_freeze;
\echo :LAST_ERROR_SQLSTATE
UPDATE shardid.layout_freeze SET shard_bits = 13;
\echo :LAST_ERROR_SQLSTATE
TRUNCATE shardid.layout_freeze;
\echo :LAST_ERROR_SQLSTATE
SET session_replication_role = replica;
DELETE FROM shardid.layout_freeze;
\echo :LAST_ERROR_SQLSTATE
RESET session_replication_role;
SELECT count(*) AS records FROM shardid.layout_freeze;

-- The default layout (no row): an INSERT into the empty table after IDs is
-- the re-layout of the review (an old ID then decodes to another shard).
\c :regress_db
SET client_min_messages = warning;
CREATE DATABASE regress_layout_freeze_default;
\c regress_layout_freeze_default
SET client_min_messages = warning;
\set SHOW_CONTEXT never
CREATE EXTENSION shardid;
CREATE SEQUENCE public.g AS bigint;
CREATE TABLE public.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(5, 'public.g'::regclass));
-- a freeze record rolled back is written again by the next transaction
BEGIN;
INSERT INTO public.t DEFAULT VALUES;
SELECT count(*) AS records_in_transaction FROM shardid.layout_freeze;
ROLLBACK;
SELECT count(*) AS records_after_rollback FROM shardid.layout_freeze;
INSERT INTO public.t DEFAULT VALUES;
INSERT INTO public.t DEFAULT VALUES;
SELECT count(*) AS records FROM shardid.layout_freeze;
\c regress_layout_freeze_default
SET client_min_messages = warning;
\set SHOW_CONTEXT never
INSERT INTO public.t DEFAULT VALUES;
SELECT count(*) AS records, count(*) FILTER (WHERE shard_bits = 13 AND seq_bits = 10) AS default_layout
  FROM shardid.layout_freeze;
SELECT setval('shardid.ids_issued', 1, false);
INSERT INTO shardid.layout_config VALUES (true, 1577836800000, 12, 11);
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS config_rows FROM shardid.layout_config;
SELECT DISTINCT shardid.id_shard(id) AS shard FROM public.t;
-- the default layout written out, and removed again, changes nothing
INSERT INTO shardid.layout_config VALUES (true, 1314220021721, 13, 10);
DELETE FROM shardid.layout_config;
SELECT count(*) AS config_rows FROM shardid.layout_config;

-- Generators holding a state (a restored or replicated sequence value) count
-- as issued IDs, with no marker and no freeze record: sequences named by a
-- next_id() DEFAULT, and registered shard generators.
\c :regress_db
SET client_min_messages = warning;
CREATE DATABASE regress_layout_freeze_generators;
\c regress_layout_freeze_generators
SET client_min_messages = warning;
\set SHOW_CONTEXT never
CREATE EXTENSION shardid;
SELECT shardid.create_shards(0, 1);
CREATE SEQUENCE public.g AS bigint;
CREATE TABLE public.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(5, 'public.g'::regclass));
SELECT in_use FROM shardid.layout();
SELECT setval('shard_0001.id_seq', 12345);
SELECT shardid.configure('2021-01-01+00');
\echo :LAST_ERROR_SQLSTATE
SELECT setval('shard_0001.id_seq', 1, false);
SELECT setval('public.g', 42);
INSERT INTO shardid.layout_config VALUES (true, 1577836800000, 12, 11);
\echo :LAST_ERROR_SQLSTATE
SELECT setval('public.g', 1, false);
SELECT shard_bits FROM shardid.configure('2021-01-01+00');
SELECT count(*) AS records FROM shardid.layout_freeze;

\c :regress_db
SET client_min_messages = warning;
DROP DATABASE regress_layout_freeze;
DROP DATABASE regress_layout_freeze_default;
DROP DATABASE regress_layout_freeze_generators;
