-- Router, moves: closes the dblink connection conn if it is open, first
-- cancelling a statement it runs (a remote statement would otherwise run
-- on, holding its locks, until it next talks to the router). Never fails.
CREATE OR REPLACE FUNCTION shardid_internal._node_close(conn text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    dbl name := shardid_internal._dblink_schema();
    open boolean;
BEGIN
    EXECUTE format('SELECT $1 = ANY (COALESCE(%I.dblink_get_connections(), ''{}''))', dbl) INTO open USING conn;
    IF NOT open THEN
        RETURN;
    END IF;
    BEGIN
        EXECUTE format('SELECT %I.dblink_cancel_query($1) FROM (SELECT) AS x WHERE %I.dblink_is_busy($1) = 1', dbl, dbl)
            USING conn;
    EXCEPTION WHEN OTHERS THEN
        NULL;
    END;
    EXECUTE format('SELECT %I.dblink_disconnect($1)', dbl) USING conn;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._node_close(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._node_close(text) IS
    'Router, moves: cancels what a named dblink connection runs and closes it, if it is open.';
