-- apply_ddl(): prepares a dblink connection for statements that cannot
-- run in a transaction block: opened to a node (router) or to this
-- database itself (a node: connstr, or by default this server's socket,
-- port, database and role), with search_path pinned and the server told
-- to end the statement within a second of this session's end.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_connect(conn text, node text, connstr text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    dbl   name;
    host  text := split_part(current_setting('unix_socket_directories'), ',', 1);
BEGIN
    SELECT n.nspname INTO dbl FROM pg_extension AS e JOIN pg_namespace AS n ON n.oid = e.extnamespace
     WHERE e.extname = 'dblink';
    IF dbl IS NULL THEN
        RAISE EXCEPTION 'apply_ddl() of a statement that cannot run in a transaction block needs the dblink extension'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'It runs such statements (CONCURRENTLY) one table at a time on a connection of their own: to each node from the router, or on a node to the node itself.',
                  HINT = 'CREATE EXTENSION dblink; in this database (contrib, shipped with PostgreSQL).';
    END IF;
    PERFORM shardid_internal._node_close(conn);
    IF node IS NOT NULL THEN
        PERFORM shardid_internal._node_connect(conn, node);
    ELSE
        IF connstr IS NULL THEN
            connstr := format('host=''%s'' port=%s dbname=''%s'' user=''%s''',
                              replace(replace(COALESCE(NULLIF(btrim(host), ''), 'localhost'), '\', '\\'), '''', '\'''),
                              current_setting('port'),
                              replace(replace(current_database(), '\', '\\'), '''', '\'''),
                              replace(replace(session_user, '\', '\\'), '''', '\'''));
        END IF;
        EXECUTE format('SELECT %I.dblink_connect($1, $2)', dbl)
            USING conn, 'application_name=shardid_apply_ddl ' || connstr;
    END IF;
    PERFORM shardid_internal._node(conn, 'SET search_path = pg_catalog, pg_temp', node);
    PERFORM shardid_internal._node(conn, 'SET client_connection_check_interval = ''1s''', node);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._apply_ddl_connect(text, text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_ddl_connect(text, text, text) IS
    'apply_ddl(): opens a named dblink connection to a node or (node NULL) to this database, for statements outside a transaction block, with search_path pinned.';
