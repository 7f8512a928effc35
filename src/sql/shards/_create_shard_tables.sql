-- Creates the sharded tables of one shard (all of them, or only those it
-- lacks). Callers have checked the shard, its schema and the templates.
CREATE OR REPLACE FUNCTION shardid_internal._create_shard_tables(shard integer, only_missing boolean DEFAULT false)
    RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r      shardid.shard_registry;
    t      shardid.sharded_tables;
    made   integer := 0;
BEGIN
    SELECT * INTO STRICT r FROM shardid.shard_registry AS s
        WHERE s.shard = _create_shard_tables.shard;
    FOR t IN SELECT * FROM shardid.sharded_tables ORDER BY position LOOP
        IF only_missing AND pg_catalog.to_regclass(pg_catalog.format('%I.%I', r.schema_name, t.table_name)) IS NOT NULL THEN
            CONTINUE;
        END IF;
        PERFORM shardid_internal._create_shard_table(r, t);
        made := made + 1;
    END LOOP;
    RETURN made;
END
$$;

COMMENT ON FUNCTION shardid_internal._create_shard_tables(integer, boolean) IS
    'Creates the registered sharded tables (all, or only the missing ones) in one shard.';
