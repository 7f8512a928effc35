-- Router, check_cluster() step 1: the nodes that could not be reached (a
-- connection SQLSTATE, _node_unreachable()); their other checks are
-- skipped.
CREATE OR REPLACE FUNCTION shardid_internal._check_node_unreachable(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'node_unreachable', NULL::integer, n.key, n.value->>'error', NULL::text,
           '-- start the node, or correct its connect string (shardid.nodes); then check again'
      FROM jsonb_each(nodes) AS n
     WHERE n.value ? 'error' AND shardid_internal._node_unreachable(n.value->>'sqlstate')
     ORDER BY n.key COLLATE "C"
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_node_unreachable(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_node_unreachable(jsonb, jsonb) IS
    'Router, check_cluster(): node_unreachable, the nodes that could not be reached (a connection SQLSTATE).';
