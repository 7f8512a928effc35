-- Router, check_cluster() step 1: what a node answered that holds a
-- control character (_unsafe_text()): its shardid version, or a name of
-- its facts (_node_facts(): a shard's schema, a sharded table or its
-- template, a schema with shardid's freeze triggers, a publication,
-- subscription, slot or role named like a move's, an unfinished
-- apply_ddl() change's template and command). Shown escaped in the
-- detail, never put into a fix (but an apply_ddl() change's, finished by
-- its ID in the ledger: _ddl_finish_by_id()); check_cluster() leaves them
-- out of every other check (_node_facts_safe()). In node order, each
-- node's in the order of its facts. The router's own unfinished changes
-- are reported with ddl_unfinished's.
CREATE OR REPLACE FUNCTION shardid_internal._check_unsafe_name(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'unsafe_name', u.shard, n.key,
           CASE WHEN u.what IS NULL
                THEN pg_catalog.format('node "%s" runs a shardid version named %s, with a control character: look at pg_extension there',
                                       n.key, pg_catalog.to_jsonb(u.name)::text)
                WHEN u.change_id IS NULL
                THEN pg_catalog.format('the %s on node "%s" has a control character in its name: %s; shardid did not make it so and builds no command with it: look at it there',
                                       u.what, n.key, pg_catalog.to_jsonb(u.name)::text)
                ELSE pg_catalog.format('apply_ddl() change %s on node "%s" is unfinished, and its template or command has a control character: %s; the fix finishes it by its ID, without the text',
                                       u.change_id, n.key, pg_catalog.to_jsonb(u.name)::text) END,
           n.key, shardid_internal._ddl_finish_by_id(u.change_id)
      FROM jsonb_each(nodes) AS n,
           LATERAL (SELECT 0, 0::bigint, NULL::text, n.value->>'version', NULL::integer, NULL::bigint
                     WHERE NOT n.value ? 'facts'
                    UNION ALL
                    SELECT 1, s.i, 'schema of shard ' || (s.v->>'shard'), s.v->>'schema', (s.v->>'shard')::integer, NULL
                      FROM jsonb_array_elements(n.value->'facts'->'shards') WITH ORDINALITY AS s(v, i)
                    UNION ALL
                    SELECT 2, t.i, 'sharded table', t.key, NULL, NULL
                      FROM jsonb_each(n.value->'facts'->'templates') WITH ORDINALITY AS t(key, value, i)
                    UNION ALL
                    SELECT 3, t.i, 'template of sharded table', t.value->>'template', NULL, NULL
                      FROM jsonb_each(n.value->'facts'->'templates') WITH ORDINALITY AS t(key, value, i)
                     WHERE NOT shardid_internal._unsafe_text(t.key)
                    UNION ALL
                    SELECT o.part, x.i, o.what, x.name, NULL, NULL
                      FROM (VALUES (4, 'schema with shardid''s freeze triggers', 'frozen'), (5, 'publication', 'publications'),
                                   (6, 'subscription', 'subscriptions'), (7, 'replication slot', 'slots'), (8, 'role', 'roles')) AS o(part, what, k),
                           jsonb_array_elements_text(n.value->'facts'->o.k) WITH ORDINALITY AS x(name, i)
                    UNION ALL
                    SELECT 9, c.i, 'apply_ddl() change ' || (c.v->>'change_id') || ' (template, command)',
                           (c.v->>'template') || ' ' || (c.v->>'command'), NULL, (c.v->>'change_id')::bigint
                      FROM jsonb_array_elements(n.value->'facts'->'ddl_unfinished') WITH ORDINALITY AS c(v, i)) AS u(part, i, what, name, shard, change_id)
     WHERE NOT n.value ? 'error' AND shardid_internal._unsafe_text(u.name)
     ORDER BY n.key COLLATE "C", u.part, u.i
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_unsafe_name(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_unsafe_name(jsonb, jsonb) IS
    'Router, check_cluster(): unsafe_name, what a node answered that holds a control character (its shardid version, names of its facts, an unfinished apply_ddl() change), escaped in the detail and never in a fix.';
