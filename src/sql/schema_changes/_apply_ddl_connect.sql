-- apply_ddl(): prepares a dblink connection for statements that cannot
-- run in a transaction block: opened to a node (router: _node_session, as
-- run_on_shards() opens its own) or to this database itself (a node:
-- connstr, or by default this server's socket, port, database and role),
-- with search_path pinned and the server told to end the statement
-- within a second of this session's end. A loopback that reaches another
-- database or server is refused (22023): the statements would change
-- tables there while this ledger records them here.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_connect(conn text, node text, connstr text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    -- (database, the server's start time): this database, on this server
    self  CONSTANT text := 'SELECT ROW(pg_catalog.current_database(), '
                           'pg_catalog.date_part(''epoch'', pg_catalog.pg_postmaster_start_time()))::text';
    here  text;
    there text;
    dbl   name;
    host  text := split_part(current_setting('unix_socket_directories'), ',', 1);
BEGIN
    BEGIN
        dbl := shardid_internal._dblink_schema();
    EXCEPTION WHEN object_not_in_prerequisite_state THEN
        RAISE EXCEPTION 'apply_ddl() of a statement that cannot run in a transaction block needs the dblink extension'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'It runs such statements (CONCURRENTLY) each on a connection of its own, up to connections tables at once: to each node from the router, or on a node to the node itself.',
                  HINT = 'CREATE EXTENSION dblink; in this database (contrib, shipped with PostgreSQL).';
    END;
    IF node IS NOT NULL THEN
        -- how shardid.ddl_progress there tells a running change from an interrupted one
        PERFORM shardid_internal._node_session(conn, node, 'shardid_apply_ddl');
        RETURN;
    END IF;
    PERFORM shardid_internal._node_close(conn);
    IF connstr IS NULL THEN
        connstr := format('host=''%s'' port=%s dbname=''%s'' user=''%s''',
                          replace(replace(COALESCE(NULLIF(btrim(host), ''), 'localhost'), '\', '\\'), '''', '\'''),
                          current_setting('port'),
                          replace(replace(current_database(), '\', '\\'), '''', '\'''),
                          replace(replace(session_user, '\', '\\'), '''', '\'''));
    END IF;
    EXECUTE format('SELECT %I.dblink_connect($1, $2)', dbl)
        USING conn, 'application_name=shardid_apply_ddl ' || connstr;
    PERFORM shardid_internal._node(conn, 'SET search_path = pg_catalog, pg_temp', NULL);
    EXECUTE self INTO here;
    there := shardid_internal._node(conn, self, NULL);
    IF there IS DISTINCT FROM here THEN
        PERFORM shardid_internal._node_close(conn);
        RAISE EXCEPTION 'apply_ddl() loopback does not reach this database'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('It reaches %s (database, the server''s start in seconds since 1970); this is %s.', there, here),
                  HINT = 'Give loopback a connect string to this database on this server, or leave it out (this server''s socket, port, database and your role).';
    END IF;
    PERFORM shardid_internal._node(conn, 'SET client_connection_check_interval = ''1s''', NULL);
    -- how shardid.ddl_progress here tells a running change from an interrupted one
    PERFORM shardid_internal._node(conn, 'SET application_name = ''shardid_apply_ddl''', NULL);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._apply_ddl_connect(text, text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_ddl_connect(text, text, text) IS
    'apply_ddl(): opens a named dblink connection to a node or (node NULL) to this database, for statements outside a transaction block, with search_path pinned.';
