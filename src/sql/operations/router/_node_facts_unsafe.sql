-- Router, check_cluster(): the texts of a node's facts (_node_facts())
-- that hold a control character (_unsafe_text()): what each is, its name
-- as read, and, for an unfinished apply_ddl() change, its ID in the
-- node's ledger. check_cluster() reports each as unsafe_name and leaves
-- them out of every other check (_node_facts_safe()), so none reaches a
-- fix.
CREATE OR REPLACE FUNCTION shardid_internal._node_facts_unsafe(facts jsonb)
    RETURNS TABLE (what text, name text, shard integer, change_id bigint)
    LANGUAGE sql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT x.what, x.name, x.shard, x.change_id
      FROM (SELECT 'schema of shard ' || (s->>'shard'), s->>'schema', (s->>'shard')::integer, NULL::bigint
              FROM jsonb_array_elements(facts->'shards') AS s
            UNION ALL
            SELECT 'sharded table', t.key, NULL, NULL FROM jsonb_each(facts->'templates') AS t
            UNION ALL
            SELECT 'template of sharded table', t.value->>'template', NULL, NULL FROM jsonb_each(facts->'templates') AS t
             WHERE NOT shardid_internal._unsafe_text(t.key)
            UNION ALL
            SELECT o.what, n.name, NULL, NULL
              FROM (VALUES ('schema with shardid''s freeze triggers', 'frozen'), ('publication', 'publications'),
                           ('subscription', 'subscriptions'), ('replication slot', 'slots'), ('role', 'roles')) AS o(what, k),
                   jsonb_array_elements_text(facts->o.k) AS n(name)
            UNION ALL
            SELECT 'apply_ddl() change ' || (c->>'change_id') || ' (template, command)', (c->>'template') || ' ' || (c->>'command'),
                   NULL, (c->>'change_id')::bigint
              FROM jsonb_array_elements(facts->'ddl_unfinished') AS c) AS x(what, name, shard, change_id)
     WHERE shardid_internal._unsafe_text(x.name)
$$;

REVOKE ALL ON FUNCTION shardid_internal._node_facts_unsafe(jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._node_facts_unsafe(jsonb) IS
    'Router, check_cluster(): the names and stored commands of a node''s facts that hold a control character (what, name, shard, apply_ddl() change ID), reported as unsafe_name.';
