-- Refuses to go on if a sharded table's template has gone, before a shard
-- gets any table.
CREATE OR REPLACE FUNCTION shardid._check_templates() RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t shardid.sharded_tables;
BEGIN
    FOR t IN SELECT * FROM shardid.sharded_tables ORDER BY position LOOP
        IF pg_catalog.to_regclass(pg_catalog.format('%I.%I', t.template_schema, t.template_name)) IS NULL THEN
            RAISE EXCEPTION 'template %.% of sharded table % no longer exists',
                    pg_catalog.quote_ident(t.template_schema), pg_catalog.quote_ident(t.template_name),
                    pg_catalog.quote_ident(t.table_name)
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'Recreate the template table, or remove the row from shardid.sharded_tables.';
        END IF;
    END LOOP;
END
$$;

COMMENT ON FUNCTION shardid._check_templates() IS
    'Raises 55000 if the template of a sharded table has been dropped.';
