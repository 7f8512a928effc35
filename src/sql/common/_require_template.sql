-- Refuses to go on if the template of one sharded table has gone, before a
-- shard gets the table: for _require_templates() (every sharded table) and
-- each batch of create_table_proc() (its own).
CREATE OR REPLACE FUNCTION shardid_internal._require_template(t shardid.sharded_tables) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF pg_catalog.to_regclass(pg_catalog.format('%I.%I', t.template_schema, t.template_name)) IS NULL THEN
        RAISE EXCEPTION 'template %.% of sharded table % no longer exists',
                pg_catalog.quote_ident(t.template_schema), pg_catalog.quote_ident(t.template_name),
                pg_catalog.quote_ident(t.table_name)
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Recreate the template table, or remove the row from shardid.sharded_tables.';
    END IF;
END
$$;

COMMENT ON FUNCTION shardid_internal._require_template(shardid.sharded_tables) IS
    'Raises 55000 if the template of the given sharded table has been dropped.';
