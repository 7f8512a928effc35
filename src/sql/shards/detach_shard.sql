CREATE OR REPLACE FUNCTION shardid.detach_shard(shard integer) RETURNS name
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nsp name;
BEGIN
    IF shard IS NULL THEN
        RAISE EXCEPTION 'shard must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    PERFORM shardid_internal._require_registry_privileges('detach shards', false);
    DELETE FROM shardid.shard_registry AS s WHERE s.shard = detach_shard.shard
        RETURNING s.schema_name INTO nsp;
    IF nsp IS NULL THEN
        RAISE EXCEPTION 'shard % is not registered in this database', shard USING ERRCODE = 'undefined_object';
    END IF;
    RETURN nsp;
END
$$;

COMMENT ON FUNCTION shardid.detach_shard(integer) IS
    'Unregisters a shard (after it moved to another server); leaves its schema alone. Returns the schema name.';
