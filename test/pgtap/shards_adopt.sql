-- pgTAP: migrating Instagram's PL/pgSQL generator (the seeds' insta5 schema)
-- to shardid.next_id with adopt(), in one rolled-back transaction.
BEGIN;
SELECT plan(11);

CREATE SCHEMA insta5;
CREATE SEQUENCE insta5.table_id_seq;
-- The seed's function, with the epoch and field widths of this database's
-- layout (Instagram's own values under the default layout).
SELECT format($f$
CREATE FUNCTION insta5.next_id(OUT result bigint) AS $$
DECLARE
    our_epoch bigint := %s;
    seq_id bigint;
    now_millis bigint;
    shard_id int := 5;
BEGIN
    SELECT nextval('insta5.table_id_seq') %% %s INTO seq_id;
    SELECT FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) INTO now_millis;
    result := (now_millis - our_epoch) << %s;
    result := result | (shard_id << %s);
    result := result | (seq_id);
END;
$$ LANGUAGE PLPGSQL$f$,
    (extract(epoch FROM l.epoch) * 1000)::bigint, 1::bigint << l.seq_bits, l.shard_bits + l.seq_bits, l.seq_bits)
  FROM shardid.layout() l \gset
:format;
CREATE TABLE insta5.our_table (id bigint NOT NULL DEFAULT insta5.next_id(), n serial, body text);
INSERT INTO insta5.our_table (body) SELECT 'old' FROM generate_series(1, 3000);

SELECT is((SELECT count(*)::int FROM insta5.our_table WHERE shardid.id_shard(id) = 5), 3000,
          'the PL/pgSQL IDs decode to shard 5 under the layout');
CREATE TEMP TABLE old_max AS SELECT max(id) AS id FROM insta5.our_table;

SELECT throws_ok($$SELECT shardid.adopt('insta5.our_table', 4, 'insta5.table_id_seq')$$, '55000', NULL,
                 'adopting with the wrong shard is refused');
SELECT is(pg_get_expr(d.adbin, d.adrelid), 'insta5.next_id()', 'a refused adopt leaves the DEFAULT')
  FROM pg_attrdef d WHERE d.adrelid = 'insta5.our_table'::regclass AND d.adnum = 1;

SELECT is(shardid.adopt('insta5.our_table', 5, 'insta5.table_id_seq'), (SELECT id FROM old_max),
          'adopt returns the largest existing ID');
SELECT is(pg_get_expr(d.adbin, d.adrelid), 'shardid.next_id(5, ''insta5.table_id_seq''::regclass)',
          'the DEFAULT is the native generator')
  FROM pg_attrdef d WHERE d.adrelid = 'insta5.our_table'::regclass AND d.adnum = 1;
SELECT is(shardid.shard_schema(5), 'insta5'::name, 'the adopted schema is registered as shard 5');

INSERT INTO insta5.our_table (body) SELECT 'new' FROM generate_series(1, 3000);
SELECT ok((SELECT min(id) FROM insta5.our_table WHERE body = 'new') > (SELECT id FROM old_max),
          'every new ID is above every old one');
SELECT is((SELECT count(*)::int FROM insta5.our_table WHERE body = 'new' AND shardid.id_shard(id) = 5), 3000,
          'new IDs decode to shard 5');
SELECT is((SELECT count(*)::int FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev
                                        FROM insta5.our_table WHERE body = 'new') x WHERE id <= prev),
          0, 'new IDs strictly increase');
SELECT is((SELECT count(DISTINCT id)::int FROM insta5.our_table), 6000, 'no ID repeats');
SELECT ok((SELECT bool_and(shardid.id_time(id) BETWEEN now() - interval '1 minute' AND clock_timestamp() + interval '3 seconds')
             FROM insta5.our_table WHERE body = 'new'),
          'new IDs carry the current time');

SELECT * FROM finish();
ROLLBACK;
