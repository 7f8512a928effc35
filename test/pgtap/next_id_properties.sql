-- next_id_properties: IDs from next_id() are positive, carry their shard,
-- and increase strictly per sequence, in one statement, across statements
-- and with several generators interleaved. Sequence changes are not undone
-- by the final ROLLBACK; the sequences themselves are created inside it.
BEGIN;
SELECT plan(13);

SET LOCAL timezone = 'UTC';
SELECT setseed(0.5);

CREATE SEQUENCE pgtap_gen_a;
CREATE SEQUENCE pgtap_gen_b;
CREATE SEQUENCE pgtap_gen_c;

-- Three generators interleaved in one statement, one shard each.
CREATE TEMP TABLE interleaved AS
SELECT n, g, shardid.next_id(g * 1000 + 7, ('pgtap_gen_' || chr(96 + g))::regclass) AS id
FROM (SELECT n, 1 + floor(random() * 3)::integer AS g FROM generate_series(1, 300000) AS n) AS calls;

SELECT is((SELECT count(DISTINCT g) FROM interleaved), 3::bigint, 'three generators were called');
SELECT is((SELECT count(DISTINCT id) FROM interleaved), 300000::bigint, '300000 distinct IDs');
SELECT is_empty($$SELECT n, id FROM interleaved WHERE id <= 0$$, 'every ID is positive');
SELECT is_empty($$SELECT n, g, id FROM interleaved WHERE shardid.id_shard(id) <> g * 1000 + 7$$,
                'every ID carries its shard');
SELECT is_empty(
    $$SELECT n, g, id, prev FROM (
          SELECT n, g, id, lag(id) OVER (PARTITION BY g ORDER BY n) AS prev FROM interleaved) AS t
      WHERE id <= prev$$,
    'IDs increase strictly per generator in call order');
SELECT is_empty(
    $$SELECT n, id FROM interleaved WHERE shardid.id_time(id) > clock_timestamp() + current_setting('shardid.max_drift')::interval$$,
    'no ID is further ahead of the clock than max_drift');
SELECT is_empty(
    $$SELECT n, id FROM interleaved WHERE shardid.id_time(id) < date_trunc('milliseconds', transaction_timestamp())$$,
    'no ID is older than the transaction');

-- The sequence holds the state of each generator's last ID.
SELECT is_empty(
    $$SELECT g FROM (SELECT g, max(id) AS last_id FROM interleaved GROUP BY g) AS l
      WHERE (SELECT s.last_value FROM pgtap_gen_a AS s WHERE g = 1
             UNION ALL SELECT s.last_value FROM pgtap_gen_b AS s WHERE g = 2
             UNION ALL SELECT s.last_value FROM pgtap_gen_c AS s WHERE g = 3)
            <> ((last_id >> 23) << 10) | (last_id & 1023)$$,
    'each sequence holds the state (time << 10 | seq) of its last ID');

-- Calls in separate statements, one generator, all shards of the layout.
CREATE FUNCTION pg_temp.separate_calls(calls integer) RETURNS TABLE (bad_order bigint, bad_shard bigint)
LANGUAGE plpgsql AS $$
DECLARE
    prev_state bigint := -1;
    state bigint;
    id bigint;
    shard integer;
BEGIN
    bad_order := 0;
    bad_shard := 0;
    FOR i IN 1..calls LOOP
        shard := (i * 37) % 8192;
        id := shardid.next_id(shard, 'pgtap_gen_a');
        state := ((id >> 23) << 10) | (id & 1023);
        IF state <= prev_state THEN
            bad_order := bad_order + 1;
        END IF;
        IF shardid.id_shard(id) <> shard THEN
            bad_shard := bad_shard + 1;
        END IF;
        prev_state := state;
    END LOOP;
    RETURN NEXT;
END
$$;
SELECT is((SELECT row(bad_order, bad_shard) FROM pg_temp.separate_calls(20000)), row(0::bigint, 0::bigint),
          '20000 calls in separate statements: (time, seq) strictly increasing, shards kept');

-- A generator continues from the last state of the previous statement.
SELECT shardid.next_id(1, 'pgtap_gen_b') AS before_id \gset
SELECT cmp_ok(shardid.next_id(1, 'pgtap_gen_b'), '>', :before_id, 'the next statement''s ID is larger');

-- A savepoint rolled back does not give its IDs out again.
SAVEPOINT before_burst;
CREATE TEMP TABLE burst_in_savepoint AS
SELECT shardid.next_id(2, 'pgtap_gen_c') AS id FROM generate_series(1, 5000);
SELECT max(id) AS burst_max FROM burst_in_savepoint \gset
ROLLBACK TO SAVEPOINT before_burst;
SELECT cmp_ok(shardid.next_id(2, 'pgtap_gen_c'), '>', :burst_max,
              'IDs after a rolled-back savepoint are above the IDs it drew');

-- Refusals.
SELECT throws_ok($$SELECT shardid.next_id(8192, 'pgtap_gen_a')$$, '22023', NULL, 'shard 8192 is refused (22023)');
SELECT throws_ok($$SELECT shardid.next_id(0, 'pg_class')$$, '42809', NULL, 'a table is refused (42809)');

SELECT * FROM finish();
ROLLBACK;
