-- Router, drop_retired_copies(): one retired copy the view
-- shardid.retired_copies listed. One it said may not be dropped is kept
-- and reported with its reason (WARNING). Else it is dropped on its node
-- (_drop_retired_copy() there, over dblink with search_path pinned, which
-- checks again under its lock) and what became of it said: a NOTICE when
-- dropped, a WARNING with the node's reason when kept (it holds or is
-- used by another's objects, is registered again, or is busy); nothing
-- when it is gone meanwhile. Returns counts with it: {copies dropped,
-- bytes freed, copies kept}. The caller commits after each.
CREATE OR REPLACE FUNCTION shardid_internal._drop_retired_copy_on(counts bigint[], node text, schema_name name,
                                                                  droppable boolean, reason text)
    RETURNS bigint[]
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    conn CONSTANT text := 'shardid_drop_retired';
    res  jsonb;
BEGIN
    IF NOT droppable THEN
        RAISE WARNING 'kept % on node "%": %', quote_ident(schema_name), node, reason
            USING HINT = 'See shardid.retired_copies; drop_retired_copies() drops only a copy a move recorded that holds nothing but its own objects.';
        RETURN ARRAY[counts[1], counts[2], counts[3] + 1];
    END IF;
    PERFORM shardid_internal._node_close(conn);  -- not one left open to another node
    PERFORM shardid_internal._node_connect(conn, node);
    PERFORM shardid_internal._node(conn, 'SET search_path = pg_catalog, pg_temp', node);
    res := shardid_internal._node(conn, pg_catalog.format('SELECT shardid_internal._drop_retired_copy(%L)', schema_name), node)::jsonb;
    PERFORM shardid_internal._node_close(conn);
    CASE res->>'status'
        WHEN 'dropped' THEN
            RAISE NOTICE 'dropped the retired copy % on node "%" (%)', quote_ident(schema_name), node,
                pg_catalog.pg_size_pretty((res->>'bytes')::bigint);
            RETURN ARRAY[counts[1] + 1, counts[2] + (res->>'bytes')::bigint, counts[3]];
        WHEN 'skipped' THEN
            RAISE WARNING 'kept the retired copy % on node "%": %', quote_ident(schema_name), node, res->>'reason'
                USING HINT = 'See shardid.retired_copies; drop_retired_copies() drops only a copy that holds nothing but its own objects.';
            RETURN ARRAY[counts[1], counts[2], counts[3] + 1];
        ELSE
            RETURN counts;  -- gone meanwhile: nothing to do
    END CASE;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._drop_retired_copy_on(bigint[], text, name, boolean, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._drop_retired_copy_on(bigint[], text, name, boolean, text) IS
    'Router, drop_retired_copies(): drops one retired copy on its node over dblink if droppable (NOTICE when dropped, WARNING with the reason when kept), else reports it (WARNING) and keeps it; returns the counts of copies dropped, bytes freed and copies kept.';
