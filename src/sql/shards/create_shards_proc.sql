-- create_shards() in batches that commit, for ranges one transaction cannot
-- lock (8192 shards on a server with default settings), in pg_partman's
-- *_proc convention: the loop of the area's batch procedures
-- (_batch_run). A procedure that COMMITs may have no SET clause (it would
-- make it atomic): the work and the NOTICEs are functions that pin
-- search_path.
CREATE OR REPLACE PROCEDURE shardid.create_shards_proc(first integer, last integer, batch_size integer DEFAULT 256)
    LANGUAGE plpgsql
AS $$
DECLARE
    todo integer;
    done integer[] := '{0,0}';  -- shards, batches
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid.create_shards_proc()',
                                             'after every batch',
                                             'CALL it on its own, or use shardid.create_shards() for a range that fits one transaction.');
    todo := shardid_internal._create_shards_start(first, last, batch_size);
    RAISE NOTICE 'create_shards_proc: % shards of % .. % to create, in batches of %', todo, first, last, batch_size;
    CALL shardid_internal._batch_run('create_shards_proc', 'shards', pg_catalog.jsonb_build_object('first', first, 'last', last),
                                     batch_size, todo, done);
    PERFORM shardid_internal._create_shards_done(first, last, done[1]);
END
$$;

COMMENT ON PROCEDURE shardid.create_shards_proc(integer, integer, integer) IS
    'Creates the shards of first..last (inclusive) that do not exist yet, committing every batch_size shards; re-run it after an interruption to finish. Progress: NOTICEs, and application_name in pg_stat_activity. CALL it on its own, not in a transaction block.';
