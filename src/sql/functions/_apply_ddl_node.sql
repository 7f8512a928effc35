-- apply_ddl() on the router, one node: for a statement that runs in a
-- transaction block, CALLs apply_ddl() on the node (its own batches,
-- ledger and resumption) and returns NULL. Otherwise opens the connection
-- and starts (or resumes) the change on the node, and returns the node's
-- change id for _apply_ddl_node_step().
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_node(conn text, change_id bigint, node text, batch_size integer)
    RETURNS bigint
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c shardid.ddl_changes;
BEGIN
    SELECT * INTO STRICT c FROM shardid.ddl_changes AS d WHERE d.change_id = _apply_ddl_node.change_id;
    IF NOT c.concurrent THEN
        PERFORM shardid_internal._node_close(conn);  -- not one left open to another node
        PERFORM shardid_internal._node_connect(conn, node);
        PERFORM shardid_internal._node(conn, format('CALL shardid.apply_ddl(%L, %L, %s)', c.template, c.command, batch_size), node);
        RETURN NULL;
    END IF;
    PERFORM shardid_internal._apply_ddl_connect(conn, node, NULL);
    RETURN shardid_internal._node(conn, format('SELECT ((s).change).change_id FROM shardid_internal._apply_ddl_start(%L, %L, false) AS s',
                                      c.template, c.command), node)::bigint;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._apply_ddl_node(text, bigint, text, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_ddl_node(text, bigint, text, integer) IS
    'apply_ddl() on the router: CALLs apply_ddl() on a node (statements in a transaction block), or starts the change there and returns its change id (outside one).';
