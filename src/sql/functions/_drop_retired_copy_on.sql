-- Router: drops one retired copy on its node (_drop_retired_copy() there,
-- over dblink with search_path pinned) and says so in a NOTICE; for
-- drop_retired_copies(), which commits after each.
CREATE OR REPLACE FUNCTION shardid_internal._drop_retired_copy_on(node text, schema_name name) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    conn CONSTANT text := 'shardid_drop_retired';
    freed bigint;
BEGIN
    PERFORM shardid_internal._node_close(conn);  -- not one left open to another node
    PERFORM shardid_internal._node_connect(conn, node);
    PERFORM shardid_internal._node(conn, 'SET search_path = pg_catalog, pg_temp', node);
    freed := shardid_internal._node(conn, pg_catalog.format('SELECT shardid_internal._drop_retired_copy(%L)', schema_name), node)::bigint;
    PERFORM shardid_internal._node_close(conn);
    RAISE NOTICE 'dropped the retired copy % on node "%" (%)', schema_name, node, pg_catalog.pg_size_pretty(freed);
    RETURN freed;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._drop_retired_copy_on(text, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._drop_retired_copy_on(text, name) IS
    'Router: drops one retired copy on its node over dblink (NOTICE naming it); for drop_retired_copies().';
