-- Every procedure of shardid commits, so each refuses a transaction block,
-- a function, an EXCEPTION block and a multi-statement query string with
-- 25001 and its own message, before it does anything (issue 30): never
-- PostgreSQL's bare "invalid transaction termination" (2D000) after work
-- that is then rolled back.
SET client_min_messages = warning;
\set SHOW_CONTEXT never
SELECT count(*) AS procedures FROM pg_proc
 WHERE pronamespace IN ('shardid'::regnamespace, 'shardid_internal'::regnamespace) AND prokind = 'p';

BEGIN;
CALL shardid.move_shard(1, 'b');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
CALL shardid.abort_move(1);
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
CALL shardid.rebalance();
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
CALL shardid_internal._move_rollback(1);
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
CALL shardid.drain_node('b');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
CALL shardid.drop_retired_copies();
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
CALL shardid_internal._rebalance_job_run(1);
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
CALL shardid.create_shards_proc(0, 3);
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
CALL shardid.create_table_proc('pg_catalog.pg_class');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
CALL shardid_internal._apply_ddl_router('public.t', 'ALTER TABLE %s ADD COLUMN c int', shardid_internal._ddl_options('{}'));
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
CALL shardid_internal._apply_ddl_concurrently(NULL, 1, 1, shardid_internal._ddl_options('{}'), NULL, '{0,0}');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;

-- Bad options count for nothing inside a transaction block: 25001 first.
BEGIN;
CALL shardid.rebalance('by_disk_size');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;

-- In a function, in an EXCEPTION block, after another statement of the
-- same query string.
CREATE FUNCTION public.rebalance_in_a_function() RETURNS void LANGUAGE plpgsql
    AS $$ BEGIN CALL shardid.rebalance(); END $$;
SELECT public.rebalance_in_a_function();
\echo :LAST_ERROR_SQLSTATE
DROP FUNCTION public.rebalance_in_a_function();
DO $$ BEGIN CALL shardid.move_shard(1, 'b'); EXCEPTION WHEN division_by_zero THEN NULL; END $$;
\echo :LAST_ERROR_SQLSTATE
DO $$ BEGIN CALL shardid.abort_move(1); EXCEPTION WHEN division_by_zero THEN NULL; END $$;
\echo :LAST_ERROR_SQLSTATE
SELECT 1 AS first_statement \; CALL shardid.rebalance('by_count');
\echo :LAST_ERROR_SQLSTATE
SELECT 1 AS first_statement \; CALL shardid.move_shard(1, 'b');
\echo :LAST_ERROR_SQLSTATE

-- Each procedure checks first: none runs a statement before it (the
-- check is the first statement of its body, up to its first comma here).
SELECT p.proname,
       pg_catalog.split_part(pg_catalog.ltrim(pg_catalog.split_part(pg_catalog.split_part(p.prosrc, 'BEGIN', 2), E'\n', 2)), ',', 1) AS first_statement
  FROM pg_proc AS p
 WHERE p.pronamespace IN ('shardid'::regnamespace, 'shardid_internal'::regnamespace) AND p.prokind = 'p'
 ORDER BY 1;
