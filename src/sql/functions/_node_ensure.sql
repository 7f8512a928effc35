-- Router, moves: the dblink connection conn to node, opened unless it is.
CREATE OR REPLACE FUNCTION shardid._node_ensure(conn text, node text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT shardid._node_open(conn) THEN
        PERFORM shardid._node_connect(conn, node);
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid._node_ensure(text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid._node_ensure(text, text) IS
    'Router, moves: opens a named dblink connection to a node unless it is open.';
