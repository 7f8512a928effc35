-- Router, check_cluster() step 3: a placed shard that its node does not
-- hold and another does: the fix repoints it there (frozen meanwhile).
-- Shards being moved are skipped.
CREATE OR REPLACE FUNCTION shardid_internal._check_placement_wrong_node(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'placement_wrong_node', p.shard, p.node,
           pg_catalog.format('shard %s is placed on node "%s", which does not hold it; node %s does', p.shard, p.node,
                             pg_catalog.array_to_string(ls.nodes, ', ')),
           NULL::text,
           pg_catalog.format('SELECT shardid.freeze_shard(%s); SELECT shardid.repoint_shard(%s, %L); SELECT shardid.unfreeze_shard(%s);',
                             p.shard, p.shard, ls.nodes[1], p.shard)
      FROM shardid.shard_placement AS p
      JOIN shardid_internal._live_shards(facts) AS ls ON ls.shard = p.shard
     WHERE facts ? p.node
       AND NOT p.node = ANY (ls.nodes)
     ORDER BY 2, 3
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_placement_wrong_node(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_placement_wrong_node(jsonb, jsonb) IS
    'Router, check_cluster(): placement_wrong_node, a placed shard that another node holds, with the freeze_shard(), repoint_shard() and unfreeze_shard() that repoint it there.';
