-- The batch procedures of this area (create_shards_proc(),
-- create_table_proc()), one list: the next batch of job, with its
-- arguments (args: first and last, or table_name), application_name
-- showing the progress (done of todo); how many shards or tables it
-- created, NULL when none was left. _batch_run() calls it between its
-- commits.
CREATE OR REPLACE FUNCTION shardid_internal._batch_next(job text, args jsonb, batch_size integer, done integer, todo integer)
    RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    made integer;
BEGIN
    PERFORM set_config('application_name', concat_ws(' ', 'shardid', job, args->>'table_name', format('%s/%s', done, todo)), true);
    CASE job
        WHEN 'create_shards_proc' THEN
            made := shardid_internal._create_shards_batch((args->>'first')::integer, (args->>'last')::integer, batch_size);
        WHEN 'create_table_proc' THEN
            made := shardid_internal._create_table_batch((args->>'table_name')::name, batch_size);
    END CASE;
    RETURN NULLIF(made, 0);
END
$$;

COMMENT ON FUNCTION shardid_internal._batch_next(text, jsonb, integer, integer, integer) IS
    'create_shards_proc() and create_table_proc(): the next batch of a job with its arguments, application_name showing the progress; how many it created, NULL when none was left. Executable by PUBLIC (the procedures call it).';
