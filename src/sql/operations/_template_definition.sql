-- Node: the definition of a sharded table's template that every node must
-- agree on (check_cluster() compares them): its id column and creation
-- order, its columns (name, type, NOT NULL, default) in order, its
-- constraints and its indexes, by name, each its shape
-- (_index_statement(): without its name and table).
CREATE OR REPLACE FUNCTION shardid_internal._template_definition(table_name name) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT jsonb_build_object(
        'template', pg_catalog.format('%I.%I', t.template_schema, t.template_name),
        'id_column', t.id_column,
        'position', t.position,
        'columns', (SELECT COALESCE(jsonb_agg(jsonb_build_array(a.attname, format_type(a.atttypid, a.atttypmod),
                                                                a.attnotnull, pg_get_expr(d.adbin, d.adrelid))
                                              ORDER BY a.attnum), '[]')
                      FROM pg_attribute AS a
                      LEFT JOIN pg_attrdef AS d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                     WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped),
        'constraints', (SELECT COALESCE(jsonb_object_agg(k.conname, pg_get_constraintdef(k.oid)), '{}')
                          FROM pg_constraint AS k WHERE k.conrelid = c.oid),
        'indexes', (SELECT COALESCE(jsonb_object_agg(i.relname, shardid_internal._index_statement(x.indexrelid)), '{}')
                      FROM pg_index AS x JOIN pg_class AS i ON i.oid = x.indexrelid
                     WHERE x.indrelid = c.oid))
      FROM shardid.sharded_tables AS t
      LEFT JOIN pg_namespace AS n ON n.nspname = t.template_schema
      LEFT JOIN pg_class AS c ON c.relnamespace = n.oid AND c.relname = t.template_name
     WHERE t.table_name = _template_definition.table_name
$$;

REVOKE ALL ON FUNCTION shardid_internal._template_definition(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._template_definition(name) IS
    'Node: a sharded table''s template definition as check_cluster() compares it between nodes (id column, position, columns, constraints, indexes).';
