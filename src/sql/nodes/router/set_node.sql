-- Router: changes what is set per node: accepts_shards (false: rebalance
-- and drain plans move no shard onto the node, and a rebalance moves its
-- shards off it, as Citus's shouldhaveshards = false; drain_node() sets
-- it for the node it empties; true takes the node back). An argument left
-- NULL keeps its setting. Moves by hand (move_shard()) are not refused:
-- this steers the planner only. Returns the node's settings.
CREATE OR REPLACE FUNCTION shardid.set_node(node text, accepts_shards boolean DEFAULT NULL)
    RETURNS TABLE (node_name text, node_accepts_shards boolean)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF node IS NULL THEN
        RAISE EXCEPTION 'set_node() needs a node' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    UPDATE shardid.nodes AS n
       SET accepts_shards = COALESCE(set_node.accepts_shards, n.accepts_shards)
     WHERE n.node = set_node.node
    RETURNING n.node, n.accepts_shards INTO node_name, node_accepts_shards;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'node "%" does not exist', node USING ERRCODE = 'undefined_object',
            HINT = 'The nodes are the rows of shardid.nodes (add_node()).';
    END IF;
    RETURN NEXT;
END
$$;

REVOKE ALL ON FUNCTION shardid.set_node(text, boolean) FROM PUBLIC;

COMMENT ON FUNCTION shardid.set_node(text, boolean) IS
    'Router: sets whether a node accepts shards (false: rebalance and drain plans move none onto it, and a rebalance moves its shards off; drain_node() sets it for the node it empties); NULL keeps a setting. Returns the node''s settings.';
