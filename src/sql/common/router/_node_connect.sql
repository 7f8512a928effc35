-- Router, moves: the dblink connection conn to a node, opened unless this
-- session has one of that name open already (kept as it is: a caller that
-- may have left one open to another node closes it first, _node_close).
-- It is opened with the node's connect string from shardid.nodes
-- (passwords come from the router's server user's ~/.pgpass) and its
-- search_path pinned for the whole session (_pinned_connstr): every
-- statement a move sends runs with search_path = pg_catalog, pg_temp. A
-- node that cannot be reached fails with 08001 naming the node, libpq's
-- error on one line (_one_line: a multi-host string gives one per host).
CREATE OR REPLACE FUNCTION shardid_internal._node_connect(conn text, node text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    dbl name := shardid_internal._dblink_schema();
    cs  text;
    msg text;
    det text;
    open boolean;
BEGIN
    EXECUTE format('SELECT $1 = ANY (COALESCE(%I.dblink_get_connections(), ''{}''))', dbl) INTO open USING conn;
    IF open THEN
        RETURN;
    END IF;
    SELECT n.connstr INTO cs FROM shardid.nodes AS n WHERE n.node = _node_connect.node;
    IF cs IS NULL THEN
        RAISE EXCEPTION 'node "%" does not exist', node USING ERRCODE = 'undefined_object';
    END IF;
    BEGIN
        -- the node's own settings win, but for the pinned search_path
        EXECUTE format('SELECT %I.dblink_connect($1, $2)', dbl)
            USING conn, shardid_internal._pinned_connstr('connect_timeout=10 application_name=shardid_move ' || cs);
    EXCEPTION WHEN sqlclient_unable_to_establish_sqlconnection OR connection_exception THEN
        GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
        RAISE EXCEPTION 'node "%" is unreachable: %', node, shardid_internal._one_line(COALESCE(NULLIF(rtrim(det, E'\n'), ''), msg))
            USING ERRCODE = 'sqlclient_unable_to_establish_sqlconnection';
    END;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._node_connect(text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._node_connect(text, text) IS
    'Router, moves: opens a named dblink connection to a node unless it is open; 08001 naming the node when it cannot be reached.';
