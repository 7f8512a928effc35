-- pgTAP: properties of logical shards (create_shards, create_table, the
-- registry view, shard_schema) in one rolled-back transaction. Reads the
-- database's layout rather than assuming the default.
BEGIN;
SELECT plan(25);

SELECT has_function('shardid', 'create_shard', ARRAY['integer'], 'create_shard(int) exists');
SELECT function_returns('shardid', 'create_shard', ARRAY['integer'], 'name', 'create_shard returns name');
SELECT has_function('shardid', 'create_shards', ARRAY['integer', 'integer'], 'create_shards(int, int) exists');
SELECT has_function('shardid', 'shard_schema', ARRAY['integer'], 'shard_schema(int) exists');
SELECT has_function('shardid', 'create_table', ARRAY['regclass', 'name'], 'create_table(regclass, name) exists');
SELECT has_function('shardid', 'adopt', ARRAY['regclass', 'integer', 'regclass', 'name'], 'adopt(regclass, int, regclass, name) exists');
SELECT has_view('shardid', 'shards', 'view shardid.shards exists');
SELECT columns_are('shardid', 'shards', ARRAY['shard', 'schema', 'sequence', 'last_id', 'last_time', 'drift'],
                   'shardid.shards columns');
SELECT ok(EXISTS (SELECT FROM pg_extension e WHERE e.extname = 'shardid'
                   AND 'shardid.shard_registry'::regclass = ANY (e.extconfig)
                   AND 'shardid.sharded_tables'::regclass = ANY (e.extconfig)),
          'registry tables are extension configuration (dumped by pg_dump)');

-- a range of shards near the top of the layout
SELECT is(shardid.create_shards((shardid.layout()).max_shard - 9, (shardid.layout()).max_shard), 10,
          'create_shards creates 10 shards');
SELECT is((SELECT count(*)::int FROM shardid.shards s
            WHERE s.schema = shardid.shard_schema(s.shard)
              AND s.sequence = format('%I.id_seq', s.schema)::regclass
              AND s.schema::text ~ '^shard_[0-9]{4,}$'
              AND ltrim(substr(s.schema, 7), '0')::int = s.shard),
          10, 'every shard: schema shard_NNNN numbered like the shard, sequence <schema>.id_seq');
SELECT is((SELECT count(*)::int FROM pg_sequences q JOIN shardid.shards s ON q.schemaname = s.schema
            WHERE q.data_type = 'bigint'::regtype AND q.max_value = 9223372036854775807 AND q.sequencename = 'id_seq'),
          10, 'every generator is a bigint sequence');

CREATE TABLE public.pgtap_posts (id bigint PRIMARY KEY, author bigint NOT NULL, body text);
CREATE TABLE public.pgtap_votes (vote_id bigint PRIMARY KEY, post bigint);
SELECT is(shardid.create_table('public.pgtap_posts'), 10, 'create_table makes the table in 10 shards');
SELECT is(shardid.create_table('public.pgtap_votes', 'vote_id'), 10, 'a named id column');
SELECT is((SELECT count(*)::int FROM shardid.shards s
            JOIN pg_attrdef d ON d.adrelid = format('%I.pgtap_posts', s.schema)::regclass
            WHERE pg_get_expr(d.adbin, d.adrelid) = format('shardid.next_id(%s, %L::regclass)', s.shard, s.sequence::text)),
          10, 'each copy defaults to its own shard''s generator');

-- write 100 rows into each table of each shard, alternating tables
CREATE TEMP TABLE pgtap_ids (n serial, shard int, id bigint);
DO $$
DECLARE s record; i int; v bigint;
BEGIN
    FOR s IN SELECT shard, schema FROM shardid.shards ORDER BY shard LOOP
        FOR i IN 1..100 LOOP
            EXECUTE format('INSERT INTO %I.pgtap_posts (author) VALUES (%s) RETURNING id', s.schema, i) INTO v;
            INSERT INTO pgtap_ids (shard, id) VALUES (s.shard, v);
            EXECUTE format('INSERT INTO %I.pgtap_votes (post) VALUES (%s) RETURNING vote_id', s.schema, v) INTO v;
            INSERT INTO pgtap_ids (shard, id) VALUES (s.shard, v);
        END LOOP;
    END LOOP;
END
$$;
SELECT is((SELECT count(DISTINCT id)::int FROM pgtap_ids), 2000, '2000 IDs, all distinct across shards and tables');
SELECT is((SELECT count(*)::int FROM pgtap_ids WHERE shardid.id_shard(id) <> shard), 0, 'every ID decodes to its shard');
SELECT is((SELECT count(*)::int FROM (SELECT id, lag(id) OVER (PARTITION BY shard ORDER BY n) AS prev FROM pgtap_ids) x
            WHERE id <= prev), 0, 'IDs increase within a shard, across its tables');
SELECT is((SELECT count(*)::int FROM shardid.shards s
            WHERE s.last_id = (SELECT max(id) FROM pgtap_ids i WHERE i.shard = s.shard)
              AND s.last_time = shardid.id_time(s.last_id)
              AND s.drift BETWEEN interval '0' AND interval '3 seconds'),
          10, 'shards view: last_id, last_time and drift describe each generator');
SELECT ok((SELECT bool_and(id >= shardid.time_to_id(now() - interval '1 minute')) FROM pgtap_ids),
          'time_to_id range scan finds the fresh IDs');

-- a shard created later gets both tables
SELECT is(shardid.create_shard(0)::text,
          'shard_' || lpad('0', greatest(4, length((shardid.layout()).max_shard::text)), '0'),
          'create_shard(0) is shard_0000, padded to the width of the largest shard');
SELECT is(shardid.create_shard((shardid.layout()).max_shard - 10)::text,
          'shard_' || lpad(((shardid.layout()).max_shard - 10)::text, greatest(4, length((shardid.layout()).max_shard::text)), '0'),
          'create_shard returns the new schema');
SELECT set_eq(format($q$SELECT relname::text FROM pg_class WHERE relkind = 'r' AND relnamespace = %L::regnamespace$q$,
                     shardid.shard_schema((shardid.layout()).max_shard - 10)),
              ARRAY['pgtap_posts', 'pgtap_votes'], 'the later shard has every sharded table');

SELECT throws_ok(format('SELECT shardid.create_shard(%s)', (shardid.layout()).max_shard + 1), '22023',
                 NULL, 'shard past the layout: 22023');
SELECT throws_ok(format('SELECT shardid.create_shards(%s, %s)', (shardid.layout()).max_shard - 11, (shardid.layout()).max_shard - 10),
                 '42710', NULL, 'a range overlapping a registered shard: 42710');

SELECT * FROM finish();
ROLLBACK;
