-- Router, check_cluster() step 3: a placed shard that no node holds: the
-- fix creates it there, empty (restore its rows instead if a backup has
-- them). Shards being moved are skipped.
CREATE OR REPLACE FUNCTION shardid_internal._check_shard_live_nowhere(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'shard_live_nowhere', p.shard, p.node,
           pg_catalog.format('shard %s is placed on node "%s", which does not hold it, and no node does; the fix creates it there empty: restore its rows instead if a backup has them', p.shard, p.node),
           p.node,
           pg_catalog.format('SELECT shardid.create_shard(%s);', p.shard)
      FROM shardid.shard_placement AS p
     WHERE facts ? p.node
       AND NOT EXISTS (SELECT FROM shardid.shard_moves AS m WHERE m.shard = p.shard)
       AND NOT EXISTS (SELECT FROM shardid_internal._live_shards(facts) AS ls WHERE ls.shard = p.shard)
     ORDER BY 2, 3
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_shard_live_nowhere(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_shard_live_nowhere(jsonb, jsonb) IS
    'Router, check_cluster(): shard_live_nowhere, a placed shard that no node holds, with the create_shard() that makes it on its node, empty.';
