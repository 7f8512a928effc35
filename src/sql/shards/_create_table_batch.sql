-- One batch of create_table_proc(): creates the registered sharded table in
-- the next batch_size shards that lack it, in shard order, and returns how
-- many (0: every shard has it). The caller commits after each batch. With
-- batch_size NULL, create_table(): every shard, in the caller's one
-- transaction, which has just registered the table.
CREATE OR REPLACE FUNCTION shardid_internal._create_table_batch(table_name name, batch_size integer)
    RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t     shardid.sharded_tables;
    r     shardid.shard_registry;
    made  integer := 0;
    hint  text;
BEGIN
    -- Waits for any other registry writer, then sees what it committed.
    LOCK TABLE shardid.shard_registry, shardid.sharded_tables IN SHARE ROW EXCLUSIVE MODE;
    SELECT * INTO t FROM shardid.sharded_tables AS x WHERE x.table_name = _create_table_batch.table_name;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'sharded table "%" is no longer registered', table_name
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Its row of shardid.sharded_tables was deleted while create_table_proc() ran.';
    END IF;
    PERFORM shardid_internal._require_template(t);
    BEGIN
        -- One catalog lookup per shard, in shard order, until the batch is
        -- full: a join with pg_class could be planned as a nested loop over
        -- every shard's copy, once per shard.
        FOR r IN SELECT s.* FROM shardid.shard_registry AS s
                  WHERE pg_catalog.to_regclass(pg_catalog.format('%I.%I', s.schema_name, t.table_name)) IS NULL
                  ORDER BY s.shard LIMIT batch_size LOOP
            PERFORM shardid_internal._create_shard_table(r, t);
            made := made + 1;
        END LOOP;
    EXCEPTION WHEN out_of_memory THEN
        -- 53200 "out of shared memory" from the lock table: every table
        -- created holds its locks (table, indexes, TOAST, constraints)
        -- until the transaction ends.
        GET STACKED DIAGNOSTICS hint = PG_EXCEPTION_HINT;
        IF hint NOT LIKE '%max_locks_per_transaction%' THEN
            RAISE;
        END IF;
        PERFORM shardid_internal._raise_out_of_locks(format('create_table() over %s shards', (SELECT count(*) FROM shardid.shard_registry)),
                                                     'table', 'shard tables',
                                                     'each table created holds locks on itself, its indexes, TOAST table and constraints',
                                                     format('shardid.create_table_proc(%L, %L', format('%I.%I', t.template_schema, t.template_name),
                                                            t.id_column),
                                                     made, batch_size);
    END;
    RETURN made;
END
$$;

COMMENT ON FUNCTION shardid_internal._create_table_batch(name, integer) IS
    'One batch of create_table_proc(): creates the sharded table in up to batch_size shards that lack it, in shard order; returns how many. With batch_size NULL, every shard, for create_table().';
