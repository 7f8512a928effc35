-- The undo of create_table(): drops the sharded table made from a template
-- in every registered shard of this database and unregisters it, so shards
-- created later no longer get it; the template itself is left to its owner
-- (the event trigger shardid_template_drop lets it be dropped from then
-- on). Runs with the caller's rights: it needs the registry privileges of
-- create_table(), ownership of the template, and DROP TABLE refuses copies
-- the caller does not own. One transaction: over thousands of shards it
-- takes one lock per copy (max_locks_per_transaction). Returns how many
-- copies it dropped.
CREATE OR REPLACE FUNCTION shardid.drop_table(template regclass) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c       pg_catalog.pg_class;
    nsp     name;
    t       shardid.sharded_tables;
    s       record;
    dropped integer := 0;
BEGIN
    IF template IS NULL THEN
        RAISE EXCEPTION 'template must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    SELECT * INTO c FROM pg_catalog.pg_class AS x WHERE x.oid = template;
    SELECT n.nspname INTO nsp FROM pg_catalog.pg_namespace AS n WHERE n.oid = c.relnamespace;
    PERFORM shardid_internal._require_registry_privileges('drop sharded tables', false);
    IF NOT pg_catalog.pg_has_role(c.relowner, 'USAGE') THEN
        RAISE EXCEPTION 'must be owner of table %', template
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'Only the template''s owner may drop the sharded table made from it.';
    END IF;
    LOCK TABLE shardid.shard_registry, shardid.sharded_tables IN SHARE ROW EXCLUSIVE MODE;
    SELECT * INTO t FROM shardid.sharded_tables AS x
     WHERE x.template_schema = nsp AND x.template_name = c.relname;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'table % is not the template of a sharded table', template
            USING ERRCODE = 'undefined_object',
                  HINT = 'shardid.sharded_tables lists the sharded tables and their templates.';
    END IF;
    FOR s IN SELECT r.shard, r.schema_name FROM shardid.shard_registry AS r ORDER BY r.shard LOOP
        IF pg_catalog.to_regclass(pg_catalog.format('%I.%I', s.schema_name, t.table_name)) IS NOT NULL THEN
            EXECUTE pg_catalog.format('DROP TABLE %I.%I', s.schema_name, t.table_name);
            dropped := dropped + 1;
        END IF;
    END LOOP;
    DELETE FROM shardid.sharded_tables AS x WHERE x.table_name = t.table_name;
    RETURN dropped;
END
$$;

COMMENT ON FUNCTION shardid.drop_table(regclass) IS
    'Drops the sharded table made from a template in every shard, in one transaction, and unregisters it; leaves the template, which may then be dropped. Returns the number of tables dropped.';
