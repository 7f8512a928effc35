-- Router, check_cluster() step 1: the nodes at another version of shardid
-- than the router's. There is no downgrade: a node at an older version is
-- updated, a newer one (updated first) is matched by updating the router.
-- A version with a control character is unsafe_name's.
CREATE OR REPLACE FUNCTION shardid_internal._check_extension_version(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'extension_version', NULL::integer, n.key,
           pg_catalog.format('node "%s" runs shardid %s, the router %s', n.key, n.value->>'version', e.extversion),
           CASE WHEN x.newer THEN NULL ELSE n.key END,
           pg_catalog.format('ALTER EXTENSION shardid UPDATE TO %L;', CASE WHEN x.newer THEN n.value->>'version' ELSE e.extversion END)
      FROM jsonb_each(nodes) AS n
      JOIN pg_extension AS e ON e.extname = 'shardid',
           LATERAL (SELECT CASE WHEN n.value->>'version' ~ '^[0-9]+(\.[0-9]+)*$' AND e.extversion ~ '^[0-9]+(\.[0-9]+)*$'
                                THEN pg_catalog.string_to_array(n.value->>'version', '.')::integer[]
                                     > pg_catalog.string_to_array(e.extversion, '.')::integer[]
                                ELSE false END AS newer) AS x
     WHERE n.value->>'version' <> e.extversion AND NOT shardid_internal._unsafe_text(n.value->>'version')
     ORDER BY n.key COLLATE "C"
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_extension_version(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_extension_version(jsonb, jsonb) IS
    'Router, check_cluster(): extension_version, the nodes at another version of shardid, with the update to run on the node, or on the router when the node is ahead.';
