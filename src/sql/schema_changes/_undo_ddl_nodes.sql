-- abandon_ddl(template, undo => true) on the router: on every node, in
-- name order, the change the router sent closed and the undo recorded
-- with the tables it needs (_undo_ddl_prepare, which commits there on the
-- node's connection; a second call changes nothing), before apply_ddl()
-- runs the undo. undo: what _undo_ddl_start() returned. Returns one
-- element per node: {node, change_id, reversed} (a node without the
-- template has none).
CREATE OR REPLACE FUNCTION shardid_internal._undo_ddl_nodes(undo jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    conn CONSTANT text := 'shardid_undo_ddl';
    nd   record;
    got  jsonb;
    res  jsonb := '[]';
BEGIN
    FOR nd IN SELECT n.node FROM shardid.nodes AS n ORDER BY n.node COLLATE "C" LOOP
        PERFORM shardid_internal._node_close(conn);
        PERFORM shardid_internal._apply_ddl_connect(conn, nd.node, NULL);
        got := shardid_internal._node(conn, format('SELECT shardid_internal._undo_ddl_prepare(%L, %L, %L, %L)',
                                                   undo->>'template', undo->>'command',
                                                   shardid_internal._apply_ddl_origin((undo->>'original')::bigint),
                                                   shardid_internal._apply_ddl_origin((undo->>'change_id')::bigint)),
                                      nd.node)::jsonb;
        PERFORM shardid_internal._node_close(conn);
        res := res || jsonb_build_array(jsonb_build_object('node', nd.node) || COALESCE(got, '{}'));
    END LOOP;
    RETURN res;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._undo_ddl_nodes(jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._undo_ddl_nodes(jsonb) IS
    'abandon_ddl(undo) on the router: on every node, closes the change the router sent and records its undo with the tables it needs (committed there); one {node, change_id, reversed} per node.';
