-- The loop of the batch procedures of this area (create_shards_proc(),
-- create_table_proc()), in pg_partman's *_proc convention: the next batch
-- (_batch_next), committed, then counted and reported (_batch_progress),
-- until none is left; done counts the items and batches ({items,
-- batches}). No SET clause (it COMMITs): it holds the loop and its
-- COMMITs; executable by PUBLIC as the procedures are (their batches
-- check the caller).
CREATE OR REPLACE PROCEDURE shardid_internal._batch_run(job text, items text, args jsonb, batch_size integer, todo integer,
                                                        INOUT done integer[])
    LANGUAGE plpgsql
AS $$
DECLARE
    made integer;
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), pg_catalog.format('shardid.%s()', job),
                                             'after every batch');
    LOOP
        made := shardid_internal._batch_next(job, args, batch_size, done[1], todo);
        EXIT WHEN made IS NULL;
        COMMIT;
        done := shardid_internal._batch_progress(job, items, done, made, todo);
    END LOOP;
END
$$;

COMMENT ON PROCEDURE shardid_internal._batch_run(text, text, jsonb, integer, integer, integer[]) IS
    'The loop of create_shards_proc() and create_table_proc(): the next batch, committed, counted and reported, until none is left. Executable by PUBLIC (the procedures call it; their batches check the caller).';
