-- create_table_proc(): the NOTICE that ends it: the shards that got the
-- table (done) and those that had it already.
CREATE OR REPLACE FUNCTION shardid_internal._create_table_done(table_name name, done integer, shards integer) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE NOTICE 'create_table_proc: table %: % created, % of % shards had it already', table_name, done, shards - done, shards;
END
$$;

COMMENT ON FUNCTION shardid_internal._create_table_done(name, integer, integer) IS
    'create_table_proc(): the NOTICE that ends it: tables created, and how many shards had it already. Executable by PUBLIC (the procedure calls it).';
