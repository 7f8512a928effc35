-- The checks create_shards_proc() makes before its first batch, the same as
-- create_shards() but that registered shards are skipped; returns how many
-- shards of first..last are missing.
CREATE OR REPLACE FUNCTION shardid_internal._create_shards_start(first integer, last integer, batch_size integer)
    RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    taken    integer;
    missing  integer;
BEGIN
    IF first IS NULL OR last IS NULL OR batch_size IS NULL THEN
        RAISE EXCEPTION 'create_shards_proc() arguments must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    PERFORM shardid_internal._require_batch_size(batch_size);
    PERFORM shardid_internal._require_shard_range(first, last);
    PERFORM shardid_internal._require_registry_privileges('create shards', true);
    PERFORM shardid_internal._require_templates();
    -- A schema of the range that is not a registered shard stops the run
    -- before anything is created, as in create_shards().
    SELECT min(g) INTO taken FROM pg_catalog.generate_series(first, last) AS g
        WHERE NOT EXISTS (SELECT FROM shardid.shard_registry AS s WHERE s.shard = g)
          AND EXISTS (SELECT FROM pg_catalog.pg_namespace AS n
                       WHERE n.nspname = shardid_internal._shard_schema_name(g));
    IF taken IS NOT NULL THEN
        RAISE EXCEPTION 'schema "%" already exists', shardid_internal._shard_schema_name(taken)
            USING ERRCODE = 'duplicate_schema',
                  DETAIL = pg_catalog.format('Shard %s is not registered. No shard of %s .. %s was created.', taken, first, last),
                  HINT = pg_catalog.format('If it holds shard %s (restored from a dump), register it with shardid.attach_shard(%s).', taken, taken);
    END IF;
    SELECT count(*) INTO missing FROM pg_catalog.generate_series(first, last) AS g
        WHERE NOT EXISTS (SELECT FROM shardid.shard_registry AS s WHERE s.shard = g);
    RETURN missing;
END
$$;

COMMENT ON FUNCTION shardid_internal._create_shards_start(integer, integer, integer) IS
    'The checks of create_shards_proc() before its first batch; returns how many shards of first..last are not registered.';
