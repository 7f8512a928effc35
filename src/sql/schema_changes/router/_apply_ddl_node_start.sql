-- apply_ddl() on the router, one node, over conn (_apply_ddl_connect:
-- search_path pinned, the node's statement ended soon after this session
-- ends): a statement that runs in a transaction block is applied by the
-- node's own loop (_apply_ddl_here, with the router's change as origin, so
-- a change the node finished already is not run again), waited for with a
-- cancel of this session cancelling it there too; returns NULL. Otherwise
-- the change is opened on the node (_apply_ddl_open) and its change id
-- returned for _apply_ddl_concurrently(); NULL when the node has nothing to
-- run. The options record o goes to the node whole, as jsonb read back by
-- the node's _ddl_options() (an option that node does not know: 22023).
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_node_start(conn text, change_id bigint, node text, o shardid.ddl_options)
    RETURNS bigint
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c      shardid.ddl_changes;
    origin text := shardid_internal._apply_ddl_origin(change_id);
BEGIN
    SELECT * INTO STRICT c FROM shardid.ddl_changes AS d WHERE d.change_id = _apply_ddl_node_start.change_id;
    PERFORM shardid_internal._apply_ddl_connect(conn, node, NULL);
    IF NOT c.concurrent THEN
        PERFORM shardid_internal._node_send(conn, format('CALL shardid_internal._apply_ddl_here(%L, %L, shardid_internal._ddl_options(%L), %L)',
                                                         c.template, c.command, to_jsonb(o), origin));
        WHILE shardid_internal._apply_ddl_busy(conn) LOOP
        END LOOP;
        PERFORM shardid_internal._node_wait(conn, node);
        RETURN NULL;
    END IF;
    RETURN shardid_internal._node(conn, format('SELECT shardid_internal._apply_ddl_open(%L, %L, %L)', c.template, c.command, origin),
                                  node)::bigint;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._apply_ddl_node_start(text, bigint, text, shardid.ddl_options) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_ddl_node_start(text, bigint, text, shardid.ddl_options) IS
    'apply_ddl() on the router: runs a change on a node (statements in a transaction block: the node''s own loop, with the router''s change as origin), or opens it there and returns its change id (outside one); the options go whole; NULL when the node has nothing to run. A cancel of this session cancels the node''s statement.';
