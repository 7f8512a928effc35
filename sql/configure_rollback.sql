-- configure_rollback: next_id() refuses to run in the transaction that
-- changed the layout, so a rollback cannot leave a generator state (or the
-- freeze) in the units of a layout that never took effect.
SET client_min_messages = warning;
SET timezone = 'UTC';
\set regress_db :DBNAME
DROP DATABASE IF EXISTS regress_configure_rollback;
CREATE DATABASE regress_configure_rollback;
\c regress_configure_rollback
SET client_min_messages = warning;
SET timezone = 'UTC';
\set SHOW_CONTEXT never
CREATE EXTENSION shardid;
CREATE SEQUENCE public.g AS bigint;

-- configure() then next_id() in one transaction: refused, then rolled back.
BEGIN;
SELECT epoch FROM shardid.configure('2010-08-24 21:07:01.721+00');
SELECT shardid.next_id(1, 'public.g'::regclass);
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
-- nothing happened: default layout, not in use, generator untouched
SELECT epoch, in_use FROM shardid.layout();
SELECT last_value, is_called FROM public.g;
-- the next ID is in the committed layout, at the current time
SELECT shardid.id_time(shardid.next_id(1, 'public.g'::regclass))
       BETWEEN now() - interval '1 minute' AND clock_timestamp() + interval '3 seconds' AS id_time_now;
SELECT (SELECT last_value FROM public.g) >> 10
       BETWEEN (extract(epoch FROM now() - interval '1 minute') * 1000)::bigint - 1314220021721
           AND (extract(epoch FROM clock_timestamp() + interval '3 seconds') * 1000)::bigint - 1314220021721
       AS state_in_default_units;

-- Other bit counts, and a savepoint rolled back: still refused.
\c :regress_db
SET client_min_messages = warning;
DROP DATABASE regress_configure_rollback;
CREATE DATABASE regress_configure_rollback;
\c regress_configure_rollback
SET client_min_messages = warning;
SET timezone = 'UTC';
\set SHOW_CONTEXT never
CREATE EXTENSION shardid;
CREATE SEQUENCE public.g AS bigint;
BEGIN;
SAVEPOINT s;
SELECT time_bits FROM shardid.configure('2024-01-01+00', 16, 8);
ROLLBACK TO SAVEPOINT s;
SELECT shardid.next_id(1, 'public.g'::regclass);
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
SELECT shard_bits, seq_bits, in_use FROM shardid.layout();
SELECT is_called FROM public.g;

-- A layout committed earlier, then deleted in the transaction (rows gone
-- are caught by the trigger, not the visible row): refused as well.
SELECT time_bits FROM shardid.configure('2024-01-01+00', 16, 8);
BEGIN;
DELETE FROM shardid.layout_config;
SELECT shardid.next_id(1, 'public.g'::regclass);
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
-- after the commit, a new transaction generates in the committed layout
SELECT shard_bits, seq_bits, in_use FROM shardid.layout();
SELECT shardid.id_shard(shardid.next_id(60000, 'public.g'::regclass)) AS shard_16_bits;
SELECT in_use FROM shardid.layout();
-- and configure() in a transaction after next_id() is refused as before
BEGIN;
SELECT shardid.next_id(1, 'public.g'::regclass) > 0 AS issued;
SELECT shardid.configure('2024-01-01+00');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;

\c :regress_db
SET client_min_messages = warning;
DROP DATABASE regress_configure_rollback;
