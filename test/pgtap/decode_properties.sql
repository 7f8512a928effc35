-- decode_properties: make_id / id_decode / time_to_id as properties over the
-- edges of the database's layout and thousands of random inputs.
BEGIN;
SELECT plan(24);

SET LOCAL timezone = 'UTC';
SELECT setseed(0.2011);

-- The layout's edges, from layout() so the suite follows the layout.
CREATE TEMP TABLE edge_times AS
SELECT t FROM shardid.layout() AS l,
     LATERAL (VALUES (l.epoch), (l.epoch + interval '1 ms'), (l.epoch + interval '1 s'),
                     (l.last_time - interval '1 ms'), (l.last_time)) AS v(t);
CREATE TEMP TABLE edge_shards AS
SELECT s FROM shardid.layout() AS l,
     LATERAL (VALUES (0), (1), (l.max_shard / 2), (l.max_shard - 1), (l.max_shard)) AS v(s);
CREATE TEMP TABLE edge_seqs AS
SELECT q FROM shardid.layout() AS l,
     LATERAL (VALUES (0), (1), ((l.ids_per_ms / 2)::integer), ((l.ids_per_ms - 2)::integer),
                     ((l.ids_per_ms - 1)::integer)) AS v(q);

SELECT is((SELECT count(*) FROM edge_times, edge_shards, edge_seqs), 125::bigint,
          '125 edge combinations of time, shard and seq');

SELECT is_empty(
    $$SELECT t, s, q FROM edge_times, edge_shards, edge_seqs
      WHERE (SELECT row(d.ts, d.shard, d.seq) FROM shardid.id_decode(shardid.make_id(t, s, q)) AS d)
            IS DISTINCT FROM row(t, s, q)$$,
    'id_decode(make_id(x)) = x at every edge of the layout');

SELECT is_empty(
    $$SELECT t, s, q FROM edge_times, edge_shards, edge_seqs
      WHERE shardid.id_time(shardid.make_id(t, s, q)) <> t
         OR shardid.id_shard(shardid.make_id(t, s, q)) <> s
         OR shardid.id_seq(shardid.make_id(t, s, q)) <> q$$,
    'id_time, id_shard and id_seq agree with id_decode at every edge');

SELECT is_empty(
    $$SELECT t, s, q FROM edge_times, edge_shards, edge_seqs WHERE shardid.make_id(t, s, q) < 0$$,
    'no edge ID is negative');

SELECT is((SELECT shardid.make_id(l.epoch, 0, 0) FROM shardid.layout() AS l), 0::bigint,
          'the first ID of the layout is 0');
SELECT is((SELECT shardid.make_id(l.last_time, l.max_shard, (l.ids_per_ms - 1)::integer)
           FROM shardid.layout() AS l),
          9223372036854775807::bigint, 'the last ID of the layout is 2^63 - 1');

-- Edge IDs keep the order of their (time, shard, seq).
SELECT is_empty(
    $$SELECT 1 FROM (
          SELECT shardid.make_id(t, s, q) AS id,
                 row_number() OVER (ORDER BY t, s, q) AS by_parts,
                 row_number() OVER (ORDER BY shardid.make_id(t, s, q)) AS by_id
          FROM edge_times, edge_shards, edge_seqs) AS x
      WHERE by_parts <> by_id$$,
    'IDs sort like (time, shard, seq)');

-- Thousands of random (time, shard, seq).
CREATE TEMP TABLE random_parts AS
SELECT l.epoch + floor(random() * (extract(epoch FROM l.last_time - l.epoch) * 1000 + 1)) * interval '1 ms' AS t,
       floor(random() * (l.max_shard + 1))::integer AS s,
       floor(random() * l.ids_per_ms)::integer AS q
FROM shardid.layout() AS l, generate_series(1, 20000);

SELECT is((SELECT count(*) FROM random_parts), 20000::bigint, '20000 random (time, shard, seq)');
SELECT is_empty(
    $$SELECT t, s, q FROM random_parts
      WHERE (SELECT row(d.ts, d.shard, d.seq) FROM shardid.id_decode(shardid.make_id(t, s, q)) AS d)
            IS DISTINCT FROM row(t, s, q)$$,
    'id_decode(make_id(x)) = x for random x');
SELECT is_empty(
    $$SELECT t, s, q FROM random_parts WHERE shardid.make_id(t, s, q) < 0$$,
    'every random ID is positive');
SELECT is_empty(
    $$SELECT t, s, q FROM random_parts
      WHERE shardid.make_id(t, s, q) <>
            ((extract(epoch FROM t - (shardid.layout()).epoch) * 1000)::bigint << 23) | (s::bigint << 10) | q$$,
    'make_id is Instagram''s formula (ms - epoch) << 23 | shard << 10 | seq');

-- Thousands of random 63-bit IDs.
CREATE TEMP TABLE random_ids AS
SELECT (floor(random() * 2147483648)::bigint << 32) | floor(random() * 4294967296)::bigint AS id
FROM generate_series(1, 20000);
INSERT INTO random_ids VALUES (0), (1), (1023), (1024), (8388607), (8388608), (9223372036854775807);

SELECT is((SELECT count(*) FROM random_ids WHERE id >= 0), 20007::bigint, '20007 non-negative IDs');
SELECT is_empty(
    $$SELECT id FROM random_ids
      WHERE (SELECT shardid.make_id(d.ts, d.shard, d.seq) FROM shardid.id_decode(id) AS d) <> id$$,
    'make_id(id_decode(id)) = id for random IDs');

-- time_to_id is a tight lower bound of its millisecond.
SELECT is_empty(
    $$SELECT id FROM random_ids
      WHERE shardid.time_to_id(shardid.id_time(id)) > id$$,
    'time_to_id(id_time(id)) <= id');
SELECT is_empty(
    $$SELECT id FROM random_ids
      WHERE shardid.id_time(id) < (shardid.layout()).last_time
        AND id >= shardid.time_to_id(shardid.id_time(id) + interval '1 ms')$$,
    'id < time_to_id(id_time(id) + 1 ms)');
SELECT is_empty(
    $$SELECT id FROM random_ids
      WHERE shardid.time_to_id(shardid.id_time(id)) <> shardid.make_id(shardid.id_time(id), 0, 0)$$,
    'time_to_id(ts) = make_id(ts, 0, 0)');
SELECT is_empty(
    $$SELECT id FROM random_ids
      WHERE id - shardid.time_to_id(shardid.id_time(id)) <> (shardid.id_shard(id)::bigint << 10) | shardid.id_seq(id)$$,
    'an ID is its millisecond''s lowest ID plus its shard and seq');

-- time_to_id of arbitrary microsecond times.
CREATE TEMP TABLE random_times AS
SELECT l.epoch + floor(random() * (extract(epoch FROM l.last_time - l.epoch) * 1000000 + 1)) * interval '1 us' AS t
FROM shardid.layout() AS l, generate_series(1, 5000);
SELECT is_empty(
    $$SELECT t FROM random_times
      WHERE shardid.id_time(shardid.time_to_id(t)) <> date_trunc('milliseconds', t)$$,
    'id_time(time_to_id(t)) is t truncated to the millisecond');
SELECT is_empty(
    $$SELECT a.t, b.t FROM random_times AS a
      JOIN LATERAL (SELECT t FROM random_times AS r WHERE r.t > a.t ORDER BY r.t LIMIT 1) AS b ON true
      WHERE shardid.time_to_id(a.t) > shardid.time_to_id(b.t)$$,
    'time_to_id is monotonic');

-- Out of range inputs fail with the documented SQLSTATE, never a wrapped ID.
SELECT throws_ok(
    $$SELECT shardid.make_id((shardid.layout()).last_time + interval '1 ms', 0, 0)$$,
    '22008', NULL, 'one ms past the last time fails (22008)');
SELECT throws_ok(
    $$SELECT shardid.time_to_id((shardid.layout()).epoch - interval '1 us')$$,
    '22008', NULL, 'a microsecond before the epoch fails (22008)');
SELECT throws_ok(
    $$SELECT shardid.make_id(now(), (shardid.layout()).max_shard + 1, 0)$$,
    '22023', NULL, 'max_shard + 1 fails (22023)');
SELECT throws_ok(
    $$SELECT shardid.make_id(now(), 0, (shardid.layout()).ids_per_ms::integer)$$,
    '22023', NULL, 'seq = ids_per_ms fails (22023)');
CREATE FUNCTION pg_temp.negative_ids_refused() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    refused bigint := 0;
    neg bigint;
BEGIN
    FOR neg IN SELECT -id - 1 FROM random_ids LOOP
        BEGIN
            PERFORM shardid.id_decode(neg);
        EXCEPTION WHEN invalid_parameter_value THEN
            refused := refused + 1;
        END;
    END LOOP;
    RETURN refused;
END
$$;
SELECT is(pg_temp.negative_ids_refused(), 20007::bigint, 'every negative ID is refused by id_decode (22023)');

SELECT * FROM finish();
ROLLBACK;
