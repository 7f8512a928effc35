-- Router, check_cluster() step 9: the shards' copies that differ from
-- their node's template (_copy_drift() there: columns, their order,
-- types, NOT NULL, defaults, constraints, the template's indexes, owner),
-- each with a call on the node (never text to paste): shardid.align_copy()
-- for what it repairs in a transaction (statements built from the
-- template's catalog entries, run as the copy's owner in the fence); a
-- row of its own for each index the copy lacks (or has invalid), whose
-- fix builds it CONCURRENTLY, so that writes go on
-- (shardid.build_copy_index()), or, for a unique index over keys the copy
-- holds twice, lists them (shardid.copy_index_duplicates()): a build that
-- cannot succeed is not offered; and a row for each column the copy has
-- and its template lacks, whose advice names the node and both ways out
-- (drop it there, or give the template and every copy it with
-- apply_ddl()). Text with a control character is shown escaped and gets
-- no fix.
CREATE OR REPLACE FUNCTION shardid_internal._check_copy_differs(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    WITH c AS (
        SELECT f.key AS node, d, (d->>'shard')::integer AS shard, x.unsafe,
               EXISTS (SELECT FROM jsonb_array_elements(d->'steps') AS s WHERE (s->>0)::integer < 4) AS aligns,
               EXISTS (SELECT FROM jsonb_array_elements(d->'steps') AS s WHERE (s->>0)::integer = 4)
                   OR COALESCE(jsonb_array_length(d->'extra'), 0) > 0 AS rows_of_their_own
          FROM jsonb_each(facts) AS f, jsonb_array_elements(COALESCE(f.value->'drift', '[]')) AS d,
               LATERAL (SELECT shardid_internal._unsafe_text(pg_catalog.concat(d->>'table', d->>'table_name', d->>'template', (d->'extra')::text))
                            OR EXISTS (SELECT FROM jsonb_array_elements_text(d->'differences') AS s WHERE shardid_internal._unsafe_text(s))
                            AS unsafe) AS x
    )
    SELECT r.kind, r.shard, r.node, r.detail, r.run_on, r.fix
      FROM (
        -- what align_copy() repairs; text with a control character; no repair at all
        SELECT 'copy_differs' AS kind, c.shard, c.node, 0 AS ord, '' AS what,
               pg_catalog.format('%s on node "%s" differs from its template: %s', c.d->>'table', c.node,
                                 CASE WHEN c.unsafe THEN (c.d->'differences')::text
                                      ELSE (SELECT pg_catalog.string_agg(s, '; ') FROM jsonb_array_elements_text(c.d->'differences') AS s) END) AS detail,
               CASE WHEN c.unsafe OR NOT c.aligns THEN NULL ELSE c.node END AS run_on,
               CASE WHEN c.unsafe THEN '-- a name here has a control character: shardid builds no command with it; look at the copy on the node'
                    WHEN NOT c.aligns THEN '-- the copy has what its template lacks (see the detail): drop it there, or give the template it with apply_ddl()'
                    ELSE pg_catalog.format('SELECT * FROM shardid.align_copy(%s, %L);', c.shard, c.d->>'table_name') END AS fix
          FROM c WHERE c.unsafe OR c.aligns OR NOT c.rows_of_their_own
        UNION ALL
        -- each index to build, CONCURRENTLY; a unique one over duplicates is reported as such
        SELECT 'copy_differs', c.shard, c.node, 1, s->>1,
               CASE WHEN COALESCE((s->>2)::bigint, 0) > 0
                    THEN pg_catalog.format('%s on node "%s" lacks unique index %I of its template, and holds %s %s it refuses: a build would fail; the fix lists them, then CALL shardid.build_copy_index(%s, %L, %L);',
                                           c.d->>'table', c.node, s->>1, s->>2, CASE WHEN (s->>2)::bigint = 1 THEN 'key' ELSE 'keys' END,
                                           c.shard, c.d->>'table_name', s->>1)
                    ELSE pg_catalog.format('%s on node "%s" lacks index %I of its template (or has it invalid); the fix builds it CONCURRENTLY', c.d->>'table', c.node, s->>1) END,
               c.node,
               CASE WHEN COALESCE((s->>2)::bigint, 0) > 0
                    THEN pg_catalog.format('SELECT * FROM shardid.copy_index_duplicates(%s, %L, %L);', c.shard, c.d->>'table_name', s->>1)
                    ELSE pg_catalog.format('CALL shardid.build_copy_index(%s, %L, %L);', c.shard, c.d->>'table_name', s->>1) END
          FROM c, jsonb_array_elements(c.d->'steps') AS s
         WHERE NOT c.unsafe AND (s->>0)::integer = 4
        UNION ALL
        -- each column the template lacks: advice that names the node and the statements
        SELECT 'copy_differs', c.shard, c.node, 2, e->>'column',
               pg_catalog.format('%s on node "%s" has column %I %s, which its template %s lacks', c.d->>'table', c.node, e->>'column', e->>'type', c.d->>'template'),
               c.node,
               pg_catalog.format('-- its data is yours to keep or drop: on node "%s", ALTER TABLE %s DROP COLUMN %I; or, on the router, give the template and every copy it: CALL shardid.apply_ddl(%L, %L);',
                                 c.node, c.d->>'table', e->>'column', c.d->>'template',
                                 pg_catalog.format('ALTER TABLE %%s ADD COLUMN IF NOT EXISTS %I %s', e->>'column', e->>'type'))
          FROM c, jsonb_array_elements(c.d->'extra') AS e
         WHERE NOT c.unsafe
      ) AS r
     ORDER BY r.node COLLATE "C", r.shard, r.detail COLLATE "C", r.ord, r.what COLLATE "C"
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_copy_differs(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_copy_differs(jsonb, jsonb) IS
    'Router, check_cluster(): copy_differs, a shard''s copy that differs from its node''s template: the align_copy() call that aligns it on the node; for each index it lacks, the build_copy_index() call that builds it CONCURRENTLY (a unique one over duplicates: the copy_index_duplicates() call that lists them); for each column its template lacks, advice that names the node and the statements (none when a text has a control character).';
