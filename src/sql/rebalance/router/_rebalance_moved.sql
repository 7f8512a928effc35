-- Router, rebalance() and drain_node(), after each CALL move_shard(): the
-- move must be done (_check_move_done); returns the shards moved so far
-- with this one.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_moved(shard integer, target text, moved integer[]) RETURNS integer[]
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM shardid_internal._check_move_done(shard, target);
    RETURN moved || shard;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_moved(integer, text, integer[]) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_moved(integer, text, integer[]) IS
    'Router, rebalance() and drain_node(): raises 55000 unless the move just made is done; returns the shards moved with this one.';
