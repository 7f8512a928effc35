CREATE OR REPLACE FUNCTION shardid.create_table(template regclass, id_column name DEFAULT 'id') RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t       shardid.sharded_tables;
BEGIN
    IF template IS NULL OR id_column IS NULL THEN
        RAISE EXCEPTION 'create_table() arguments must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    t := shardid_internal._register_table('create_table()', template, id_column, false);
    -- Every shard, in one batch (53200 names create_table_proc()).
    RETURN shardid_internal._create_table_batch(t.table_name, NULL);
END
$$;

COMMENT ON FUNCTION shardid.create_table(regclass, name) IS
    'Creates <shard schema>.<template name> (LIKE template INCLUDING ALL) in every shard, in one transaction, id_column DEFAULT shardid.next_id(shard, shard''s id_seq); shards created later get it too. Returns the number of tables created. For more shards than one transaction can lock, CALL create_table_proc().';
