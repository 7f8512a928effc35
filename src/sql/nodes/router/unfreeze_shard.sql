-- Undoes freeze_shard().
CREATE OR REPLACE FUNCTION shardid.unfreeze_shard(shard integer) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    LOCK TABLE shardid.shard_placement IN SHARE ROW EXCLUSIVE MODE;
    UPDATE shardid.shard_placement AS x SET frozen = false
     WHERE x.shard = unfreeze_shard.shard;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'shard % is not placed on any node', shard USING ERRCODE = 'undefined_object';
    END IF;
    PERFORM shardid_internal._refresh_partition(shard);
END
$$;

REVOKE ALL ON FUNCTION shardid.unfreeze_shard(integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid.unfreeze_shard(integer) IS
    'Router: undoes freeze_shard().';
