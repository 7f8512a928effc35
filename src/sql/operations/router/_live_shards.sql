-- Router, check_cluster() step 3: the shards the nodes hold live
-- (registered, not retired: facts' shards), but for those being moved,
-- which are live on both of their nodes by design; each with its nodes in
-- name order.
CREATE OR REPLACE FUNCTION shardid_internal._live_shards(facts jsonb)
    RETURNS TABLE (shard integer, nodes text[])
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT (s->>'shard')::integer, pg_catalog.array_agg(f.key ORDER BY f.key COLLATE "C")
      FROM jsonb_each(facts) AS f, jsonb_array_elements(f.value->'shards') AS s
     WHERE NOT EXISTS (SELECT FROM shardid.shard_moves AS m WHERE m.shard = (s->>'shard')::integer)
     GROUP BY 1
$$;

REVOKE ALL ON FUNCTION shardid_internal._live_shards(jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._live_shards(jsonb) IS
    'Router, check_cluster(): the shards the nodes hold live, but those being moved, each with its nodes in name order.';
