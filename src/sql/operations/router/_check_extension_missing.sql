-- Router, check_cluster() step 1: the nodes without the shardid extension.
CREATE OR REPLACE FUNCTION shardid_internal._check_extension_missing(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'extension_missing', NULL::integer, n.key,
           pg_catalog.format('node "%s" does not have the shardid extension', n.key), n.key,
           'CREATE EXTENSION shardid;'
      FROM jsonb_each(nodes) AS n
     WHERE NOT n.value ? 'error' AND n.value->>'version' IS NULL
     ORDER BY n.key COLLATE "C"
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_extension_missing(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_extension_missing(jsonb, jsonb) IS
    'Router, check_cluster(): extension_missing, the nodes without shardid.';
