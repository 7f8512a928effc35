-- create_table() in batches that commit, for more shards than one
-- transaction can lock (8192 on a server with default settings), in
-- pg_partman's *_proc convention: the loop of the area's batch procedures
-- (_batch_run). No SET clause (a procedure with one cannot COMMIT): the
-- work and the NOTICEs are functions that pin search_path.
CREATE OR REPLACE PROCEDURE shardid.create_table_proc(template regclass, id_column name DEFAULT 'id', batch_size integer DEFAULT 256)
    LANGUAGE plpgsql
AS $$
DECLARE
    s    record;
    done integer[] := '{0,0}';  -- tables, batches
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid.create_table_proc()',
                                             'after every batch',
                                             'CALL it on its own, or use shardid.create_table() when every shard''s table fits one transaction.');
    SELECT * INTO s FROM shardid_internal._create_table_start(template, id_column, batch_size) AS x;
    RAISE NOTICE 'create_table_proc: % of % shards to get table %, in batches of %', s.todo, s.shards, s.table_name, batch_size;
    CALL shardid_internal._batch_run('create_table_proc', 'tables', pg_catalog.jsonb_build_object('table_name', s.table_name),
                                     batch_size, s.todo, done);
    PERFORM shardid_internal._create_table_done(s.table_name, done[1], s.shards);
END
$$;

COMMENT ON PROCEDURE shardid.create_table_proc(regclass, name, integer) IS
    'create_table() in batches: registers the sharded table, then creates it in the shards that lack it, committing every batch_size tables; re-run it after an interruption to finish. Progress: NOTICEs, and application_name in pg_stat_activity. CALL it on its own, not in a transaction block.';
