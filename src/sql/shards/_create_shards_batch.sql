-- One batch of create_shards_proc(): creates the next batch_size shards of
-- first..last that are not registered yet, in order, and returns how many
-- (0: none is missing). The caller commits after each batch. With
-- batch_size NULL, create_shards(): all of them, in the caller's one
-- transaction, which has checked that none is registered.
CREATE OR REPLACE FUNCTION shardid_internal._create_shards_batch(first integer, last integer, batch_size integer)
    RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    g     integer;
    made  integer := 0;
    hint  text;
BEGIN
    -- Waits for any other registry writer, then sees what it committed.
    LOCK TABLE shardid.shard_registry, shardid.sharded_tables IN SHARE ROW EXCLUSIVE MODE;
    BEGIN
        FOR g IN SELECT x FROM pg_catalog.generate_series(first, last) AS x
                  WHERE NOT EXISTS (SELECT FROM shardid.shard_registry AS s WHERE s.shard = x)
                  ORDER BY x LIMIT batch_size LOOP
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
        PERFORM shardid_internal._raise_out_of_locks(format('create_shards(%s, %s)', first, last), 'shard', 'shards',
                                                     'each shard created holds its locks, and those of its tables,',
                                                     format('shardid.create_shards_proc(%s, %s', first, last), made, batch_size);
    END;
    RETURN made;
END
$$;

COMMENT ON FUNCTION shardid_internal._create_shards_batch(integer, integer, integer) IS
    'One batch of create_shards_proc(): creates up to batch_size unregistered shards of first..last, in order; returns how many. With batch_size NULL, all of them, for create_shards().';
