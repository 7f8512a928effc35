-- create_table() in batches that commit, for more shards than one
-- transaction can lock (8192 on a server with default settings), in
-- pg_partman's *_proc convention. No SET clause (a procedure with one
-- cannot COMMIT): the body schema-qualifies every name and leaves the work
-- to functions that pin search_path.
CREATE OR REPLACE PROCEDURE shardid.create_table_proc(template regclass, id_column name DEFAULT 'id', batch_size integer DEFAULT 256)
    LANGUAGE plpgsql
AS $$
DECLARE
    tname    name;
    todo     integer;
    shards   integer;
    done     integer := 0;
    made     integer;
    batches  integer := 0;
BEGIN
    IF NOT shardid_internal._commit_allowed() THEN
        RAISE EXCEPTION 'shardid.create_table_proc() cannot run inside a transaction block'
            USING ERRCODE = 'active_sql_transaction',
                  DETAIL = 'It commits after every batch, which a CALL inside BEGIN ... COMMIT, a function, an EXCEPTION block or a multi-statement query string cannot do.',
                  HINT = 'CALL it on its own, or use shardid.create_table() when every shard''s table fits one transaction.';
    END IF;
    SELECT s.table_name, s.todo, s.shards INTO tname, todo, shards
        FROM shardid_internal._create_table_start(template, id_column, batch_size) AS s;
    RAISE NOTICE 'create_table_proc: % of % shards to get table %, in batches of %', todo, shards, tname, batch_size;
    LOOP
        -- Progress for pg_stat_activity; SET LOCAL, so it ends with the batch.
        PERFORM pg_catalog.set_config('application_name',
                                      pg_catalog.format('shardid create_table_proc %s %s/%s', tname, done, todo), true);
        made := shardid_internal._create_table_batch(tname, batch_size);
        EXIT WHEN made OPERATOR(pg_catalog.=) 0;
        COMMIT;
        done := done OPERATOR(pg_catalog.+) made;
        batches := batches OPERATOR(pg_catalog.+) 1;
        RAISE NOTICE 'create_table_proc: batch % committed: % of % tables done', batches, done, todo;
    END LOOP;
    RAISE NOTICE 'create_table_proc: table %: % created, % of % shards had it already', tname, done, shards OPERATOR(pg_catalog.-) done, shards;
END
$$;

COMMENT ON PROCEDURE shardid.create_table_proc(regclass, name, integer) IS
    'create_table() in batches: registers the sharded table, then creates it in the shards that lack it, committing every batch_size tables; re-run it after an interruption to finish. Progress: NOTICEs, and application_name in pg_stat_activity. CALL it on its own, not in a transaction block.';
