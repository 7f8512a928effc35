-- examples/quickstart.sql — the README's tour of shardid, run by quickstart.sh.
\pset footer off
\echo '--- the extension and its layout (Instagram''s: 13 shard bits, 10 seq bits)'
CREATE EXTENSION shardid;
SELECT epoch, time_bits, shard_bits, seq_bits, max_shard, ids_per_second, last_time
  FROM shardid.layout();

\echo '--- four logical shards, each a schema with its own generator'
SELECT shardid.create_shards(0, 3);
SELECT shard, schema, sequence FROM shardid.shards ORDER BY shard;

\echo '--- a table template, created in every shard with id DEFAULT shardid.next_id(shard, ...)'
CREATE TABLE public.photos (
    id         bigint PRIMARY KEY,
    user_id    bigint NOT NULL,
    caption    text,
    created_at timestamptz NOT NULL DEFAULT now()
);
SELECT shardid.create_table('public.photos');
\d shard_0002.photos

\echo '--- inserts: the application routes user u to shard u % 4'
INSERT INTO shard_0000.photos (user_id, caption) VALUES (4, 'sunset'), (8, 'coffee');
INSERT INTO shard_0001.photos (user_id, caption) VALUES (1, 'cat'), (5, 'dog');
INSERT INTO shard_0002.photos (user_id, caption) VALUES (2, 'bridge');
INSERT INTO shard_0003.photos (user_id, caption)
  SELECT 3, 'burst ' || g FROM generate_series(1, 5000) g;

\echo '--- every ID carries its time and shard; short codes for URLs'
SELECT p.id, d.ts, d.shard, d.seq, shardid.to_shortcode(p.id) AS shortcode, p.caption
  FROM (SELECT * FROM shard_0000.photos UNION ALL SELECT * FROM shard_0001.photos
        UNION ALL SELECT * FROM shard_0002.photos) p,
       LATERAL shardid.id_decode(p.id) d
 ORDER BY p.id;

\echo '--- 5000 IDs in one statement: unique, increasing, all on shard 3'
SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids,
       bool_and(shardid.id_shard(id) = 3) AS all_on_shard_3
  FROM shard_0003.photos;

\echo '--- route by ID alone: the shard is inside it'
SELECT id, shardid.id_shard(id) AS shard, shardid.shard_schema(shardid.id_shard(id)) AS schema
  FROM shard_0001.photos ORDER BY id LIMIT 1;

\echo '--- time-window scan on the primary key, no created_at index needed'
EXPLAIN (COSTS OFF)
SELECT count(*) FROM shard_0003.photos
 WHERE id >= shardid.time_to_id(now() - interval '1 hour')
   AND id <  shardid.time_to_id(now() + interval '1 hour');
SELECT count(*) AS rows_in_the_last_hour FROM shard_0003.photos
 WHERE id >= shardid.time_to_id(now() - interval '1 hour')
   AND id <  shardid.time_to_id(now() + interval '1 hour');

\echo '--- Instagram''s own worked example decodes as published'
SELECT shardid.make_id(timestamptz '2011-08-24 21:07:01.721+00' + interval '1387263000 ms', 1341, 5001 % 1024) AS id,
       ((1387263000::bigint << 23) | (1341 << 10) | (5001 % 1024)) AS by_hand;
