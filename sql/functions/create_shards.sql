CREATE OR REPLACE FUNCTION shardid.create_shards(first integer, last integer) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    taken integer;
    made  integer := 0;
    hint  text;
BEGIN
    IF first IS NULL OR last IS NULL THEN
        RAISE EXCEPTION 'create_shards() arguments must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    PERFORM shardid._check_shard_range(first, last);
    PERFORM shardid._check_registry_privileges('create shards', true);
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
                       WHERE n.nspname = shardid._shard_schema_name(g));
    IF taken IS NOT NULL THEN
        RAISE EXCEPTION 'schema "%" already exists', shardid._shard_schema_name(taken)
            USING ERRCODE = 'duplicate_schema',
                  DETAIL = pg_catalog.format('No shard of %s .. %s was created.', first, last);
    END IF;
    BEGIN
        FOR g IN first .. last LOOP
            PERFORM shardid.create_shard(g);
            made := made + 1;
        END LOOP;
    EXCEPTION WHEN out_of_memory THEN
        -- 53200 "out of shared memory" from the lock table: every shard
        -- created holds its locks until the transaction ends.
        GET STACKED DIAGNOSTICS hint = PG_EXCEPTION_HINT;
        IF hint NOT LIKE '%max_locks_per_transaction%' THEN
            RAISE;
        END IF;
        RAISE EXCEPTION 'create_shards(%, %) needs more locks than one transaction can hold', first, last
            USING ERRCODE = 'out_of_memory',
                  DETAIL = pg_catalog.format('The server''s lock table ran out after %s shards (max_locks_per_transaction = %s): each shard created holds its locks, and those of its tables, until the transaction ends. No shard was created.',
                                             made, pg_catalog.current_setting('max_locks_per_transaction')),
                  HINT = pg_catalog.format('CALL shardid.create_shards_proc(%s, %s); creates the shards in batches that commit.', first, last);
    END;
    RETURN made;
END
$$;

COMMENT ON FUNCTION shardid.create_shards(integer, integer) IS
    'Creates shards first..last (inclusive) in one transaction, after checking that none exists; returns how many. For more shards than one transaction can lock, CALL create_shards_proc().';
