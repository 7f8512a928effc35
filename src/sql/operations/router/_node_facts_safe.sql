-- Router, check_cluster(): a node's facts (_node_facts()) without what
-- holds a control character (_check_unsafe_name() reports it): sharded
-- tables, frozen schemas, publications, subscriptions, slots, roles and
-- unfinished apply_ddl() changes are left out; a shard stays (its place is
-- still checked), its schema name is never put into a fix.
CREATE OR REPLACE FUNCTION shardid_internal._node_facts_safe(facts jsonb) RETURNS jsonb
    LANGUAGE sql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT facts
        || jsonb_build_object('templates', COALESCE((SELECT jsonb_object_agg(t.key, t.value) FROM jsonb_each(facts->'templates') AS t
                                                      WHERE NOT shardid_internal._unsafe_text(t.key)
                                                        AND NOT COALESCE(shardid_internal._unsafe_text(t.value->>'template'), false)), '{}'))
        || (SELECT COALESCE(jsonb_object_agg(o.k, COALESCE((SELECT jsonb_agg(n.name) FROM jsonb_array_elements_text(facts->o.k) AS n(name)
                                                             WHERE NOT shardid_internal._unsafe_text(n.name)), '[]')), '{}')
              FROM unnest(ARRAY['frozen', 'publications', 'subscriptions', 'slots', 'roles']) AS o(k)
             WHERE facts ? o.k)
        || jsonb_build_object('ddl_unfinished', COALESCE((SELECT jsonb_agg(c) FROM jsonb_array_elements(facts->'ddl_unfinished') AS c
                                                           WHERE NOT shardid_internal._unsafe_text((c->>'template') || ' ' || (c->>'command'))), '[]'))
$$;

REVOKE ALL ON FUNCTION shardid_internal._node_facts_safe(jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._node_facts_safe(jsonb) IS
    'Router, check_cluster(): a node''s facts without the names and stored commands that hold a control character (sharded tables, frozen schemas, move leftovers, unfinished apply_ddl() changes).';
