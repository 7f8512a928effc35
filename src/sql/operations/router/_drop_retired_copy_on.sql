-- Router: drops one retired copy on its node (_drop_retired_copy() there,
-- over dblink with search_path pinned) and says what became of it: a
-- NOTICE when dropped, a WARNING with the node's reason when skipped
-- (it holds or is used by another's objects, is registered again, or is
-- busy). Returns the node's answer; for drop_retired_copies(), which
-- commits after each.
CREATE OR REPLACE FUNCTION shardid_internal._drop_retired_copy_on(node text, schema_name name) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    conn CONSTANT text := 'shardid_drop_retired';
    res  jsonb;
BEGIN
    PERFORM shardid_internal._node_close(conn);  -- not one left open to another node
    PERFORM shardid_internal._node_connect(conn, node);
    PERFORM shardid_internal._node(conn, 'SET search_path = pg_catalog, pg_temp', node);
    res := shardid_internal._node(conn, pg_catalog.format('SELECT shardid_internal._drop_retired_copy(%L)', schema_name), node)::jsonb;
    PERFORM shardid_internal._node_close(conn);
    CASE res->>'status'
        WHEN 'dropped' THEN
            RAISE NOTICE 'dropped the retired copy % on node "%" (%)', quote_ident(schema_name), node,
                pg_catalog.pg_size_pretty((res->>'bytes')::bigint);
        WHEN 'skipped' THEN
            RAISE WARNING 'kept the retired copy % on node "%": %', quote_ident(schema_name), node, res->>'reason'
                USING HINT = 'See shardid.retired_copies; drop_retired_copies() drops only a copy that holds nothing but its own objects.';
        ELSE
            NULL;  -- gone meanwhile: nothing to do
    END CASE;
    RETURN res;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._drop_retired_copy_on(text, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._drop_retired_copy_on(text, name) IS
    'Router: drops one retired copy on its node over dblink (NOTICE when dropped, WARNING with the reason when kept); returns the node''s answer; for drop_retired_copies().';
