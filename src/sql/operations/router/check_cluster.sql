-- Router: what is wrong with the cluster, one row per problem, each with
-- the command that fixes it (fix) and where to run it (run_on: a node's
-- name; NULL for the router, and for a fix that is only advice, a comment
-- of one line); no row on a healthy cluster. Every node is
-- read once over dblink (search_path pinned, shardid_internal._node_facts()) and
-- compared with the router and the other nodes. A fix is built only from
-- the router's own values, shard numbers, and names read on a node that
-- hold no control character (_unsafe_text()), quoted with %I/%L; a fix
-- that is advice, not a command, is one line of comment. The kinds (a
-- closed list: docs/monitoring.md, docs/reference.md and the exporters
-- under examples/ list them too):
--   node_unreachable, node_unreadable, extension_missing,
--     extension_version: the node could not be read (its other checks are
--     skipped): it cannot be reached (a connection SQLSTATE,
--     _node_unreachable()), or it answered but reading it failed (any
--     other error, such as the role of its connect string lacking a
--     privilege there; its SQLSTATE in the detail); a node at an older
--     version is updated, a newer one (updated first) is matched by
--     updating the router;
--   unsafe_name: a name read on a node (a schema, sharded table,
--     publication, subscription, slot, role, its shardid version) or an
--     unfinished apply_ddl() change's template or command, here or on a
--     node, that holds a control character: shown escaped in the detail,
--     left out of every other check, never put into a fix (no fix, but
--     for an apply_ddl() change: finished by its ID in the ledger);
--   layout_differs: a node's layout is not the router's (shardid.layout());
--   shard_live_twice: a shard registered (live, not retired) on two nodes;
--   shard_live_nowhere: a placed shard that no node holds;
--   placement_wrong_node: a placed shard that another node holds;
--   shard_not_placed: a shard a node holds that is placed nowhere;
--   template_differs: a sharded table's template that differs from the
--     one most nodes have, or is missing (but on a node with only the
--     extension, no sharded table and no shard, which a move fills);
--   move_leftover: a publication, subscription, slot or role named like a
--     move's (shardid_move_<shard>_<move id>), or shardid's freeze trigger,
--     with no such move in progress;
--   move_stalled: a move in progress (a row of shard_moves) that no live
--     session and no live background job drives (_move_stalled(): a
--     restart of the router, a terminated session); in its phases frozen
--     and caught_up the shard refuses writes until it is finished (the
--     fix) or rolled back (abort_move(), named in the detail);
--   proxy_out_of_step: the PL/Proxy cluster 'shardid' (when PL/Proxy is
--     installed) differs from partition_connstrs();
--   ddl_unfinished: an apply_ddl() change not finished, here or on a node
--     (the fix finishes it; the detail names abandon_ddl(), which leaves
--     it as far as it got);
--   copy_differs: a shard's copy of a sharded table that differs from
--     its node's template (columns, their order, types, NOT NULL,
--     defaults, constraints, the template's indexes, owner;
--     _copy_drift()), with the statements that align it.
-- Shards being moved (rows of shard_moves) are live on both of their nodes
-- by design and are not reported but by move_stalled.
CREATE OR REPLACE FUNCTION shardid.check_cluster()
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    conn CONSTANT text := 'shardid_check_cluster';
    my_version text;
    my_layout  jsonb;
    nd     record;
    v      text;
    newer  boolean;
    facts  jsonb := '{}';
    msg    text;
    st     text;
    f      jsonb;
    bad    record;
    now_ms bigint := (pg_catalog.date_part('epoch', pg_catalog.clock_timestamp()) * 1000)::bigint;
BEGIN
    PERFORM shardid_internal._dblink_schema();
    SELECT e.extversion INTO my_version FROM pg_extension AS e WHERE e.extname = 'shardid';
    SELECT jsonb_build_object('epoch', pg_catalog.to_char(l.epoch AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS') || '+00', 'shard_bits', l.shard_bits, 'seq_bits', l.seq_bits)
      INTO my_layout FROM shardid.layout() AS l;

    FOR nd IN SELECT n.node FROM shardid.nodes AS n ORDER BY n.node COLLATE "C" LOOP
        BEGIN
            PERFORM shardid_internal._node_close(conn);  -- not one left open to another node
            PERFORM shardid_internal._node_connect(conn, nd.node);
            PERFORM shardid_internal._node(conn, 'SET search_path = pg_catalog, pg_temp', nd.node);
            v := shardid_internal._node(conn, 'SELECT e.extversion FROM pg_catalog.pg_extension AS e WHERE e.extname OPERATOR(pg_catalog.=) ''shardid''', nd.node);
            IF v IS NULL THEN
                kind := 'extension_missing'; shard := NULL; node := nd.node; run_on := nd.node;
                detail := pg_catalog.format('node "%s" does not have the shardid extension', nd.node);
                fix := 'CREATE EXTENSION shardid;';
                RETURN NEXT;
            ELSIF shardid_internal._unsafe_text(v) THEN
                kind := 'unsafe_name'; shard := NULL; node := nd.node; run_on := nd.node; fix := NULL;
                detail := pg_catalog.format('node "%s" runs a shardid version named %s, with a control character: look at pg_extension there',
                                            nd.node, pg_catalog.to_jsonb(v)::text);
                RETURN NEXT;
            ELSIF v <> my_version THEN
                kind := 'extension_version'; shard := NULL; node := nd.node;
                detail := pg_catalog.format('node "%s" runs shardid %s, the router %s', nd.node, v, my_version);
                -- there is no downgrade: a node ahead of the router (updated
                -- first) is matched by updating the router
                newer := CASE WHEN v ~ '^[0-9]+(\.[0-9]+)*$' AND my_version ~ '^[0-9]+(\.[0-9]+)*$'
                              THEN pg_catalog.string_to_array(v, '.')::integer[] > pg_catalog.string_to_array(my_version, '.')::integer[]
                              ELSE false END;
                IF newer THEN
                    run_on := NULL;
                    fix := pg_catalog.format('ALTER EXTENSION shardid UPDATE TO %L;', v);
                ELSE
                    run_on := nd.node;
                    fix := pg_catalog.format('ALTER EXTENSION shardid UPDATE TO %L;', my_version);
                END IF;
                RETURN NEXT;
            ELSE
                f := shardid_internal._node(conn, 'SELECT shardid_internal._node_facts()::pg_catalog.text', nd.node)::jsonb;
                -- what holds a control character is reported here and
                -- left out of every other check
                FOR bad IN SELECT * FROM shardid_internal._node_facts_unsafe(f) AS x LOOP
                    kind := 'unsafe_name'; shard := bad.shard; node := nd.node; run_on := nd.node; fix := NULL;
                    detail := pg_catalog.format('the %s on node "%s" has a control character in its name: %s; shardid did not make it so and builds no command with it: look at it there',
                                                bad.what, nd.node, pg_catalog.to_jsonb(bad.name)::text);
                    IF bad.change_id IS NOT NULL THEN
                        detail := pg_catalog.format('apply_ddl() change %s on node "%s" is unfinished, and its template or command has a control character: %s; the fix finishes it by its ID, without the text',
                                                    bad.change_id, nd.node, pg_catalog.to_jsonb(bad.name)::text);
                        fix := shardid_internal._ddl_finish_by_id(bad.change_id);
                    END IF;
                    RETURN NEXT;
                END LOOP;
                facts := facts || jsonb_build_object(nd.node, shardid_internal._node_facts_safe(f));
            END IF;
            PERFORM shardid_internal._node_close(conn);
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, st = RETURNED_SQLSTATE;
            PERFORM shardid_internal._node_close(conn);
            shard := NULL; node := nd.node; run_on := NULL;
            IF shardid_internal._node_unreachable(st) THEN
                kind := 'node_unreachable';
                detail := msg;
                fix := '-- start the node, or correct its connect string (shardid.nodes); then check again';
            ELSE
                kind := 'node_unreadable';
                detail := pg_catalog.format('%s (SQLSTATE %s)', msg, st);
                fix := '-- the node answered, but reading it failed: correct what the detail says (for a permission error, its connect string must name the owner of shardid there, or a superuser); then check again';
            END IF;
            RETURN NEXT;
        END;
    END LOOP;

    -- Layouts.
    RETURN QUERY
    SELECT 'layout_differs', NULL::integer, f.key,
           pg_catalog.format('node "%s" has the layout epoch %s, %s shard bits, %s seq bits; the router %s, %s, %s (configure the node before it issues IDs, or the router if the node is right)',
                             f.key, f.value->'layout'->>'epoch', f.value->'layout'->>'shard_bits', f.value->'layout'->>'seq_bits',
                             my_layout->>'epoch', my_layout->>'shard_bits', my_layout->>'seq_bits'),
           f.key,
           pg_catalog.format('SELECT shardid.configure(%L, %s, %s);',
                             my_layout->>'epoch', my_layout->>'shard_bits', my_layout->>'seq_bits')
      FROM jsonb_each(facts) AS f
     WHERE f.value->'layout' <> my_layout
     ORDER BY f.key COLLATE "C";

    -- Shards: live copies (registered on a node) against the placement.
    -- A fix names a shard by its number, a retired copy after the shard's
    -- usual schema name (_shard_schema_name()): no schema name read on a
    -- node is put into one.
    RETURN QUERY
    WITH live AS (
        SELECT f.key AS node, (s->>'shard')::integer AS shard
          FROM jsonb_each(facts) AS f, jsonb_array_elements(f.value->'shards') AS s
    ), settled AS (
        SELECT l.* FROM live AS l
         WHERE NOT EXISTS (SELECT FROM shardid.shard_moves AS m WHERE m.shard = l.shard)
    ), per_shard AS (
        SELECT s.shard, pg_catalog.array_agg(s.node ORDER BY s.node COLLATE "C") AS nodes
          FROM settled AS s GROUP BY s.shard
    )
    -- on two nodes: the copy that is not where the placement points (with
    -- no placement, placing it on one copy's node first)
    SELECT 'shard_live_twice', s.shard, s.node,
           pg_catalog.format('shard %s is live on nodes %s; the router places it on %s', s.shard,
                             pg_catalog.array_to_string(ps.nodes, ', '), COALESCE('"' || p.node || '"', 'no node')),
           CASE WHEN p.node IS NULL THEN NULL ELSE s.node END,
           CASE WHEN p.node IS NULL
                THEN pg_catalog.format('SELECT shardid.place_shards(%L, %s, %s);', s.node, s.shard, s.shard)
                ELSE pg_catalog.format('SELECT shardid.retire_shard(%s, %L, %L);', s.shard, p.node,
                                       shardid_internal._fit_name(shardid_internal._shard_schema_name(s.shard), '_moved_' || now_ms)) END
      FROM settled AS s
      JOIN per_shard AS ps ON ps.shard = s.shard AND pg_catalog.cardinality(ps.nodes) > 1
      LEFT JOIN shardid.shard_placement AS p ON p.shard = s.shard
     WHERE p.node IS DISTINCT FROM s.node
       AND (p.node IS NOT NULL OR s.node = ps.nodes[1])
    UNION ALL
    -- placed where it is not
    SELECT CASE WHEN ps.nodes IS NULL THEN 'shard_live_nowhere' ELSE 'placement_wrong_node' END,
           p.shard, p.node,
           CASE WHEN ps.nodes IS NULL
                THEN pg_catalog.format('shard %s is placed on node "%s", which does not hold it, and no node does; the fix creates it there empty: restore its rows instead if a backup has them', p.shard, p.node)
                ELSE pg_catalog.format('shard %s is placed on node "%s", which does not hold it; node %s does', p.shard, p.node,
                                       pg_catalog.array_to_string(ps.nodes, ', ')) END,
           CASE WHEN ps.nodes IS NULL THEN p.node END,
           CASE WHEN ps.nodes IS NULL
                THEN pg_catalog.format('SELECT shardid.create_shard(%s);', p.shard)
                ELSE pg_catalog.format('SELECT shardid.freeze_shard(%s); SELECT shardid.repoint_shard(%s, %L); SELECT shardid.unfreeze_shard(%s);',
                                       p.shard, p.shard, ps.nodes[1], p.shard) END
      FROM shardid.shard_placement AS p
      LEFT JOIN per_shard AS ps ON ps.shard = p.shard
     WHERE facts ? p.node
       AND NOT EXISTS (SELECT FROM shardid.shard_moves AS m WHERE m.shard = p.shard)
       AND NOT EXISTS (SELECT FROM settled AS s WHERE s.shard = p.shard AND s.node = p.node)
    UNION ALL
    -- held but placed nowhere
    SELECT 'shard_not_placed', ps.shard, ps.nodes[1],
           pg_catalog.format('shard %s is live on node "%s" but placed on no node: its IDs are routed nowhere', ps.shard, ps.nodes[1]),
           NULL::text,
           pg_catalog.format('SELECT shardid.place_shards(%L, %s, %s);', ps.nodes[1], ps.shard, ps.shard)
      FROM per_shard AS ps
     WHERE pg_catalog.cardinality(ps.nodes) = 1
       AND NOT EXISTS (SELECT FROM shardid.shard_placement AS p WHERE p.shard = ps.shard)
     ORDER BY 2, 3;

    -- Templates: each node's against the definition most nodes have.
    RETURN QUERY
    WITH defs AS (
        SELECT f.key AS node, t.key AS table_name, t.value AS def
          FROM jsonb_each(facts) AS f, jsonb_each(f.value->'templates') AS t
    ), names AS (
        SELECT DISTINCT d.table_name FROM defs AS d
    ), usual AS (
        SELECT DISTINCT ON (d.table_name) d.table_name, d.def, d.node
          FROM defs AS d
         GROUP BY d.table_name, d.def, d.node
         ORDER BY d.table_name, (SELECT pg_catalog.count(*) FROM defs AS o WHERE o.table_name = d.table_name AND o.def = d.def) DESC,
                  d.node COLLATE "C"
    )
    SELECT 'template_differs', NULL::integer, f.key,
           CASE WHEN d.def IS NULL
                THEN pg_catalog.format('sharded table %s is not registered on node "%s" (node "%s" has it): make its template table there as on node "%s", then run the fix',
                                       nm.table_name, f.key, u.node, u.node)
                ELSE pg_catalog.format('the template of sharded table %s on node "%s" differs from node "%s": %s', nm.table_name, f.key, u.node,
                                       (SELECT pg_catalog.string_agg(k.key, ', ' ORDER BY k.key)
                                          FROM jsonb_each(u.def) AS k WHERE d.def->k.key IS DISTINCT FROM k.value)) END,
           CASE WHEN d.def IS NULL THEN f.key END,
           CASE WHEN d.def IS NULL
                THEN pg_catalog.format('SELECT shardid.create_table(%L);', u.def->>'template')
                ELSE pg_catalog.format('-- ALTER TABLE the template %s (and its shards'' copies: CALL shardid.apply_ddl()) to match node "%s"',
                                       d.def->>'template', u.node) END
      FROM jsonb_each(facts) AS f
     CROSS JOIN names AS nm
      JOIN usual AS u ON u.table_name = nm.table_name
      LEFT JOIN defs AS d ON d.node = f.key AND d.table_name = nm.table_name
     WHERE d.def IS DISTINCT FROM u.def
       -- a node with only the extension (no sharded table, no shard) is
       -- empty, not wrong: a move there makes the templates first
       AND NOT (f.value->'templates' = '{}' AND f.value->'shards' = '[]')
     ORDER BY nm.table_name, f.key COLLATE "C";

    -- Leftovers of moves that are no longer in progress.
    RETURN QUERY
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
           CASE t.what
               WHEN 'publication' THEN pg_catalog.format('DROP PUBLICATION %I;', t.name)
               WHEN 'subscription' THEN pg_catalog.format('ALTER SUBSCRIPTION %1$I DISABLE; ALTER SUBSCRIPTION %1$I SET (slot_name = NONE); DROP SUBSCRIPTION %1$I;', t.name)
               WHEN 'replication slot' THEN pg_catalog.format('SELECT pg_catalog.pg_drop_replication_slot(%L);', t.name)
               -- roles belong to a server: nodes that share one report it each
               ELSE pg_catalog.format('DROP ROLE IF EXISTS %I;', t.name) END
      FROM things AS t
     WHERE NOT EXISTS (SELECT FROM moving AS m WHERE m.name = t.name)
    UNION ALL
    SELECT 'move_leftover', r.shard, f.key,
           pg_catalog.format('schema %s on node "%s" has shardid''s freeze triggers and no move from there is in progress', x.schema_name, f.key),
           f.key,
           pg_catalog.format('SELECT shardid.thaw_shard_tables(%L);', x.schema_name)
      FROM jsonb_each(facts) AS f
     CROSS JOIN jsonb_array_elements_text(f.value->'frozen') AS x(schema_name)
      LEFT JOIN LATERAL (SELECT (s->>'shard')::integer AS shard FROM jsonb_array_elements(f.value->'shards') AS s
                          WHERE s->>'schema' = x.schema_name) AS r ON true
     WHERE NOT EXISTS (SELECT FROM moving AS m WHERE m.source = f.key AND m.schema_name = x.schema_name)
     ORDER BY 3, 4;

    -- Moves in progress that nothing drives (shardid_internal._move_stalled()).
    RETURN QUERY
    SELECT 'move_stalled', m.shard, m.source,
           pg_catalog.format('the %s move of shard %s from node "%s" to node "%s" is in phase %s, and no session or background job drives it (a restart, a terminated session)%s; the fix finishes it; to roll it back instead: CALL shardid.abort_move(%s);',
                             m.mode, m.shard, m.source, m.target, m.phase,
                             CASE WHEN m.phase IN ('frozen', 'caught_up') THEN ': the shard refuses writes until then' ELSE '' END,
                             m.shard),
           NULL::text,
           CASE WHEN m.phase = 'aborting' OR m.mode = 'offline'
                THEN pg_catalog.format('CALL shardid.abort_move(%s);', m.shard)
                ELSE pg_catalog.format('CALL shardid.move_shard(%s, %L);', m.shard, m.target) END
      FROM shardid.shard_moves AS m
     WHERE shardid_internal._move_stalled(m)
     ORDER BY m.shard;

    -- The PL/Proxy cluster against the placement.
    IF EXISTS (SELECT FROM pg_foreign_data_wrapper AS w WHERE w.fdwname = 'plproxy')
       AND EXISTS (SELECT FROM shardid.shard_placement) THEN
        RETURN QUERY
        SELECT 'proxy_out_of_step', pg_catalog.min(d.shard), NULL::text,
               pg_catalog.format('the PL/Proxy cluster ''shardid'' differs from the placement in %s partitions (the first: shard %s)',
                                 pg_catalog.count(*), pg_catalog.min(d.shard)),
               NULL::text,
               'SELECT shardid.refresh_cluster();'
          FROM shardid_internal._proxy_diff() AS d
        HAVING pg_catalog.count(*) > 0;
    END IF;

    -- Unfinished schema changes, on the router and on the nodes; one whose
    -- template or command has a control character is finished by its ID.
    IF pg_catalog.to_regclass('shardid.ddl_changes') IS NOT NULL THEN
        RETURN QUERY EXECUTE
            'SELECT CASE WHEN x.unsafe THEN ''unsafe_name'' ELSE ''ddl_unfinished'' END, NULL::integer, NULL::text,
                    CASE WHEN x.unsafe
                         THEN pg_catalog.format(''apply_ddl() change %s on the router is unfinished, and its template or command has a control character: %s; the fix finishes it by its ID, without the text'',
                                                c.change_id, pg_catalog.to_jsonb(c.template || '' '' || c.command)::text)
                         ELSE pg_catalog.format(''apply_ddl() of %s on %s, started %s, is unfinished'', c.command, c.template, c.started_at) END,
                    NULL::text,
                    CASE WHEN x.unsafe THEN shardid_internal._ddl_finish_by_id(c.change_id)
                         ELSE pg_catalog.format(''CALL shardid.apply_ddl(%L, %L);'', c.template, c.command) END
               FROM shardid.ddl_changes AS c,
                    LATERAL (SELECT shardid_internal._unsafe_text(c.template || '' '' || c.command) AS unsafe) AS x
              WHERE c.finished_at IS NULL ORDER BY c.started_at';
    END IF;
    RETURN QUERY
    SELECT 'ddl_unfinished', NULL::integer, f.key,
           pg_catalog.format('apply_ddl() of %s on %s is unfinished on node "%s"; to leave it as far as it got instead: SELECT * FROM shardid.abandon_ddl(%L);',
                             c->>'command', c->>'template', f.key, c->>'template'),
           f.key,
           pg_catalog.format('CALL shardid.apply_ddl(%L, %L);', c->>'template', c->>'command')
      FROM jsonb_each(facts) AS f, jsonb_array_elements(f.value->'ddl_unfinished') AS c
     ORDER BY f.key COLLATE "C";

    -- Shards' copies that differ from their templates (_copy_drift(): what
    -- differs, and the statements that align them, run on the node; text
    -- with a control character is shown escaped and gets no fix).
    RETURN QUERY
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
     ORDER BY f.key COLLATE "C", (d->>'shard')::integer, d->>'table';
END
$$;

REVOKE ALL ON FUNCTION shardid.check_cluster() FROM PUBLIC;

COMMENT ON FUNCTION shardid.check_cluster() IS
    'Router: one row per problem of the cluster (kind, shard, node, detail, run_on: the node to run the fix on, NULL for the router or advice; fix: the command that fixes it), none when healthy: unreachable or unreadable nodes, names with control characters, layouts, shards live twice or nowhere, placements, templates, leftovers of moves, moves nothing drives, the PL/Proxy cluster, unfinished apply_ddl(), shard copies that differ from their template. No fix holds a name read on a node that has a control character.';
