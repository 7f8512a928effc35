-- apply_ddl() on the router: the next node (in name order) that does not
-- have a change yet; NULL when every node has it.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_next_node(change_id bigint) RETURNS text
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT n.node FROM shardid.nodes AS n
     WHERE NOT EXISTS (SELECT FROM shardid.ddl_applied AS a
                        WHERE a.change_id = _apply_ddl_next_node.change_id AND a.target = n.node AND a.done)
     ORDER BY n.node COLLATE "C"
     LIMIT 1
$$;

REVOKE ALL ON FUNCTION shardid_internal._apply_ddl_next_node(bigint) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_ddl_next_node(bigint) IS
    'apply_ddl() on the router: the next node, in name order, that lacks a change; NULL when none does.';
