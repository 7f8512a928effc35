CREATE OR REPLACE FUNCTION shardid.create_table(template regclass, id_column name DEFAULT 'id') RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t       shardid.sharded_tables;
    r       shardid.shard_registry;
    made    integer := 0;
    hint    text;
BEGIN
    IF template IS NULL OR id_column IS NULL THEN
        RAISE EXCEPTION 'create_table() arguments must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    t := shardid._register_table('create_table()', template, id_column, false);
    BEGIN
        FOR r IN SELECT * FROM shardid.shard_registry ORDER BY shard LOOP
            PERFORM shardid._create_shard_table(r, t);
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
        RAISE EXCEPTION 'create_table() over % shards needs more locks than one transaction can hold',
                (SELECT count(*) FROM shardid.shard_registry)
            USING ERRCODE = 'out_of_memory',
                  DETAIL = pg_catalog.format('The server''s lock table ran out after %s tables (max_locks_per_transaction = %s): each table created holds locks on itself, its indexes, TOAST table and constraints until the transaction ends. No table was created.',
                                             made, pg_catalog.current_setting('max_locks_per_transaction')),
                  HINT = pg_catalog.format('CALL shardid.create_table_proc(%L, %L); creates the tables in batches that commit.',
                                           template::text, id_column);
    END;
    RETURN made;
END
$$;

COMMENT ON FUNCTION shardid.create_table(regclass, name) IS
    'Creates <shard schema>.<template name> (LIKE template INCLUDING ALL) in every shard, in one transaction, id_column DEFAULT shardid.next_id(shard, shard''s id_seq); shards created later get it too. Returns the number of tables created. For more shards than one transaction can lock, CALL create_table_proc().';
