-- ids_issued: the layout freezes when an ID is really issued, not when a
-- next_id() call fails, and no ordinary role can advance the marker.
SET client_min_messages = warning;
\set regress_db :DBNAME
DROP DATABASE IF EXISTS regress_ids_issued;
DROP ROLE IF EXISTS regress_marker_role;
CREATE DATABASE regress_ids_issued;
CREATE ROLE regress_marker_role;
\c regress_ids_issued
SET client_min_messages = warning;
\set SHOW_CONTEXT never
CREATE EXTENSION shardid;
CREATE SEQUENCE public.g AS bigint;
CREATE SEQUENCE public.small AS integer;
CREATE TEMP SEQUENCE tmp_g;

-- Calls refused by a check issue nothing and leave the layout free.
SELECT shardid.next_id(0, 'pg_class');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.next_id(8192, 'public.g'::regclass);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.next_id(0, 'public.small'::regclass);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.next_id(0, 'tmp_g'::regclass);
\echo :LAST_ERROR_SQLSTATE
SET ROLE regress_marker_role;
SELECT shardid.next_id(0, 'public.g'::regclass);
\echo :LAST_ERROR_SQLSTATE
-- the marker is readable but cannot be advanced or set by an ordinary role
SELECT in_use FROM shardid.layout();
SELECT nextval('shardid.ids_issued');
\echo :LAST_ERROR_SQLSTATE
SELECT setval('shardid.ids_issued', 1);
\echo :LAST_ERROR_SQLSTATE
SELECT is_called FROM shardid.ids_issued;
RESET ROLE;
-- the clock before the epoch: refused, nothing issued
SELECT (shardid.configure('2200-01-01+00')).epoch IS NOT NULL AS configured;
\set VERBOSITY sqlstate
SELECT shardid.next_id(0, 'public.g'::regclass);
\set VERBOSITY default
SELECT in_use FROM shardid.layout();
SELECT last_value, is_called FROM public.g;
-- so the layout can still change
SELECT shard_bits FROM shardid.configure('2011-08-24 21:07:01.721+00', 13, 10);

-- The first ID issued, here by an ordinary role with USAGE on its
-- sequence, freezes the layout (even if its transaction rolls back).
GRANT USAGE ON SEQUENCE public.g TO regress_marker_role;
SET ROLE regress_marker_role;
BEGIN;
SELECT shardid.id_shard(shardid.next_id(3, 'public.g'::regclass)) AS shard;
ROLLBACK;
SELECT in_use FROM shardid.layout();
RESET ROLE;
SELECT shardid.configure('2012-01-01+00');
\echo :LAST_ERROR_SQLSTATE
-- a second backend issues with the frozen layout
\c regress_ids_issued
SELECT shardid.id_shard(shardid.next_id(4, 'public.g'::regclass)) AS shard;
SELECT has_sequence_privilege('public', 'shardid.ids_issued', 'USAGE') AS public_usage,
       has_sequence_privilege('public', 'shardid.ids_issued', 'UPDATE') AS public_update,
       has_sequence_privilege('public', 'shardid.ids_issued', 'SELECT') AS public_select;

\c :regress_db
SET client_min_messages = warning;
DROP DATABASE regress_ids_issued;
DROP ROLE regress_marker_role;
