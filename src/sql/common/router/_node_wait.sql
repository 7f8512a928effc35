-- Router, moves: waits (interruptibly, 1 ms at a time) for the statement
-- sent on conn and returns the first column of its first row as text; the
-- node's error is raised with its SQLSTATE, detail and hint, the message
-- prefixed with node "NAME": when node is given; a lost connection as 08006.
CREATE OR REPLACE FUNCTION shardid_internal._node_wait(conn text, node text DEFAULT NULL) RETURNS text
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    dbl  name := shardid_internal._dblink_schema();
    busy integer;
    r    text;
    st   text;
    msg  text;
    det  text;
    hnt  text;
BEGIN
    LOOP
        EXECUTE format('SELECT %I.dblink_is_busy($1)', dbl) INTO busy USING conn;
        EXIT WHEN busy = 0;
        PERFORM pg_sleep(0.001);
    END LOOP;
    BEGIN
        EXECUTE format('SELECT t.x FROM %I.dblink_get_result($1) AS t(x text) LIMIT 1', dbl) INTO r USING conn;
    EXCEPTION WHEN OTHERS THEN
        -- read what is left of it, so the connection can be used again
        GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
        BEGIN
            EXECUTE format('SELECT count(*) FROM %I.dblink_get_result($1, false) AS t(x text)', dbl) USING conn;
        EXCEPTION WHEN OTHERS THEN
            NULL;
        END;
        IF node IS NULL THEN
            RAISE;
        END IF;
        PERFORM shardid_internal._raise(st, format('node "%s": %s', node, msg), det, hnt);
    END;
    -- the end of the results
    EXECUTE format('SELECT count(*) FROM %I.dblink_get_result($1) AS t(x text)', dbl) USING conn;
    RETURN r;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._node_wait(text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._node_wait(text, text) IS
    'Router, moves: waits interruptibly for the statement sent on a named dblink connection; returns its first value as text.';
