-- Router: the per-node session of a job that sends a node statements over
-- many transactions there (apply_ddl(), run_on_shards(): the router's
-- fan-out to every node), on the dblink connection conn: opened anew
-- (_node_close, _node_connect: search_path pinned), named app in the
-- node's pg_stat_activity (how the node tells a running job from an
-- interrupted one), and told to end a statement within a second of this
-- session's end (client_connection_check_interval).
CREATE OR REPLACE FUNCTION shardid_internal._node_session(conn text, node text, app text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM shardid_internal._node_close(conn);
    PERFORM shardid_internal._node_connect(conn, node);
    PERFORM shardid_internal._node(conn, 'SET client_connection_check_interval = ''1s''', node);
    PERFORM shardid_internal._node(conn, format('SET application_name = %L', app), node);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._node_session(text, text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._node_session(text, text, text) IS
    'Router, apply_ddl() and run_on_shards() on every node: opens a dblink connection to a node anew, search_path pinned, named app there, its statements ended soon after this session ends.';
