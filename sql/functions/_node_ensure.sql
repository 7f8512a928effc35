-- Router, moves: the dblink connection conn to node, opened unless it is.
CREATE OR REPLACE FUNCTION shardid._node_ensure(conn text, node text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    open boolean;
BEGIN
    EXECUTE format('SELECT $1 = ANY (COALESCE(%I.dblink_get_connections(), ''{}''))', shardid._dblink_schema())
        INTO open USING conn;
    IF NOT open THEN
        PERFORM shardid._node_connect(conn, node);
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid._node_ensure(text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid._node_ensure(text, text) IS
    'Router, moves: opens a named dblink connection to a node unless it is open.';
