-- Router, moves: the dblink connection conn to node, opened unless it is.
CREATE OR REPLACE FUNCTION shardid_internal._node_ensure(conn text, node text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT shardid_internal._node_open(conn) THEN
        PERFORM shardid_internal._node_connect(conn, node);
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._node_ensure(text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._node_ensure(text, text) IS
    'Router, moves: opens a named dblink connection to a node unless it is open.';
