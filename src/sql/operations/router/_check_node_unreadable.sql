-- Router, check_cluster() step 1: the nodes that answered but could not be
-- read (any error but a connection's, such as the role of its connect
-- string lacking a privilege there; its SQLSTATE in the detail); their
-- other checks are skipped.
CREATE OR REPLACE FUNCTION shardid_internal._check_node_unreadable(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'node_unreadable', NULL::integer, n.key,
           pg_catalog.format('%s (SQLSTATE %s)', n.value->>'error', n.value->>'sqlstate'), NULL::text,
           '-- the node answered, but reading it failed: correct what the detail says (for a permission error, its connect string must name the owner of shardid there, or a superuser); then check again'
      FROM jsonb_each(nodes) AS n
     WHERE n.value ? 'error' AND NOT shardid_internal._node_unreachable(n.value->>'sqlstate')
     ORDER BY n.key COLLATE "C"
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_node_unreadable(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_node_unreadable(jsonb, jsonb) IS
    'Router, check_cluster(): node_unreadable, the nodes that answered but could not be read (the SQLSTATE in the detail).';
