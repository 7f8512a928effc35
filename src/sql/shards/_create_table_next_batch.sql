-- create_table_proc(): the next batch (_create_table_batch), with
-- application_name showing the progress for the batch's transaction
-- (set_config local). Returns how many tables it created, NULL when none
-- was left; the caller commits.
CREATE OR REPLACE FUNCTION shardid_internal._create_table_next_batch(table_name name, batch_size integer, done integer,
                                                                     todo integer) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM set_config('application_name', format('shardid create_table_proc %s %s/%s', table_name, done, todo), true);
    RETURN NULLIF(shardid_internal._create_table_batch(table_name, batch_size), 0);
END
$$;

COMMENT ON FUNCTION shardid_internal._create_table_next_batch(name, integer, integer, integer) IS
    'create_table_proc(): the next batch, application_name showing the progress; how many tables it created, NULL when none was left. Executable by PUBLIC (the procedure calls it).';
