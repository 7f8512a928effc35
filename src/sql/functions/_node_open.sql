-- Router, moves: whether this session has the dblink connection conn open
-- (no round trip to its node; _node_alive asks the node too).
CREATE OR REPLACE FUNCTION shardid_internal._node_open(conn text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    open boolean;
BEGIN
    EXECUTE format('SELECT $1 = ANY (COALESCE(%I.dblink_get_connections(), ''{}''))', shardid_internal._dblink_schema())
        INTO open USING conn;
    RETURN open;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._node_open(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._node_open(text) IS
    'Router, moves: whether this session has a named dblink connection open (no round trip).';
