-- Router, moves: runs one statement on the dblink connection conn and
-- returns its first value as text (_node_send, then _node_wait; node names
-- the node in its errors).
CREATE OR REPLACE FUNCTION shardid_internal._node(conn text, sql text, node text DEFAULT NULL) RETURNS text
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM shardid_internal._node_send(conn, sql);
    RETURN shardid_internal._node_wait(conn, node);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._node(text, text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._node(text, text, text) IS
    'Router, moves: runs a statement on a named dblink connection and returns its first value as text.';
