-- Router, check_cluster() step 9: the shards' copies that differ from
-- their node's template (_copy_drift() there: columns, their order,
-- types, NOT NULL, defaults, constraints, the template's indexes, owner),
-- each with the call that aligns it on the node, shardid.align_copy()
-- (statements built from the template's catalog entries, run as the
-- copy's owner in the fence; never text to paste); text with a control
-- character is shown escaped and gets no fix.
CREATE OR REPLACE FUNCTION shardid_internal._check_copy_differs(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'copy_differs', (d->>'shard')::integer, f.key,
           pg_catalog.format('%s on node "%s" differs from its template: %s', d->>'table', f.key,
                             CASE WHEN x.unsafe THEN (d->'differences')::text
                                  ELSE (SELECT pg_catalog.string_agg(s, '; ') FROM jsonb_array_elements_text(d->'differences') AS s) END),
           CASE WHEN x.unsafe OR x.no_steps THEN NULL ELSE f.key END,
           CASE WHEN x.unsafe THEN '-- a name here has a control character: shardid builds no command with it; look at the copy on the node'
                WHEN x.no_steps THEN '-- the copy has what its template lacks (see the detail): drop it there, or give the template it with apply_ddl()'
                ELSE pg_catalog.format('SELECT * FROM shardid.align_copy(%s, %L);', (d->>'shard')::integer, d->>'table_name') END
      FROM jsonb_each(facts) AS f, jsonb_array_elements(COALESCE(f.value->'drift', '[]')) AS d,
           LATERAL (SELECT shardid_internal._unsafe_text(pg_catalog.concat(d->>'table', d->>'table_name'))
                        OR EXISTS (SELECT FROM jsonb_array_elements_text(d->'differences') AS s WHERE shardid_internal._unsafe_text(s))
                        AS unsafe,
                        COALESCE(jsonb_array_length(d->'steps'), 0) = 0 AS no_steps) AS x
     ORDER BY f.key COLLATE "C", (d->>'shard')::integer, d->>'table'
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_copy_differs(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_copy_differs(jsonb, jsonb) IS
    'Router, check_cluster(): copy_differs, a shard''s copy that differs from its node''s template, with the align_copy() call that aligns it on the node (none when a text has a control character).';
