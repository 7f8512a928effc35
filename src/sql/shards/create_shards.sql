CREATE OR REPLACE FUNCTION shardid.create_shards(first integer, last integer) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    taken integer;
BEGIN
    IF first IS NULL OR last IS NULL THEN
        RAISE EXCEPTION 'create_shards() arguments must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    PERFORM shardid_internal._require_shard_range(first, last);
    PERFORM shardid_internal._require_registry_privileges('create shards', true);
    LOCK TABLE shardid.shard_registry, shardid.sharded_tables IN SHARE ROW EXCLUSIVE MODE;
    -- Check the whole range before creating any shard.
    SELECT min(s.shard) INTO taken FROM shardid.shard_registry AS s
        WHERE s.shard >= first AND s.shard <= last;
    IF taken IS NOT NULL THEN
        RAISE EXCEPTION 'shard % is already registered', taken
            USING ERRCODE = 'duplicate_object',
                  DETAIL = pg_catalog.format('No shard of %s .. %s was created.', first, last);
    END IF;
    SELECT min(g) INTO taken FROM pg_catalog.generate_series(first, last) AS g
        WHERE EXISTS (SELECT FROM pg_catalog.pg_namespace AS n
                       WHERE n.nspname = shardid_internal._shard_schema_name(g));
    IF taken IS NOT NULL THEN
        RAISE EXCEPTION 'schema "%" already exists', shardid_internal._shard_schema_name(taken)
            USING ERRCODE = 'duplicate_schema',
                  DETAIL = pg_catalog.format('No shard of %s .. %s was created.', first, last);
    END IF;
    -- Every shard of the range, in one batch (53200 names create_shards_proc()).
    RETURN shardid_internal._create_shards_batch(first, last, NULL);
END
$$;

COMMENT ON FUNCTION shardid.create_shards(integer, integer) IS
    'Creates shards first..last (inclusive) in one transaction, after checking that none exists; returns how many. For more shards than one transaction can lock, CALL create_shards_proc().';
