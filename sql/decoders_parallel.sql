-- decoders_parallel: the decoders in parallel plans. Parallel workers, the leader
-- and parallel index builds must decode with the leader's layout. Each
-- query runs serially, then in three parallel modes, and every parallel
-- answer must equal the serial one row for row. The database has a layout
-- of its own, so a process that decoded with any other layout (the
-- default, say) would be caught.
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
\set regress_db :DBNAME
CREATE DATABASE regress_shardid_parallel;
\c regress_shardid_parallel
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
CREATE EXTENSION shardid;
SELECT epoch, shard_bits, seq_bits FROM shardid.configure('2019-06-01 12:00:00+00', 9, 12);
SELECT shardid.create_shards(0, 3);

-- 50,000 IDs over five weeks, on every shard, with many seq values.
CREATE TABLE ids AS
SELECT g, ts, i.id, shardid.to_shortcode(i.id) AS code
  FROM generate_series(1, 50000) AS g
 CROSS JOIN LATERAL (SELECT timestamptz '2024-01-01 00:00:00+00' + g * interval '61.001 seconds') AS t(ts)
 CROSS JOIN LATERAL (SELECT shardid.make_id(t.ts, g % 512, g % 4096)) AS i(id);
ANALYZE ids;

-- The parallel settings of a mode, for the rest of the transaction:
--   serial   no parallel plan;
--   forced   debug_parallel_query = regress (force_parallel_mode before 16):
--            the serial plan under a Gather, run by one worker;
--   workers  zero parallel costs, two workers, the leader not
--            participating, so the workers decode every row;
--   leader   the same with the leader participating.
CREATE FUNCTION parallel_mode(mode text) RETURNS void
    LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config(CASE WHEN current_setting('server_version_num')::integer >= 160000
                            THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END,
                       CASE mode WHEN 'forced' THEN 'regress' ELSE 'off' END, true);
    PERFORM set_config('max_parallel_workers_per_gather',
                       CASE mode WHEN 'serial' THEN '0' ELSE '2' END, true);
    PERFORM set_config('parallel_leader_participation',
                       CASE mode WHEN 'workers' THEN 'off' ELSE 'on' END, true);
    PERFORM set_config('parallel_setup_cost', CASE WHEN mode IN ('workers', 'leader') THEN '0' ELSE '1000' END, true);
    PERFORM set_config('parallel_tuple_cost', CASE WHEN mode IN ('workers', 'leader') THEN '0' ELSE '0.1' END, true);
    PERFORM set_config('min_parallel_table_scan_size', CASE WHEN mode IN ('workers', 'leader') THEN '0' ELSE '8MB' END, true);
END
$$;

-- Runs sql (EXPLAIN ANALYZE, which executes it) and reports whether its
-- plan has a Gather and how many workers were launched. The JSON format
-- keeps this independent of how each major prints plans.
CREATE FUNCTION run_explained(sql text, OUT gather boolean, OUT launched integer)
    LANGUAGE plpgsql AS $$
DECLARE
    plan jsonb;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || sql INTO plan;
    gather := jsonb_path_exists(plan, '$.**."Node Type" ? (@ == "Gather" || @ == "Gather Merge")');
    SELECT coalesce(sum(n::text::integer), 0) INTO launched
      FROM jsonb_path_query(plan, '$.**."Workers Launched"') AS n;
END
$$;

-- How many rows are in one of two tables and not in the other (with
-- duplicates counted).
CREATE FUNCTION differing(a text, b text) RETURNS bigint
    LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    EXECUTE format('SELECT count(*) FROM ((TABLE %1$I EXCEPT ALL TABLE %2$I) UNION ALL (TABLE %2$I EXCEPT ALL TABLE %1$I)) AS d', a, b)
        INTO n;
    RETURN n;
END
$$;

-- Runs query serially and in each parallel mode (into tables), and
-- reports the number of rows, whether the workers mode planned a Gather
-- and launched workers, and how many rows of each parallel answer differ
-- from the serial one.
CREATE FUNCTION compare_plans(query text, OUT rows bigint, OUT gather boolean,
                              OUT launched boolean, OUT forced_diff bigint,
                              OUT workers_diff bigint, OUT leader_diff bigint)
    LANGUAGE plpgsql AS $$
DECLARE
    mode text;
    r record;
BEGIN
    FOREACH mode IN ARRAY ARRAY['serial', 'forced', 'workers', 'leader'] LOOP
        PERFORM parallel_mode(mode);
        SELECT * INTO r FROM run_explained(format('CREATE TABLE %I AS %s', 'answer_' || mode, query));
        IF mode = 'workers' THEN
            gather := r.gather;
            launched := r.launched > 0;
        END IF;
    END LOOP;
    PERFORM parallel_mode('serial');
    EXECUTE 'SELECT count(*) FROM answer_serial' INTO rows;
    forced_diff := differing('answer_serial', 'answer_forced');
    workers_diff := differing('answer_serial', 'answer_workers');
    leader_diff := differing('answer_serial', 'answer_leader');
    DROP TABLE answer_serial, answer_forced, answer_workers, answer_leader;
END
$$;

-- Every decoder, a filter and an aggregate on them, and the other
-- functions declared PARALLEL SAFE.
SELECT q.name, c.*
  FROM (VALUES
        ('id_time',            'SELECT id, shardid.id_time(id) FROM ids'),
        ('id_shard',           'SELECT id, shardid.id_shard(id) FROM ids'),
        ('id_seq',             'SELECT id, shardid.id_seq(id) FROM ids'),
        ('id_decode',          'SELECT id, (shardid.id_decode(id)).* FROM ids'),
        ('make_id',            'SELECT g, shardid.make_id(ts, g % 512, g % 4096) FROM ids'),
        ('time_to_id',         'SELECT g, shardid.time_to_id(ts) FROM ids'),
        ('to_shortcode',       'SELECT id, shardid.to_shortcode(id) FROM ids'),
        ('from_shortcode',     'SELECT code, shardid.from_shortcode(code) FROM ids'),
        ('where id_shard',     'SELECT id FROM ids WHERE shardid.id_shard(id) = 5'),
        ('group by id_time',   'SELECT date_trunc(''day'', shardid.id_time(id)) AS day, count(*), min(id), max(id) FROM ids GROUP BY 1'),
        ('shard_schema',       'SELECT id, shardid.shard_schema(shardid.id_shard(id) % 4) FROM ids'),
        ('_shard_schema_name', 'SELECT id, shardid_internal._shard_schema_name(shardid.id_shard(id)) FROM ids'),
        ('_state_decode',      'SELECT g, (shardid_internal._state_decode(g * 1000003::bigint)).* FROM ids')
       ) AS q(name, query)
 CROSS JOIN LATERAL compare_plans(q.query) AS c;

-- The queries above cover every function of the extension declared
-- PARALLEL SAFE; one added to this list must be added there.
SELECT p.oid::regprocedure AS parallel_safe
  FROM pg_proc AS p
  JOIN pg_depend AS d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
  JOIN pg_extension AS e ON e.oid = d.refobjid AND e.extname = 'shardid'
 WHERE p.proparallel = 's'
 ORDER BY p.oid::regprocedure::text COLLATE "C";

-- The answers decode with this database's layout (a spot check of the
-- serial answer the others were compared with).
SELECT shardid.id_time(id), shardid.id_shard(id), shardid.id_seq(id)
  FROM ids WHERE g = 50000;

-- The leader decodes in parallel mode too. With no worker to launch it
-- runs the Gather's plan itself; in a new session its first decoder call
-- comes there.
CREATE TABLE cold_serial AS SELECT id, shardid.id_time(id), shardid.id_shard(id) FROM ids;
\c regress_shardid_parallel
SET max_parallel_workers = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT * FROM run_explained('CREATE TABLE cold_leader AS SELECT id, shardid.id_time(id), shardid.id_shard(id) FROM ids');
SELECT differing('cold_serial', 'cold_leader') AS cold_leader_diff;
RESET max_parallel_workers;

-- A parallel index build evaluates the expressions in its workers and its
-- leader; amcheck's heapallindexed check recomputes every entry serially.
SET max_parallel_maintenance_workers = 2;
SET maintenance_work_mem = '256MB';
ALTER TABLE ids SET (parallel_workers = 2);
SET client_min_messages = debug1;
CREATE INDEX ids_time ON ids (shardid.id_time(id));
CREATE INDEX ids_shard_seq ON ids (shardid.id_shard(id), shardid.id_seq(id));
RESET client_min_messages;
CREATE EXTENSION amcheck;
SELECT bt_index_check('ids_time', true), bt_index_check('ids_shard_seq', true);
SET enable_seqscan = off;
SELECT count(*) FROM ids WHERE shardid.id_time(id) >= '2024-02-01+00';
SELECT count(*) FROM ids WHERE shardid.id_shard(id) = 5;
RESET enable_seqscan;

\c :regress_db
DROP DATABASE regress_shardid_parallel;
