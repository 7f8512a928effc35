-- stored_decodes: IMMUTABLE decoders in indexes, generated columns,
-- constraints and partition bounds, and configure() refusing a layout change
-- while anything stores their values. In a database of its own, where no ID
-- is ever issued, so only the stored decodes freeze the layout.
\set regress_db :DBNAME
CREATE DATABASE regress_shardid_stored;
\c regress_shardid_stored
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
CREATE EXTENSION shardid;
\set VERBOSITY default
\set SHOW_CONTEXT never

SELECT shardid.configure('2020-01-01+00', 12, 11) IS NOT NULL AS configured;

-- Cached plans hold decoder calls folded to constants; a new layout drops
-- them, also those that read no table.
PREPARE folded AS SELECT shardid.time_to_id('2024-01-01+00') AS first_id_2024;
CREATE FUNCTION public.first_id_2024() RETURNS bigint LANGUAGE plpgsql
    AS $$ BEGIN RETURN shardid.time_to_id('2024-01-01+00'); END $$;
EXECUTE folded;
SELECT public.first_id_2024();
SELECT shardid.configure('2021-01-01+00', 12, 11) IS NOT NULL AS configured;
EXECUTE folded;
SELECT public.first_id_2024();
SELECT shardid.configure('2020-01-01+00', 12, 11) IS NOT NULL AS configured;
EXECUTE folded;
DEALLOCATE folded;
DROP FUNCTION public.first_id_2024();

-- Expression indexes and generated columns on id_time(id) and id_shard(id).
CREATE TABLE public.posts (
    id bigint PRIMARY KEY,
    created_at timestamptz GENERATED ALWAYS AS (shardid.id_time(id)) STORED,
    shard integer GENERATED ALWAYS AS (shardid.id_shard(id)) STORED,
    body text
);
CREATE INDEX posts_hour ON public.posts (date_bin('1 hour', shardid.id_time(id), '2020-01-01+00'));
CREATE INDEX posts_shard ON public.posts (shardid.id_shard(id));
INSERT INTO public.posts (id, body)
SELECT shardid.make_id('2024-05-01 10:00+00'::timestamptz + g * interval '17 minutes', g % 5, g), 'post ' || g
  FROM generate_series(0, 99) AS g;
SELECT id, created_at, shard FROM public.posts ORDER BY id LIMIT 3;
SELECT count(*) AS consistent FROM public.posts
 WHERE created_at = shardid.id_time(id) AND shard = shardid.id_shard(id);

SET enable_seqscan = off;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM public.posts
 WHERE date_bin('1 hour', shardid.id_time(id), '2020-01-01+00') = '2024-05-01 12:00+00';
SELECT count(*) FROM public.posts
 WHERE date_bin('1 hour', shardid.id_time(id), '2020-01-01+00') = '2024-05-01 12:00+00';
EXPLAIN (COSTS OFF) SELECT count(*) FROM public.posts WHERE shardid.id_shard(id) = 3;
SELECT count(*) FROM public.posts WHERE shardid.id_shard(id) = 3;
RESET enable_seqscan;

-- What stores decodes, and configure() refusing to change the layout under them.
SELECT kind, object, relation FROM shardid.stored_decodes ORDER BY kind, object;
SELECT in_use FROM shardid.layout();
SELECT shardid.configure('2011-08-24 21:07:01.721+00');
\echo :LAST_ERROR_SQLSTATE
-- the same layout again changes nothing and is accepted
SELECT shard_bits, seq_bits FROM shardid.configure('2020-01-01+00', 12, 11);
-- one generated column is enough to refuse
DROP INDEX public.posts_hour, public.posts_shard;
ALTER TABLE public.posts DROP COLUMN created_at;
SELECT kind, object FROM shardid.stored_decodes;
SELECT shardid.configure('2020-01-01+00', 13, 10);
\echo :LAST_ERROR_SQLSTATE

-- Writes to layout_config other than configure() are refused as well.
UPDATE shardid.layout_config SET seq_bits = 9;
\echo :LAST_ERROR_SQLSTATE
DELETE FROM shardid.layout_config;
\echo :LAST_ERROR_SQLSTATE
TRUNCATE shardid.layout_config;
\echo :LAST_ERROR_SQLSTATE
SELECT epoch, shard_bits, seq_bits FROM shardid.layout();

-- Constraints, defaults, materialized views and partition bounds count too.
DROP TABLE public.posts;
SELECT count(*) AS stored FROM shardid.stored_decodes;
CREATE TABLE public.checked (id bigint CHECK (shardid.id_shard(id) < 100));
CREATE TABLE public.defaulted (id bigint DEFAULT shardid.make_id(now(), 1, 0));
CREATE MATERIALIZED VIEW public.daily AS SELECT shardid.time_to_id('2024-01-01+00') AS first_id;
CREATE INDEX partial_recent ON public.checked (id) WHERE id >= shardid.time_to_id('2024-01-01+00');
CREATE SEQUENCE public.gen;
CREATE TABLE public.events (id bigint NOT NULL DEFAULT shardid.next_id(1, 'public.gen'))
    PARTITION BY RANGE (id);
CREATE TABLE public.events_2024 PARTITION OF public.events
    FOR VALUES FROM (shardid.time_to_id('2024-01-01+00')) TO (shardid.time_to_id('2025-01-01+00'));
SELECT kind, object, relation FROM shardid.stored_decodes ORDER BY kind, object;
SELECT shardid.configure('2020-01-01+00', 13, 10);
\echo :LAST_ERROR_SQLSTATE
DROP TABLE public.checked, public.defaulted, public.events;
DROP MATERIALIZED VIEW public.daily;
SELECT count(*) AS stored FROM shardid.stored_decodes;
SELECT shard_bits, seq_bits FROM shardid.configure('2020-01-01+00', 13, 10);

-- A layout row inserted after the rows (what a pg_dump restore does)
-- recomputes the generated columns computed with the default layout.
TRUNCATE shardid.layout_config;
CREATE TABLE public.restored (
    id bigint PRIMARY KEY,
    created_at timestamptz GENERATED ALWAYS AS (shardid.id_time(id)) STORED,
    shard integer GENERATED ALWAYS AS (shardid.id_shard(id)) STORED
);
INSERT INTO public.restored (id) VALUES (1801284474525216768), (287103840791035903);
SELECT id, created_at, shard FROM public.restored ORDER BY id;
INSERT INTO shardid.layout_config VALUES (true, 1580608922202, 11, 12);
SELECT id, created_at, shard FROM public.restored ORDER BY id;
-- removing that row again would make them stale: refused
DELETE FROM shardid.layout_config;
\echo :LAST_ERROR_SQLSTATE
ALTER TABLE public.restored DROP COLUMN created_at, DROP COLUMN shard;
DELETE FROM shardid.layout_config;
-- an index built before the layout row cannot be recomputed that way: refused
CREATE INDEX restored_time ON public.restored (shardid.id_time(id));
INSERT INTO shardid.layout_config VALUES (true, 1580608922202, 11, 12);
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS config_rows FROM shardid.layout_config;

\c :regress_db
DROP DATABASE regress_shardid_stored;
