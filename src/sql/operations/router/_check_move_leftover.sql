-- Router, check_cluster() step 5: what a move leaves on a node when it is
-- interrupted, with no such move in progress: a publication,
-- subscription, slot or role named like a move's
-- (shardid_move_<shard>_<move id>; roles belong to a server: nodes that
-- share one report it each), and shardid's freeze triggers (known by
-- their function on the node), each with the call that removes it there
-- (drop_move_leftover(), unfreeze_shard_tables()).
CREATE OR REPLACE FUNCTION shardid_internal._check_move_leftover(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    WITH moving AS (
        SELECT shardid_internal._move_name(m.shard, m.move_id)::text AS name, m.shard, m.source, m.schema_name FROM shardid.shard_moves AS m
    ), things AS (
        SELECT f.key AS node, o.what, x.name
          FROM jsonb_each(facts) AS f,
               (VALUES ('publication', 'publications'), ('subscription', 'subscriptions'),
                       ('replication slot', 'slots'), ('role', 'roles')) AS o(what, k),
               jsonb_array_elements_text(f.value->o.k) AS x(name)
    )
    SELECT 'move_leftover', pg_catalog.substring(t.name, '^shardid_move_([0-9]+)_')::integer, t.node,
           pg_catalog.format('%s %s on node "%s" belongs to no move in progress', t.what, t.name, t.node),
           t.node,
           pg_catalog.format('SELECT shardid.drop_move_leftover(%L, %L);', t.what, t.name)
      FROM things AS t
     WHERE NOT EXISTS (SELECT FROM moving AS m WHERE m.name = t.name)
    UNION ALL
    SELECT 'move_leftover', r.shard, f.key,
           pg_catalog.format('schema %s on node "%s" has shardid''s freeze triggers and no move from there is in progress', x.schema_name, f.key),
           f.key,
           pg_catalog.format('SELECT shardid.unfreeze_shard_tables(%L);', x.schema_name)
      FROM jsonb_each(facts) AS f
     CROSS JOIN jsonb_array_elements_text(f.value->'frozen') AS x(schema_name)
      LEFT JOIN LATERAL (SELECT (s->>'shard')::integer AS shard FROM jsonb_array_elements(f.value->'shards') AS s
                          WHERE s->>'schema' = x.schema_name) AS r ON true
     WHERE NOT EXISTS (SELECT FROM moving AS m WHERE m.source = f.key AND m.schema_name = x.schema_name)
     ORDER BY 3, 4
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_move_leftover(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_move_leftover(jsonb, jsonb) IS
    'Router, check_cluster(): move_leftover, a publication, subscription, slot, role or freeze trigger of a move no longer in progress, with the call that removes it on its node (drop_move_leftover(), unfreeze_shard_tables()).';
