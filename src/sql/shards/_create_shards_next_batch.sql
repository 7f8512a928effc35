-- create_shards_proc(): the next batch (_create_shards_batch), with
-- application_name showing the progress for the batch's transaction
-- (set_config local). Returns how many shards it created, NULL when none
-- was left; the caller commits.
CREATE OR REPLACE FUNCTION shardid_internal._create_shards_next_batch(first integer, last integer, batch_size integer,
                                                                      done integer, todo integer) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM set_config('application_name', format('shardid create_shards_proc %s/%s', done, todo), true);
    RETURN NULLIF(shardid_internal._create_shards_batch(first, last, batch_size), 0);
END
$$;

COMMENT ON FUNCTION shardid_internal._create_shards_next_batch(integer, integer, integer, integer, integer) IS
    'create_shards_proc(): the next batch, application_name showing the progress; how many shards it created, NULL when none was left. Executable by PUBLIC (the procedure calls it).';
