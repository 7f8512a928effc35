-- create_shards() in batches that commit, for ranges one transaction cannot
-- lock (8192 shards on a server with default settings), in pg_partman's
-- *_proc convention. A procedure that COMMITs may have no SET clause (it
-- would make it atomic), so its body schema-qualifies every name and leaves
-- the work to functions that pin search_path.
CREATE OR REPLACE PROCEDURE shardid.create_shards_proc(first integer, last integer, batch_size integer DEFAULT 256)
    LANGUAGE plpgsql
AS $$
DECLARE
    todo     integer;
    done     integer := 0;
    made     integer;
    batches  integer := 0;
BEGIN
    IF NOT shardid_internal._commit_allowed() THEN
        RAISE EXCEPTION 'shardid.create_shards_proc() cannot run inside a transaction block'
            USING ERRCODE = 'active_sql_transaction',
                  DETAIL = 'It commits after every batch, which a CALL inside BEGIN ... COMMIT, a function, an EXCEPTION block or a multi-statement query string cannot do.',
                  HINT = 'CALL it on its own, or use shardid.create_shards() for a range that fits one transaction.';
    END IF;
    todo := shardid_internal._create_shards_start(first, last, batch_size);
    RAISE NOTICE 'create_shards_proc: % shards of % .. % to create, in batches of %', todo, first, last, batch_size;
    LOOP
        -- Progress for pg_stat_activity; SET LOCAL, so it ends with the batch.
        PERFORM pg_catalog.set_config('application_name',
                                      pg_catalog.format('shardid create_shards_proc %s/%s', done, todo), true);
        made := shardid_internal._create_shards_batch(first, last, batch_size);
        EXIT WHEN made OPERATOR(pg_catalog.=) 0;
        COMMIT;
        done := done OPERATOR(pg_catalog.+) made;
        batches := batches OPERATOR(pg_catalog.+) 1;
        RAISE NOTICE 'create_shards_proc: batch % committed: % of % shards done', batches, done, todo;
    END LOOP;
    RAISE NOTICE 'create_shards_proc: shards % .. %: % created, % existed already',
        first, last, done, (last OPERATOR(pg_catalog.-) first OPERATOR(pg_catalog.+) 1) OPERATOR(pg_catalog.-) done;
END
$$;

COMMENT ON PROCEDURE shardid.create_shards_proc(integer, integer, integer) IS
    'Creates the shards of first..last (inclusive) that do not exist yet, committing every batch_size shards; re-run it after an interruption to finish. Progress: NOTICEs, and application_name in pg_stat_activity. CALL it on its own, not in a transaction block.';
