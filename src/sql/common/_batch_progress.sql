-- The batch procedures (create_shards_proc, create_table_proc, apply_ddl),
-- after a commit: counts what it committed (done: {items, batches}, made
-- items more) and reports it as caller: every batch, or, with every,
-- each time the items done pass a multiple of every (batches whose size
-- varies: apply_ddl's, bounded by time, or items done one at a time).
-- Returns the counts.
CREATE OR REPLACE FUNCTION shardid_internal._batch_progress(caller text, items text, done integer[], made integer, todo integer,
                                                            every integer DEFAULT NULL) RETURNS integer[]
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    done := ARRAY[done[1] + made, done[2] + 1];
    IF every IS NULL THEN
        RAISE NOTICE '%: batch % committed: % of % % done', caller, done[2], done[1], todo, items;
    ELSIF done[1] / every > (done[1] - made) / every THEN
        RAISE NOTICE '%: % of % % done', caller, done[1], todo, items;
    END IF;
    RETURN done;
END
$$;

COMMENT ON FUNCTION shardid_internal._batch_progress(text, text, integer[], integer, integer, integer) IS
    'The batch procedures: counts the items and batches committed and reports them (every batch, or each time the items done pass a multiple of every); returns the counts. Executable by PUBLIC (the procedures call it).';
