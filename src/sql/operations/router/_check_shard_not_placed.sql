-- Router, check_cluster() step 3: a shard one node holds that is placed
-- nowhere (its IDs are routed nowhere), with the place_shards() that
-- places it there. Shards being moved are skipped.
CREATE OR REPLACE FUNCTION shardid_internal._check_shard_not_placed(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'shard_not_placed', ls.shard, ls.nodes[1],
           pg_catalog.format('shard %s is live on node "%s" but placed on no node: its IDs are routed nowhere', ls.shard, ls.nodes[1]),
           NULL::text,
           pg_catalog.format('SELECT shardid.place_shards(%L, %s, %s);', ls.nodes[1], ls.shard, ls.shard)
      FROM shardid_internal._live_shards(facts) AS ls
     WHERE pg_catalog.cardinality(ls.nodes) = 1
       AND NOT EXISTS (SELECT FROM shardid.shard_placement AS p WHERE p.shard = ls.shard)
     ORDER BY 2, 3
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_shard_not_placed(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_shard_not_placed(jsonb, jsonb) IS
    'Router, check_cluster(): shard_not_placed, a shard one node holds that is placed nowhere, with the place_shards() that places it there.';
