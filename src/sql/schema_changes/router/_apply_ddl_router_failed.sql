-- apply_ddl() on the router, after a node's error (err, from
-- _apply_ddl_on_node): if no node has kept the change (none recorded here
-- as done, and the failing node, asked on a connection of its own, holds
-- no change of this origin that is not abandoned: its first batch, or
-- first table, failed), the router's change is not kept either: closed as
-- abandoned, and another command may follow. Otherwise it stays open, to
-- be finished (re-CALL) or abandoned (abandon_ddl()). A node that cannot
-- be asked leaves it open. Returns err for the caller to raise once it
-- has committed.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_router_failed(change shardid.ddl_changes, node text, err jsonb)
    RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    conn CONSTANT text := 'shardid_apply_ddl_ask';
    kept bigint;
BEGIN
    IF EXISTS (SELECT FROM shardid.ddl_applied AS a WHERE a.change_id = change.change_id AND a.done) THEN
        RETURN err;
    END IF;
    BEGIN
        PERFORM shardid_internal._node_close(conn);
        PERFORM shardid_internal._apply_ddl_connect(conn, node, NULL);
        kept := shardid_internal._node(conn, format('SELECT count(*) FROM shardid.ddl_changes AS c WHERE c.origin = %L AND NOT c.abandoned',
                                                    shardid_internal._apply_ddl_origin(change.change_id)), node)::bigint;
        PERFORM shardid_internal._node_close(conn);
    EXCEPTION WHEN OTHERS THEN
        RETURN err;
    END;
    IF kept = 0 THEN
        UPDATE shardid.ddl_changes AS c SET finished_at = now(), abandoned = true
         WHERE c.change_id = change.change_id AND c.finished_at IS NULL;
        RAISE NOTICE 'apply_ddl: change % failed on node "%" before any node had it: not kept', change.change_id, node;
    END IF;
    RETURN err;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._apply_ddl_router_failed(shardid.ddl_changes, text, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_ddl_router_failed(shardid.ddl_changes, text, jsonb) IS
    'apply_ddl() on the router, after a node''s error: closes the router''s change as not kept when no node has it; returns the error for the caller to raise after its commit.';
