-- apply_ddl() on the router: records that a node has the change, closes
-- the connection to it.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_node_done(conn text, change_id bigint, node text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    INSERT INTO shardid.ddl_applied (change_id, target, done) VALUES (change_id, node, true);
    PERFORM shardid_internal._node_close(conn);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._apply_ddl_node_done(text, bigint, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_ddl_node_done(text, bigint, text) IS
    'apply_ddl() on the router: records a node as having a change and closes the connection to it.';
