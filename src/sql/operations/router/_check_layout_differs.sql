-- Router, check_cluster() step 2: the nodes whose layout is not the
-- router's (shardid.layout()), with the configure() that matches it.
CREATE OR REPLACE FUNCTION shardid_internal._check_layout_differs(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'layout_differs', NULL::integer, f.key,
           pg_catalog.format('node "%s" has the layout epoch %s, %s shard bits, %s seq bits; the router %s, %s, %s (configure the node before it issues IDs, or the router if the node is right)',
                             f.key, f.value->'layout'->>'epoch', f.value->'layout'->>'shard_bits', f.value->'layout'->>'seq_bits',
                             m.layout->>'epoch', m.layout->>'shard_bits', m.layout->>'seq_bits'),
           f.key,
           pg_catalog.format('SELECT shardid.configure(%L, %s, %s);',
                             m.layout->>'epoch', m.layout->>'shard_bits', m.layout->>'seq_bits')
      FROM jsonb_each(facts) AS f,
           (SELECT jsonb_build_object('epoch', pg_catalog.to_char(l.epoch AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS') || '+00',
                                      'shard_bits', l.shard_bits, 'seq_bits', l.seq_bits) AS layout
              FROM shardid.layout() AS l) AS m
     WHERE f.value->'layout' <> m.layout
     ORDER BY f.key COLLATE "C"
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_layout_differs(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_layout_differs(jsonb, jsonb) IS
    'Router, check_cluster(): layout_differs, the nodes whose layout is not the router''s, with the configure() that matches it.';
