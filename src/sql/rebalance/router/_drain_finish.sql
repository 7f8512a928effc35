-- Router, drain_node(): releases the rebalance lock and reports: the node
-- is empty (NOTICE with the remove_node() call), or it still holds shards
-- that could not be moved (frozen on the router, or in a move): 55000
-- naming them.
CREATE OR REPLACE FUNCTION shardid_internal._drain_finish(node text, made integer) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    left_shards text;
BEGIN
    PERFORM shardid_internal._rebalance_unlock();
    SELECT string_agg(p.shard::text, ', ' ORDER BY p.shard) INTO left_shards
      FROM shardid.shard_placement AS p WHERE p.node = _drain_finish.node;
    IF left_shards IS NOT NULL THEN
        RAISE EXCEPTION 'node "%" still holds shards % (moves made: %)', node, left_shards, made
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'They are frozen on the router (freeze_shard()) or in a move.',
                  HINT = 'unfreeze_shard() them or finish their moves, then CALL shardid.drain_node() again.';
    END IF;
    RAISE NOTICE 'drain_node: node "%" holds no shard (moves made: %); SELECT shardid.remove_node(%); removes it', node, made, quote_literal(node);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._drain_finish(text, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._drain_finish(text, integer) IS
    'Router, drain_node(): releases the rebalance lock; NOTICE when the node is empty, 55000 naming the shards it still holds otherwise.';
