-- apply_ddl() on the router, one node, in one transaction of the router:
-- the change started (or resumed) there (_apply_ddl_node: a statement
-- that runs in a transaction block is applied by apply_ddl() on the node
-- itself), then, for one that cannot, up to o.connections tables at once,
-- each on a connection of its own to the node (_apply_ddl_concurrently,
-- the node's ledger written over them), and the node's change closed over
-- conn; then the node recorded here as having the change, and the
-- connection closed.
-- The node's error is returned (jsonb: sqlstate, message, detail, hint),
-- not raised, so that the router's procedure can record what it means
-- (_apply_ddl_router_failed) and commit before it raises it; a cancel of
-- this session is raised at once. The caller commits.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_on_node(conn text, change shardid.ddl_changes, node text, o shardid.ddl_options)
    RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    node_id bigint;
    there   shardid.ddl_changes := change;
    done    integer[] := '{0,0}';
    st      text;
    msg     text;
    det     text;
    hnt     text;
BEGIN
    PERFORM set_config('application_name', format('shardid apply_ddl %s node %s', change.template, node), false);
    node_id := shardid_internal._apply_ddl_node_start(conn, change.change_id, node, o);
    IF node_id IS NOT NULL THEN
        there.change_id := node_id;
        CALL shardid_internal._apply_ddl_concurrently(there, NULL, NULL, o, node, done);
        IF NOT shardid_internal._node(conn, format('SELECT shardid_internal._apply_ddl_close_change(%s)', node_id), node)::boolean THEN
            RAISE EXCEPTION 'node "%": change % is not finished after its last table', node, node_id
                USING ERRCODE = 'object_not_in_prerequisite_state';
        END IF;
    END IF;
    INSERT INTO shardid.ddl_applied (change_id, target, done) VALUES (change.change_id, node, true);
    PERFORM shardid_internal._node_close(conn);
    RETURN NULL;
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
    PERFORM shardid_internal._node_close(conn);
    RETURN jsonb_build_object('sqlstate', st, 'message', msg, 'detail', det, 'hint', hnt);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._apply_ddl_on_node(text, shardid.ddl_changes, text, shardid.ddl_options) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_ddl_on_node(text, shardid.ddl_changes, text, shardid.ddl_options) IS
    'apply_ddl() on the router: applies a change on one node (in a transaction block there, or up to connections tables at once over dblink connections of its own) and records the node as done; returns the node''s error (NULL if none); the caller commits.';
