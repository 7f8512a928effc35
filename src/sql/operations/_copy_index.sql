-- Node, for build_copy_index() and copy_index_duplicates(): a shard's
-- copy of a sharded table and the template's index of that name (42P01
-- without the copy, 42704 without the index on the template), with the
-- copy's own index of that name if it has one (NULL otherwise) and
-- whether that one is valid.
CREATE OR REPLACE FUNCTION shardid_internal._copy_index(shard integer, table_name name, index_name name,
                                                        OUT copy regclass, OUT index oid, OUT own oid, OUT own_valid boolean)
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    tmpl regclass;
BEGIN
    SELECT to_regclass(format('%I.%I', r.schema_name, t.table_name)), to_regclass(format('%I.%I', t.template_schema, t.template_name))
      INTO copy, tmpl
      FROM shardid.shard_registry AS r, shardid.sharded_tables AS t
     WHERE r.shard = _copy_index.shard AND t.table_name = _copy_index.table_name;
    IF copy IS NULL OR tmpl IS NULL THEN
        RAISE EXCEPTION 'shard % has no copy of sharded table % here', shard, quote_ident(table_name)
            USING ERRCODE = 'undefined_table',
                  HINT = 'shardid.shard_registry lists the shards of this node, shardid.sharded_tables the sharded tables.';
    END IF;
    SELECT x.indexrelid INTO index FROM pg_index AS x JOIN pg_class AS i ON i.oid = x.indexrelid
     WHERE x.indrelid = tmpl AND i.relname = index_name;
    IF index IS NULL THEN
        RAISE EXCEPTION 'the template of sharded table % has no index %', quote_ident(table_name), quote_ident(index_name)
            USING ERRCODE = 'undefined_object';
    END IF;
    SELECT x.indexrelid, x.indisvalid INTO own, own_valid FROM pg_index AS x JOIN pg_class AS i ON i.oid = x.indexrelid
     WHERE x.indrelid = copy AND i.relname = index_name;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._copy_index(integer, name, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._copy_index(integer, name, name) IS
    'Node, build_copy_index() and copy_index_duplicates(): a shard''s copy, its template''s index of a name (42P01, 42704 when missing), and the copy''s own index of that name (valid or not), if any.';
