-- Router, check_cluster() step 9: the shards' copies that differ from
-- their node's template (_copy_drift() there: columns, their order,
-- types, NOT NULL, defaults, constraints, the template's indexes, owner),
-- with the statements that align them, run on the node; text with a
-- control character is shown escaped and gets no fix.
CREATE OR REPLACE FUNCTION shardid_internal._check_copy_differs(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'copy_differs', (d->>'shard')::integer, f.key,
           pg_catalog.format('%s on node "%s" differs from its template: %s', d->>'table', f.key,
                             CASE WHEN x.unsafe THEN (d->'differences')::text
                                  ELSE (SELECT pg_catalog.string_agg(s, '; ') FROM jsonb_array_elements_text(d->'differences') AS s) END),
           CASE WHEN x.unsafe OR d->>'fix' IS NULL THEN NULL ELSE f.key END,
           CASE WHEN x.unsafe THEN '-- a name here has a control character: shardid builds no command with it; look at the copy on the node'
                WHEN d->>'fix' IS NULL THEN '-- the copy has what its template lacks (see the detail): drop it there, or give the template it with apply_ddl()'
                ELSE d->>'fix' END
      FROM jsonb_each(facts) AS f, jsonb_array_elements(COALESCE(f.value->'drift', '[]')) AS d,
           LATERAL (SELECT shardid_internal._unsafe_text(pg_catalog.concat(d->>'table', d->>'fix'))
                        OR EXISTS (SELECT FROM jsonb_array_elements_text(d->'differences') AS s WHERE shardid_internal._unsafe_text(s))
                        AS unsafe) AS x
     ORDER BY f.key COLLATE "C", (d->>'shard')::integer, d->>'table'
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_copy_differs(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_copy_differs(jsonb, jsonb) IS
    'Router, check_cluster(): copy_differs, a shard''s copy that differs from its node''s template, with the statements that align it (none when a text has a control character).';
