-- Freezes a shard on the router: its partition turns read-only on its node,
-- so writers through the router fail with 25006 (retry) and reads go on.
-- (bin/shardid-move-shard freezes on the source node instead, which leaves
-- the cluster alone.)
-- Returns the node that holds it.
CREATE OR REPLACE FUNCTION shardid.freeze_shard(shard integer) RETURNS text
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p shardid.shard_placement;
BEGIN
    LOCK TABLE shardid.shard_placement IN SHARE ROW EXCLUSIVE MODE;
    SELECT * INTO p FROM shardid.shard_placement AS x WHERE x.shard = freeze_shard.shard;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'shard % is not placed on any node', shard USING ERRCODE = 'undefined_object';
    END IF;
    IF p.frozen THEN
        RAISE EXCEPTION 'shard % is already frozen', shard
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Another move of this shard is running, or one failed without cleaning up.',
                  HINT = pg_catalog.format('If no move is running, check node %s and run SELECT shardid.unfreeze_shard(%s);', p.node, shard);
    END IF;
    UPDATE shardid.shard_placement AS x SET frozen = true WHERE x.shard = freeze_shard.shard;
    PERFORM shardid_internal._refresh_partition(shard);
    RETURN p.node;
END
$$;

REVOKE ALL ON FUNCTION shardid.freeze_shard(integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid.freeze_shard(integer) IS
    'Router: makes the shard''s partition read-only (writes fail with 25006, reads go on); returns its node.';
