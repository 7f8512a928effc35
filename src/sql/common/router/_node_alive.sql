-- Router, moves: whether the dblink connection conn is open and answers.
CREATE OR REPLACE FUNCTION shardid_internal._node_alive(conn text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    open boolean;
BEGIN
    EXECUTE format('SELECT $1 = ANY (COALESCE(%I.dblink_get_connections(), ''{}''))', shardid_internal._dblink_schema())
        INTO open USING conn;
    IF NOT open THEN
        RETURN false;
    END IF;
    PERFORM shardid_internal._node(conn, 'SELECT 1');
    RETURN true;
EXCEPTION WHEN OTHERS THEN
    RETURN false;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._node_alive(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._node_alive(text) IS
    'Router, moves: whether a named dblink connection is open and answers.';
