-- Router, check_cluster() step 4: each node's templates against the
-- definition most nodes have (_template_definition() there): a template
-- that differs (advice: what differs, to change with apply_ddl()), or is
-- missing (the create_table() that registers it, once the table is made).
-- A node with only the extension (no sharded table, no shard) is empty,
-- not wrong: a move there makes the templates first.
CREATE OR REPLACE FUNCTION shardid_internal._check_template_differs(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    WITH defs AS (
        SELECT f.key AS node, t.key AS table_name, t.value AS def
          FROM jsonb_each(facts) AS f, jsonb_each(f.value->'templates') AS t
    ), names AS (
        SELECT DISTINCT d.table_name FROM defs AS d
    ), usual AS (
        SELECT DISTINCT ON (d.table_name) d.table_name, d.def, d.node
          FROM defs AS d
         GROUP BY d.table_name, d.def, d.node
         ORDER BY d.table_name, (SELECT pg_catalog.count(*) FROM defs AS o WHERE o.table_name = d.table_name AND o.def = d.def) DESC,
                  d.node COLLATE "C"
    )
    SELECT 'template_differs', NULL::integer, f.key,
           CASE WHEN d.def IS NULL
                THEN pg_catalog.format('sharded table %s is not registered on node "%s" (node "%s" has it): make its template table there as on node "%s", then run the fix',
                                       nm.table_name, f.key, u.node, u.node)
                ELSE pg_catalog.format('the template of sharded table %s on node "%s" differs from node "%s": %s', nm.table_name, f.key, u.node,
                                       (SELECT pg_catalog.string_agg(k.key, ', ' ORDER BY k.key)
                                          FROM jsonb_each(u.def) AS k WHERE d.def->k.key IS DISTINCT FROM k.value)) END,
           CASE WHEN d.def IS NULL THEN f.key END,
           CASE WHEN d.def IS NULL
                THEN pg_catalog.format('SELECT shardid.create_table(%L);', u.def->>'template')
                ELSE pg_catalog.format('-- ALTER TABLE the template %s (and its shards'' copies: CALL shardid.apply_ddl()) to match node "%s"',
                                       d.def->>'template', u.node) END
      FROM jsonb_each(facts) AS f
     CROSS JOIN names AS nm
      JOIN usual AS u ON u.table_name = nm.table_name
      LEFT JOIN defs AS d ON d.node = f.key AND d.table_name = nm.table_name
     WHERE d.def IS DISTINCT FROM u.def
       AND NOT (f.value->'templates' = '{}' AND f.value->'shards' = '[]')
     ORDER BY nm.table_name, f.key COLLATE "C"
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_template_differs(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_template_differs(jsonb, jsonb) IS
    'Router, check_cluster(): template_differs, a node''s template that differs from the one most nodes have (advice), or is missing (its create_table()).';
