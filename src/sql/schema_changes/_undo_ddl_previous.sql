-- abandon_ddl(template, undo => true) on a node, for a SET DEFAULT, DROP
-- DEFAULT or SET STATISTICS: the distinct values the column has on the
-- tables that lack the change (_undo_ddl_original), which still hold the
-- value it replaced: the default's expression as the catalog gives it
-- (JSON null: none), or the statistics target. An empty array when every
-- table has the change or the statement sets neither.
CREATE OR REPLACE FUNCTION shardid_internal._undo_ddl_previous(template text, command text, origin text) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    parts text[] := parse_ident(template);
    inv   record;
BEGIN
    inv := shardid_internal._ddl_inverse((shardid_internal._apply_ddl_check(command, parts[1], parts[2])).statement);
    IF inv.inverse IS DISTINCT FROM 'SET DEFAULT' AND inv.inverse IS DISTINCT FROM 'SET STATISTICS' THEN
        RETURN '[]';
    END IF;
    RETURN (SELECT COALESCE(jsonb_agg(DISTINCT v.value), '[]')
              FROM shardid_internal._undo_ddl_original(template, origin) AS o
              JOIN pg_class AS k ON k.oid = to_regclass(format('%I.%I', o.schema_name, o.table_name))
              JOIN pg_attribute AS a ON a.attrelid = k.oid AND a.attname = inv.object_name AND NOT a.attisdropped
              LEFT JOIN pg_attrdef AS d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
              CROSS JOIN LATERAL (SELECT CASE WHEN inv.inverse = 'SET DEFAULT' THEN COALESCE(to_jsonb(pg_get_expr(d.adbin, d.adrelid)), 'null')
                                              ELSE to_jsonb(COALESCE(a.attstattarget::integer, -1)) END AS value) AS v
             WHERE NOT o.has AND NOT o.running);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._undo_ddl_previous(text, text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._undo_ddl_previous(text, text, text) IS
    'abandon_ddl(undo) on a node: for a SET/DROP DEFAULT or SET STATISTICS change, the distinct values of the column on the tables that lack it (the value it replaced; JSON null: no default).';
