-- next_id_errors: everything next_id() refuses, each with its SQLSTATE.
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
\set VERBOSITY default
\set SHOW_CONTEXT never

CREATE SEQUENCE errors_gen;
SELECT shardid.id_shard(shardid.next_id(0, 'errors_gen')) AS works;

-- NULL in, NULL out.
SELECT shardid.next_id(NULL, 'errors_gen') IS NULL AS null_shard,
       shardid.next_id(1, NULL) IS NULL AS null_sequence;

-- Shard out of range for the layout; checked before the relation.
SELECT shardid.next_id(8192, 'errors_gen');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.next_id(-1, 'errors_gen');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.next_id(8192, 'pg_class');
\echo :LAST_ERROR_SQLSTATE

-- Relations that are not sequences.
CREATE TABLE errors_table (id bigint);
CREATE VIEW errors_view AS SELECT 1 AS one;
CREATE INDEX errors_index ON errors_table (id);
SELECT shardid.next_id(1, 'errors_table');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.next_id(1, 'errors_view');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.next_id(1, 'errors_index');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.next_id(1, 'pg_catalog.pg_class');
\echo :LAST_ERROR_SQLSTATE
-- a relation that does not exist
SELECT shardid.next_id(1, 'errors_missing');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.next_id(1, 4294967295::oid::regclass);
\echo :LAST_ERROR_SQLSTATE
DROP TABLE errors_table;
DROP VIEW errors_view;

-- Sequences a crash would reset.
CREATE TEMP SEQUENCE errors_temp;
SELECT shardid.next_id(1, 'errors_temp');
\echo :LAST_ERROR_SQLSTATE
CREATE UNLOGGED SEQUENCE errors_unlogged;
SELECT shardid.next_id(1, 'errors_unlogged');
\echo :LAST_ERROR_SQLSTATE
-- once made permanent it works
ALTER SEQUENCE errors_unlogged SET LOGGED;
SELECT shardid.id_shard(shardid.next_id(1, 'errors_unlogged')) AS logged_now;
DROP SEQUENCE errors_temp;
DROP SEQUENCE errors_unlogged;

-- Sequences too small for the state (2^50 - 1 with the default layout).
CREATE SEQUENCE errors_int AS integer;
SELECT shardid.next_id(1, 'errors_int');
\echo :LAST_ERROR_SQLSTATE
CREATE SEQUENCE errors_small AS smallint;
SELECT shardid.next_id(1, 'errors_small');
\echo :LAST_ERROR_SQLSTATE
CREATE SEQUENCE errors_max AS bigint MAXVALUE 1125899906842622;
SELECT shardid.next_id(1, 'errors_max');
\echo :LAST_ERROR_SQLSTATE
-- exactly the largest state is enough
ALTER SEQUENCE errors_max MAXVALUE 1125899906842623;
SELECT shardid.id_shard(shardid.next_id(1, 'errors_max')) AS max_is_enough;
ALTER SEQUENCE errors_int AS bigint MAXVALUE 9223372036854775807;
SELECT shardid.id_shard(shardid.next_id(2, 'errors_int')) AS fixed_by_the_hint;
DROP SEQUENCE errors_int;
DROP SEQUENCE errors_small;
DROP SEQUENCE errors_max;

-- Privileges: USAGE or UPDATE on the sequence, as nextval() needs.
CREATE ROLE regress_shardid_writer;
CREATE SEQUENCE errors_priv;
SET ROLE regress_shardid_writer;
SELECT shardid.next_id(1, 'errors_priv');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
GRANT SELECT ON SEQUENCE errors_priv TO regress_shardid_writer;
SET ROLE regress_shardid_writer;
SELECT shardid.next_id(1, 'errors_priv');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
GRANT USAGE ON SEQUENCE errors_priv TO regress_shardid_writer;
SET ROLE regress_shardid_writer;
SELECT shardid.id_shard(shardid.next_id(1, 'errors_priv')) AS with_usage;
RESET ROLE;
REVOKE USAGE ON SEQUENCE errors_priv FROM regress_shardid_writer;
GRANT UPDATE ON SEQUENCE errors_priv TO regress_shardid_writer;
SET ROLE regress_shardid_writer;
SELECT shardid.id_shard(shardid.next_id(1, 'errors_priv')) AS with_update;
RESET ROLE;
REVOKE ALL ON SEQUENCE errors_priv FROM regress_shardid_writer;
-- the check is made again in a new transaction
SET ROLE regress_shardid_writer;
SELECT shardid.next_id(1, 'errors_priv');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
-- within one transaction, a role change or a REVOKE is checked again
BEGIN;
SELECT shardid.id_shard(shardid.next_id(1, 'errors_priv')) AS as_superuser;
SET ROLE regress_shardid_writer;
SELECT shardid.next_id(1, 'errors_priv');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
GRANT USAGE ON SEQUENCE errors_priv TO regress_shardid_writer;
BEGIN;
SET ROLE regress_shardid_writer;
SELECT shardid.id_shard(shardid.next_id(1, 'errors_priv')) AS granted;
RESET ROLE;
REVOKE USAGE ON SEQUENCE errors_priv FROM regress_shardid_writer;
SET ROLE regress_shardid_writer;
SELECT shardid.next_id(1, 'errors_priv');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
-- a SECURITY DEFINER caller does not lend its check to the invoker
REVOKE USAGE ON SEQUENCE errors_priv FROM regress_shardid_writer;
CREATE FUNCTION errors_definer_id() RETURNS bigint
    LANGUAGE sql SECURITY DEFINER AS $$ SELECT shardid.next_id(1, 'errors_priv') $$;
GRANT EXECUTE ON FUNCTION errors_definer_id() TO regress_shardid_writer;
SET ROLE regress_shardid_writer;
BEGIN;
SELECT shardid.id_shard(errors_definer_id()) AS through_definer;
SELECT shardid.next_id(1, 'errors_priv');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
RESET ROLE;
DROP FUNCTION errors_definer_id();
-- a sequence made UNLOGGED in the same transaction is refused from then on
BEGIN;
SELECT shardid.id_shard(shardid.next_id(1, 'errors_priv')) AS while_logged;
ALTER SEQUENCE errors_priv SET UNLOGGED;
SELECT shardid.next_id(1, 'errors_priv');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
DROP SEQUENCE errors_priv;
DROP ROLE regress_shardid_writer;

-- Read-only transactions.
BEGIN READ ONLY;
SELECT shardid.next_id(1, 'errors_gen');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
SET default_transaction_read_only = on;
SELECT shardid.next_id(1, 'errors_gen');
\echo :LAST_ERROR_SQLSTATE
RESET default_transaction_read_only;
-- a read-only transaction may still decode
BEGIN READ ONLY;
SELECT shardid.id_shard(11637205501278089) AS decodes;
COMMIT;

-- Once IDs have been issued, the layout cannot change.
SELECT shardid.configure('2011-08-24 21:07:01.721+00', 13, 10);
\echo :LAST_ERROR_SQLSTATE
SELECT in_use FROM shardid.layout();
DROP SEQUENCE errors_gen;

-- A layout that has already ended: the generator fails, it does not wrap.
\set regress_db :DBNAME
CREATE DATABASE regress_shardid_ended;
\c regress_shardid_ended
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
\set VERBOSITY default
\set SHOW_CONTEXT never
CREATE EXTENSION shardid;
SELECT last_time FROM shardid.configure('1970-01-01+00', 14, 14);
CREATE SEQUENCE ended_gen;
SELECT shardid.next_id(0, 'ended_gen');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.make_id('1971-02-02 16:22:18.367+00', 16383, 16383) AS last_id;
SELECT shardid.make_id('1971-02-02 16:22:18.368+00', 0, 0);
\echo :LAST_ERROR_SQLSTATE
-- the failed call issued nothing, so the layout is not frozen
SELECT in_use FROM shardid.layout();
SELECT is_called FROM ended_gen;

-- A layout whose epoch is still to come: the clock is before it.
CREATE DATABASE regress_shardid_future;
\c regress_shardid_future
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
CREATE EXTENSION shardid;
SELECT epoch FROM shardid.configure('9999-01-01+00', 13, 10);
CREATE SEQUENCE future_gen;
DO $$
DECLARE
    detail text;
BEGIN
    PERFORM shardid.next_id(0, 'future_gen');
    RAISE NOTICE 'no error';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
    RAISE NOTICE 'SQLSTATE %: %', SQLSTATE,
        regexp_replace(SQLERRM, '^the clock reads \d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?\+00,',
                       'the clock reads <now>,');
    RAISE NOTICE 'DETAIL: %', detail;
END
$$;

\c :regress_db
DROP DATABASE regress_shardid_ended;
DROP DATABASE regress_shardid_future;
