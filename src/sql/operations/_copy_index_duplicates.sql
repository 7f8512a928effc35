-- Node: the duplicates that keep a template's unique index off a shard's
-- copy, read through the fence (_run_as_owner_read: as the copy's owner,
-- read-only, for the index's expressions and predicate are the owner's
-- code). The query groups the copy's rows by the index's keys (each key
-- column or expression as the catalog gives it, pg_get_indexdef() under
-- the pinned search_path; within its predicate; NULL keys apart unless
-- the index has NULLS NOT DISTINCT) and keeps the keys with more than one
-- row. listing false: how many keys are duplicated (a bigint, as text);
-- true: each key (its row, as text) with its rows, as a JSON array.
-- NULL when the index is not unique.
CREATE OR REPLACE FUNCTION shardid_internal._copy_index_duplicates(copy regclass, index oid, listing boolean) RETURNS text
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    x     record;
    keys  text;
    cond  text;
    sql   text;
BEGIN
    SELECT i.indisunique, i.indnkeyatts, i.indrelid, pg_get_expr(i.indpred, i.indrelid, true) AS pred,
           COALESCE((to_jsonb(i)->>'indnullsnotdistinct')::boolean, false) AS nulls_not_distinct
      INTO x FROM pg_index AS i WHERE i.indexrelid = index;
    IF NOT FOUND OR NOT x.indisunique THEN
        RETURN NULL;
    END IF;
    SELECT string_agg(format('(%s)', pg_get_indexdef(index, k, true)), ', ' ORDER BY k),
           string_agg(format('(%s) IS NOT NULL', pg_get_indexdef(index, k, true)), ' AND ' ORDER BY k)
      INTO keys, cond
      FROM generate_series(1, x.indnkeyatts) AS k;
    cond := concat_ws(' AND ', CASE WHEN x.pred IS NOT NULL THEN format('(%s)', x.pred) END,
                      CASE WHEN NOT x.nulls_not_distinct THEN cond END);
    sql := format('SELECT ROW(%s)::pg_catalog.text AS key, pg_catalog.count(*) AS row_count FROM %s%s GROUP BY %s HAVING pg_catalog.count(*) OPERATOR(pg_catalog.>) 1',
                  keys, copy, CASE WHEN cond <> '' THEN ' WHERE ' || cond ELSE '' END, keys);
    sql := CASE WHEN listing
                THEN format('SELECT COALESCE(pg_catalog.jsonb_agg(pg_catalog.to_jsonb(d) ORDER BY d.row_count DESC, d.key), ''[]'')::pg_catalog.text FROM (%s) AS d', sql)
                ELSE format('SELECT pg_catalog.count(*)::pg_catalog.text FROM (%s) AS d', sql) END;
    RETURN shardid_internal._run_as_owner_read((SELECT c.relowner FROM pg_class AS c WHERE c.oid = copy)::regrole, sql);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._copy_index_duplicates(regclass, oid, boolean) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._copy_index_duplicates(regclass, oid, boolean) IS
    'Node: the keys of a unique index (of the template) that a shard''s copy holds more than once, read as the copy''s owner, read-only: how many, or (listing) each with its rows as JSON; NULL for an index that is not unique.';
