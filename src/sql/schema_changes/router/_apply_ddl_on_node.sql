-- apply_ddl() on the router, one node, in one transaction of the router:
-- the change started (or resumed) there (_apply_ddl_node: a statement
-- that runs in a transaction block is applied by apply_ddl() on the node
-- itself), then, for one that cannot, one table at a time over conn
-- (_apply_ddl_node_step) with a NOTICE and application_name every
-- batch_size tables; then the node recorded here as having the change,
-- and the connection closed.
-- The node's error is returned (jsonb: sqlstate, message, detail, hint),
-- not raised, so that the router's procedure can record what it means
-- (_apply_ddl_router_failed) and commit before it raises it; a cancel of
-- this session is raised at once. The caller commits.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_on_node(conn text, change shardid.ddl_changes, node text, batch_size integer,
                                                               batch_time interval)
    RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    node_id bigint;
    done    integer := 0;
    st      text;
    msg     text;
    det     text;
    hnt     text;
BEGIN
    PERFORM set_config('application_name', format('shardid apply_ddl %s node %s', change.template, node), false);
    node_id := shardid_internal._apply_ddl_node_start(conn, change.change_id, node, batch_size, batch_time);
    IF node_id IS NOT NULL THEN
        WHILE shardid_internal._apply_ddl_node_step(conn, node, node_id) IS NOT NULL LOOP
            done := done + 1;
            IF done % batch_size = 0 THEN
                RAISE NOTICE 'apply_ddl: node %: % tables done', node, done;
                PERFORM set_config('application_name', format('shardid apply_ddl %s node %s %s', change.template, node, done), false);
            END IF;
        END LOOP;
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

REVOKE ALL ON FUNCTION shardid_internal._apply_ddl_on_node(text, shardid.ddl_changes, text, integer, interval) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_ddl_on_node(text, shardid.ddl_changes, text, integer, interval) IS
    'apply_ddl() on the router: applies a change on one node (in a transaction block there, or one table at a time over dblink with progress NOTICEs) and records the node as done; returns the node''s error (NULL if none); the caller commits.';
