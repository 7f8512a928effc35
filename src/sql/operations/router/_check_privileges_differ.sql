-- Router, check_cluster() step 10: the shards whose privileges differ from
-- what their node's templates record (_privilege_steps() there: a copy
-- without its template's grants, or with grants its template does not
-- give; a schema or generator without the USAGE those grants need), each
-- with the call that aligns the shard on the node,
-- shardid.align_privileges() (each statement run as the owner of what it
-- touches, in the fence; never text to paste). The fix holds the shard's
-- number only; a detail with a control character is shown escaped.
CREATE OR REPLACE FUNCTION shardid_internal._check_privileges_differ(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'privileges_differ', (d->>'shard')::integer, f.key,
           pg_catalog.format('shard %s on node "%s" differs from the privileges its templates record: %s', (d->>'shard')::integer, f.key,
                             CASE WHEN EXISTS (SELECT FROM jsonb_array_elements_text(d->'differences') AS s WHERE shardid_internal._unsafe_text(s))
                                  THEN (d->'differences')::text
                                  ELSE (SELECT pg_catalog.string_agg(s, '; ') FROM jsonb_array_elements_text(d->'differences') AS s) END),
           f.key,
           pg_catalog.format('SELECT * FROM shardid.align_privileges(%s);', (d->>'shard')::integer)
      FROM jsonb_each(facts) AS f, jsonb_array_elements(COALESCE(f.value->'privileges', '[]')) AS d
     ORDER BY f.key COLLATE "C", (d->>'shard')::integer
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_privileges_differ(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_privileges_differ(jsonb, jsonb) IS
    'Router, check_cluster(): privileges_differ, a shard whose copies, schema or generator differ from the privileges its node''s templates record, with the align_privileges() call that aligns it on the node.';
