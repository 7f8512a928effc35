CREATE OR REPLACE FUNCTION shardid.shard_schema(shard integer) RETURNS name
    LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    result name;
BEGIN
    SELECT s.schema_name INTO result FROM shardid.shard_registry AS s
        WHERE s.shard = shard_schema.shard;
    IF result IS NULL THEN
        RAISE EXCEPTION 'shard % is not registered in this database', shard
            USING ERRCODE = 'undefined_object',
                  HINT = pg_catalog.format('Create it with shardid.create_shard(%s), or register a restored schema with shardid.attach_shard(%s).', shard, shard);
    END IF;
    RETURN result;
END
$$;

COMMENT ON FUNCTION shardid.shard_schema(integer) IS
    'The schema of a registered shard, for dynamic SQL and routing; raises 42704 for an unregistered shard.';
