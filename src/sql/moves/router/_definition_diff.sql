-- Router, moves: the differences between two definitions made by
-- _shard_definition() (a on a_name, b on b_name), one sentence each, in
-- order; empty when they are equal.
CREATE OR REPLACE FUNCTION shardid_internal._definition_diff(a jsonb, b jsonb, a_name text, b_name text) RETURNS text[]
    LANGUAGE sql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT COALESCE(array_agg(d.line ORDER BY d.k COLLATE "C"), '{}')
      FROM (SELECT COALESCE(x.key, y.key) AS k,
                   CASE WHEN y.key IS NULL THEN format('%s: %s on %s only', x.key, x.value, a_name)
                        WHEN x.key IS NULL THEN format('%s: %s on %s only', y.key, y.value, b_name)
                        ELSE format('%s: %s on %s, %s on %s', x.key, x.value, a_name, y.value, b_name) END AS line
              FROM jsonb_each_text(a) AS x
              FULL JOIN jsonb_each_text(b) AS y ON y.key = x.key
             WHERE x.value IS DISTINCT FROM y.value) AS d
$$;

REVOKE ALL ON FUNCTION shardid_internal._definition_diff(jsonb, jsonb, text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._definition_diff(jsonb, jsonb, text, text) IS
    'Router, moves: the differences between two shard definitions (_shard_definition()), one sentence each.';
