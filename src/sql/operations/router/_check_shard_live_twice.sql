-- Router, check_cluster() step 3: a shard live on two nodes: a row for the
-- copy that is not where the placement points, with the retire_shard()
-- that retires it (named after the shard's usual schema name,
-- _shard_schema_name(): no schema name read on a node is put into a fix);
-- with no placement, one row, placing it on its first node.
CREATE OR REPLACE FUNCTION shardid_internal._check_shard_live_twice(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'shard_live_twice', ls.shard, s.node,
           pg_catalog.format('shard %s is live on nodes %s; the router places it on %s', ls.shard,
                             pg_catalog.array_to_string(ls.nodes, ', '), COALESCE('"' || p.node || '"', 'no node')),
           CASE WHEN p.node IS NULL THEN NULL ELSE s.node END,
           CASE WHEN p.node IS NULL
                THEN pg_catalog.format('SELECT shardid.place_shards(%L, %s, %s);', s.node, ls.shard, ls.shard)
                ELSE pg_catalog.format('SELECT shardid.retire_shard(%s, %L, %L);', ls.shard, p.node,
                                       shardid_internal._fit_name(shardid_internal._shard_schema_name(ls.shard), '_moved_' || t.ms)) END
      FROM shardid_internal._live_shards(facts) AS ls
     CROSS JOIN LATERAL pg_catalog.unnest(ls.nodes) AS s(node)
      LEFT JOIN shardid.shard_placement AS p ON p.shard = ls.shard
     CROSS JOIN (SELECT (pg_catalog.date_part('epoch', pg_catalog.clock_timestamp()) * 1000)::bigint AS ms) AS t
     WHERE pg_catalog.cardinality(ls.nodes) > 1
       AND p.node IS DISTINCT FROM s.node
       AND (p.node IS NOT NULL OR s.node = ls.nodes[1])
     ORDER BY 2, 3
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_shard_live_twice(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_shard_live_twice(jsonb, jsonb) IS
    'Router, check_cluster(): shard_live_twice, a shard live on two nodes: its copies the placement does not point at, with the retire_shard() of each (or the place_shards() of one when it is placed nowhere).';
