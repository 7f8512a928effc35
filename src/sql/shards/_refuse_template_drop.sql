-- Event trigger (sql_drop, shardid_template_drop): a registered template
-- is the definition every shard's copy was made from and shards created
-- later are made from, so dropping it (DROP TABLE, DROP SCHEMA ... CASCADE,
-- DROP OWNED) is refused, naming drop_table(). Unrelated drops cost a scan
-- of the dropped objects. It is an extension member: pg_dump leaves it out
-- (CREATE EXTENSION brings it), and DROP EXTENSION drops it.
CREATE OR REPLACE FUNCTION shardid_internal._refuse_template_drop() RETURNS event_trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t      shardid.sharded_tables;
    copies bigint;
BEGIN
    SELECT s.* INTO t
      FROM pg_catalog.pg_event_trigger_dropped_objects() AS d
      JOIN shardid.sharded_tables AS s
        ON s.template_schema = d.schema_name AND s.template_name = d.object_name
     WHERE d.object_type = 'table'
     ORDER BY s.position LIMIT 1;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    SELECT count(*) INTO copies FROM shardid.shard_registry AS r
     WHERE pg_catalog.to_regclass(pg_catalog.format('%I.%I', r.schema_name, t.table_name)) IS NOT NULL;
    -- _raise: the error is the DROP's, with no CONTEXT line of this function
    PERFORM shardid_internal._raise('2BP01',
        pg_catalog.format('cannot drop table %I.%I: it is the template of sharded table %I',
                          t.template_schema, t.template_name, t.table_name),
        pg_catalog.format('Shards of this database with a copy of it: %s; shards created later are made from it.', copies),
        pg_catalog.format('Drop the sharded table first: SELECT shardid.drop_table(%L); drops its copy in every shard and unregisters it.',
                          pg_catalog.format('%I.%I', t.template_schema, t.template_name)));
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._refuse_template_drop() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._refuse_template_drop() IS
    'Event trigger shardid_template_drop (sql_drop): refuses dropping the template of a sharded table (2BP01), naming drop_table().';
