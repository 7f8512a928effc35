-- time_partitions: PARTITION BY RANGE (id) with time_to_id() bounds, made by
-- create_time_partitions(); a time window prunes to its partitions.
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
\set VERBOSITY default
\set SHOW_CONTEXT never

CREATE TABLE public.tp_events (id bigint PRIMARY KEY, body text) PARTITION BY RANGE (id);
SELECT p FROM shardid.create_time_partitions('public.tp_events', '2024-01-01', '2024-01-04', '1 day') AS p;
-- again, overlapping: only the missing days are created
SELECT p FROM shardid.create_time_partitions('public.tp_events', '2024-01-03', '2024-01-06', '1 day') AS p;
SELECT c.oid::regclass AS partition, pg_get_expr(c.relpartbound, c.oid) AS bound
  FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid
 WHERE i.inhparent = 'public.tp_events'::regclass ORDER BY c.relname;

-- Rows land in the partition of their time.
INSERT INTO public.tp_events (id, body)
SELECT shardid.make_id('2024-01-01'::timestamptz + g * interval '7 hours', g % 8, 0), 'event ' || g
  FROM generate_series(0, 15) AS g;
SELECT tableoid::regclass AS partition, count(*), min(shardid.id_time(id)), max(shardid.id_time(id))
  FROM public.tp_events GROUP BY 1 ORDER BY 3;
INSERT INTO public.tp_events VALUES (shardid.make_id('2024-01-06', 0, 0), 'no partition');
\echo :LAST_ERROR_SQLSTATE

-- A time window prunes at plan time (time_to_id is IMMUTABLE) ...
EXPLAIN (COSTS OFF)
SELECT count(*) FROM public.tp_events
 WHERE id >= shardid.time_to_id('2024-01-02 06:00') AND id < shardid.time_to_id('2024-01-03 06:00');
SELECT count(*) FROM public.tp_events
 WHERE id >= shardid.time_to_id('2024-01-02 06:00') AND id < shardid.time_to_id('2024-01-03 06:00');
-- ... and at run time for a window relative to now() (here a parameter)
SET plan_cache_mode = force_generic_plan;
PREPARE tp_window(timestamptz, timestamptz) AS
SELECT count(*) FROM public.tp_events WHERE id >= shardid.time_to_id($1) AND id < shardid.time_to_id($2);
EXPLAIN (COSTS OFF) EXECUTE tp_window('2024-01-04 12:00', '2024-01-05');
EXECUTE tp_window('2024-01-04 12:00', '2024-01-05');
DEALLOCATE tp_window;
RESET plan_cache_mode;

-- Months and hours: names carry the start, with the time below a day.
CREATE TABLE public.tp_monthly (id bigint NOT NULL) PARTITION BY RANGE (id);
SELECT p FROM shardid.create_time_partitions('public.tp_monthly', '2024-01-01', '2024-04-01', '1 month') AS p;
CREATE TABLE public.tp_hourly (id bigint NOT NULL) PARTITION BY RANGE (id);
SELECT p FROM shardid.create_time_partitions('public.tp_hourly', '2024-01-01', '2024-01-01 18:00', '6 hours') AS p;
-- names that need quoting
CREATE TABLE public."Odd Name" (id bigint NOT NULL) PARTITION BY RANGE (id);
SELECT p FROM shardid.create_time_partitions('public."Odd Name"', '2024-01-01', '2024-01-02', '1 day') AS p;

-- Refused: tables not partitioned by range on one bigint, bad windows, too many, times outside the layout.
CREATE TABLE public.tp_plain (id bigint);
SELECT shardid.create_time_partitions('public.tp_plain', '2024-01-01', '2024-01-02', '1 day');
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE public.tp_list (id bigint) PARTITION BY LIST (id);
SELECT shardid.create_time_partitions('public.tp_list', '2024-01-01', '2024-01-02', '1 day');
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE public.tp_text (id text) PARTITION BY RANGE (id);
SELECT shardid.create_time_partitions('public.tp_text', '2024-01-01', '2024-01-02', '1 day');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.create_time_partitions('public.tp_monthly', '2024-05-01', '2024-05-01', '1 day');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.create_time_partitions('public.tp_monthly', '2024-05-01', '2024-06-01', '-1 day');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.create_time_partitions('public.tp_monthly', '2024-05-01', '2024-06-01', '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.create_time_partitions('public.tp_monthly', '2011-08-01', '2011-09-01', '1 month');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS null_in_nothing_out FROM shardid.create_time_partitions(NULL, '2024-01-01', '2024-01-02', '1 day');

DROP TABLE public.tp_events, public.tp_monthly, public.tp_hourly, public."Odd Name",
           public.tp_plain, public.tp_list, public.tp_text;
