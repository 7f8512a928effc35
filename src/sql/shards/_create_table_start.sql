-- The first step of create_table_proc(): the checks of create_table(), then
-- the table's registration (or, re-run, the same registration found again).
-- Returns the table's name, how many shards lack it and how many there are.
CREATE OR REPLACE FUNCTION shardid_internal._create_table_start(template regclass, id_column name, batch_size integer,
                                                       OUT table_name name, OUT todo integer, OUT shards integer)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t shardid.sharded_tables;
BEGIN
    IF template IS NULL OR id_column IS NULL OR batch_size IS NULL THEN
        RAISE EXCEPTION 'create_table_proc() arguments must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    PERFORM shardid_internal._require_batch_size(batch_size);
    t := shardid_internal._register_table('create_table_proc()', template, id_column, true);
    table_name := t.table_name;
    SELECT count(*),
           count(*) FILTER (WHERE pg_catalog.to_regclass(pg_catalog.format('%I.%I', s.schema_name, t.table_name)) IS NULL)
        INTO shards, todo
        FROM shardid.shard_registry AS s;
END
$$;

COMMENT ON FUNCTION shardid_internal._create_table_start(regclass, name, integer) IS
    'The checks and registration of create_table_proc() before its first batch; returns the table name, how many shards lack it and how many shards there are.';
