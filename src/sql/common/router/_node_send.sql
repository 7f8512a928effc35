-- Router, moves: sends one statement on the dblink connection conn without
-- waiting (_node_wait() collects its single value), so the router can
-- drive two nodes at once and a cancel of the router's backend interrupts
-- the wait (15's dblink() cannot be interrupted while it waits).
CREATE OR REPLACE FUNCTION shardid_internal._node_send(conn text, sql text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    dbl  name := shardid_internal._dblink_schema();
    sent integer;
    msg  text;
BEGIN
    EXECUTE format('SELECT %I.dblink_send_query($1, $2)', dbl) INTO sent USING conn, sql;
    IF sent IS DISTINCT FROM 1 THEN
        EXECUTE format('SELECT %I.dblink_error_message($1)', dbl) INTO msg USING conn;
        RAISE EXCEPTION 'could not send a statement on connection %: %', conn, rtrim(msg, E'\n')
            USING ERRCODE = 'connection_failure';
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._node_send(text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._node_send(text, text) IS
    'Router, moves: sends a statement on a named dblink connection without waiting for it.';
