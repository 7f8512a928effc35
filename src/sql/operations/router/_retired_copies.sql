-- Router: the retired copies on every node (_retired_here() there, over
-- dblink with search_path pinned), nodes in name order. A node that cannot
-- be read fails the call, naming it: a list that silently skipped a node
-- would hide its copies.
CREATE OR REPLACE FUNCTION shardid_internal._retired_copies()
    RETURNS TABLE (node text, shard integer, schema_name name, moved_to text, retired_at timestamptz, bytes bigint,
                   recorded boolean, droppable boolean, reason text)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    conn CONSTANT text := 'shardid_retired_copies';
    nd   record;
    got  jsonb;
BEGIN
    PERFORM shardid_internal._dblink_schema();
    FOR nd IN SELECT n.node FROM shardid.nodes AS n ORDER BY n.node COLLATE "C" LOOP
        PERFORM shardid_internal._node_close(conn);  -- not one left open to another node
        PERFORM shardid_internal._node_connect(conn, nd.node);
        PERFORM shardid_internal._node(conn, 'SET search_path = pg_catalog, pg_temp', nd.node);
        got := shardid_internal._node(conn, 'SELECT COALESCE(pg_catalog.jsonb_agg(pg_catalog.to_jsonb(r)), ''[]'')::pg_catalog.text FROM shardid_internal._retired_here() AS r', nd.node)::jsonb;
        PERFORM shardid_internal._node_close(conn);
        RETURN QUERY
        SELECT nd.node, x.shard, x.schema_name, x.moved_to, x.retired_at, x.bytes, x.recorded, x.droppable, x.reason
          FROM jsonb_to_recordset(got) AS x(schema_name name, shard integer, moved_to text, retired_at timestamptz, bytes bigint,
                                            recorded boolean, droppable boolean, reason text)
         ORDER BY x.schema_name;
    END LOOP;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._retired_copies() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._retired_copies() IS
    'Router: the retired copies of moved shards on every node (node, shard, schema, node it moved to, when, bytes, recorded, droppable, why not), read over dblink; what the view retired_copies shows.';
