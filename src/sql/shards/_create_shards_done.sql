-- create_shards_proc(): the NOTICE that ends it: the shards of first..last
-- it created (done) and those that existed already.
CREATE OR REPLACE FUNCTION shardid_internal._create_shards_done(first integer, last integer, done integer) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE NOTICE 'create_shards_proc: shards % .. %: % created, % existed already', first, last, done, (last - first + 1) - done;
END
$$;

COMMENT ON FUNCTION shardid_internal._create_shards_done(integer, integer, integer) IS
    'create_shards_proc(): the NOTICE that ends it: shards created, and how many existed already. Executable by PUBLIC (the procedure calls it).';
