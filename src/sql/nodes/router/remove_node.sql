-- Unregisters a node that holds no shard.
CREATE OR REPLACE FUNCTION shardid.remove_node(name text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    held integer;
BEGIN
    LOCK TABLE shardid.shard_placement IN SHARE ROW EXCLUSIVE MODE;
    IF NOT EXISTS (SELECT FROM shardid.nodes AS n WHERE n.node = remove_node.name) THEN
        RAISE EXCEPTION 'node "%" does not exist', name USING ERRCODE = 'undefined_object';
    END IF;
    SELECT pg_catalog.count(*) INTO held FROM shardid.shard_placement AS p
     WHERE p.node = remove_node.name;
    IF held > 0 THEN
        RAISE EXCEPTION 'node "%" still holds shards (%)', name, held
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Move them to other nodes first (CALL shardid.move_shard()).';
    END IF;
    DELETE FROM shardid.nodes AS n WHERE n.node = remove_node.name;
END
$$;

REVOKE ALL ON FUNCTION shardid.remove_node(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid.remove_node(text) IS
    'Router: unregisters a data node that holds no shard.';
