-- Router, first step of move_shard(): a move of this shard in progress is
-- resumed (its row, after checking it goes to the same node), or a new one
-- is checked before anything changes and recorded in phase 'schema'. The
-- checks: the shard is placed, not frozen on the router, and not already
-- on to_node, which exists; every node answers with shardid 0.3 (which runs
-- the owners' code as the owners: a 0.2 node is refused) and the router's
-- layout; the source registers the shard in a schema that holds
-- its generator; the target neither registers the shard nor has the
-- schema, and has every role the shard's owners and privileges name; the
-- copy the target would make from its templates is the source's shard
-- (the trial copy is undone), else "diverged" names every difference; an
-- online move needs wal_level = logical, a free replication slot and a
-- replica identity on every table of the shard; a NOTICE when the
-- target's launcher would delay the copy (_move_check_launcher). Leaves the
-- connections shardid_move_source and shardid_move_target open.
CREATE OR REPLACE FUNCTION shardid_internal._move_prepare(shard integer, to_node text, offline boolean)
    RETURNS shardid.shard_moves
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    m       shardid.shard_moves;
    p       shardid.shard_placement;
    nd      record;
    facts   jsonb;
    src     jsonb;
    trial   jsonb;
    layout  text;
    mine    text;
    tgt     jsonb;
BEGIN
    IF to_node IS NULL THEN
        RAISE EXCEPTION 'to_node must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    SELECT * INTO m FROM shardid.shard_moves AS x WHERE x.shard = _move_prepare.shard;
    IF FOUND THEN
        IF m.phase <> 'aborting' AND m.target <> to_node THEN
            RAISE EXCEPTION 'shard % is being moved to node "%" (phase %)', shard, m.target, m.phase
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = format('CALL shardid.move_shard(%s, %L); resumes it, CALL shardid.abort_move(%s); rolls it back.',
                                    shard, m.target, shard);
        END IF;
        IF m.phase <> 'aborting' THEN
            RAISE NOTICE 'resuming the % move of shard % from "%" to "%" (phase %)', m.mode, shard, m.source, m.target, m.phase;
        END IF;
        RETURN m;
    END IF;

    SELECT * INTO p FROM shardid.shard_placement AS x WHERE x.shard = _move_prepare.shard;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'shard % is not placed on any node', shard
            USING ERRCODE = 'undefined_object',
                  HINT = 'See shardid.placement; place it with shardid.place_shards().';
    END IF;
    IF NOT EXISTS (SELECT FROM shardid.nodes AS n WHERE n.node = to_node) THEN
        RAISE EXCEPTION 'node "%" does not exist', to_node
            USING ERRCODE = 'undefined_object',
                  HINT = 'Add it with shardid.add_node().';
    END IF;
    IF p.node = to_node THEN
        RAISE EXCEPTION 'shard % is already on node "%": nothing to move', shard, to_node
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p.frozen THEN
        RAISE EXCEPTION 'shard % is frozen on the router (shardid.freeze_shard)', shard
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = format('SELECT shardid.unfreeze_shard(%s); first.', shard);
    END IF;

    -- One layout for the whole system: every node, not only these two.
    SELECT to_char(l.epoch AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS"+00"') || ', ' || l.shard_bits || ' shard bits, '
           || l.seq_bits || ' seq bits' INTO mine FROM shardid.layout() AS l;
    FOR nd IN SELECT n.node FROM shardid.nodes AS n ORDER BY n.node LOOP
        PERFORM shardid_internal._node_connect('shardid_move_check', nd.node);
        facts := shardid_internal._node('shardid_move_check',
            $q$SELECT pg_catalog.jsonb_build_object('version', (SELECT e.extversion FROM pg_catalog.pg_extension AS e WHERE e.extname OPERATOR(pg_catalog.=) 'shardid'),
                                         'moves', pg_catalog.to_regprocedure('shardid_internal._run_as_owner(regrole, text, boolean)') IS NOT NULL)$q$,
            nd.node)::jsonb;
        IF facts->>'version' IS NULL THEN
            PERFORM shardid_internal._node_close('shardid_move_check');
            RAISE EXCEPTION 'node "%" has no shardid extension', nd.node
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'CREATE EXTENSION shardid; there, with the router''s layout.';
        END IF;
        IF NOT (facts->>'moves')::boolean THEN
            PERFORM shardid_internal._node_close('shardid_move_check');
            RAISE EXCEPTION 'node "%" has shardid %, which cannot take part in a move', nd.node, facts->>'version'
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'ALTER EXTENSION shardid UPDATE; there.';
        END IF;
        layout := shardid_internal._node('shardid_move_check',
            $q$SELECT pg_catalog.concat(pg_catalog.to_char(pg_catalog.timezone('UTC', l.epoch), 'YYYY-MM-DD HH24:MI:SS.MS"+00"'), ', ',
                                         l.shard_bits, ' shard bits, ', l.seq_bits, ' seq bits') FROM shardid.layout() AS l$q$, nd.node);
        PERFORM shardid_internal._node_close('shardid_move_check');
        IF layout IS DISTINCT FROM mine THEN
            RAISE EXCEPTION 'node "%" uses another layout than the router: %; the router: %', nd.node, layout, mine
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = 'Every server of one system must use one layout (epoch, shard bits, seq bits).';
        END IF;
    END LOOP;

    PERFORM shardid_internal._node_connect('shardid_move_source', p.node);
    PERFORM shardid_internal._node_connect('shardid_move_target', to_node);
    src := shardid_internal._node('shardid_move_source', format('SELECT shardid_internal._move_source_facts(%s)', shard), p.node)::jsonb;
    IF NOT (src->>'registered')::boolean THEN
        RAISE EXCEPTION 'shard % is not registered on node "%", where the router places it', shard, p.node
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Compare shardid.placement on the router with shardid.shards on the nodes.';
    END IF;
    IF NOT (src->>'schema_exists')::boolean THEN
        RAISE EXCEPTION 'the schema % of shard % does not exist on node "%"', quote_ident(src->>'schema_name'), shard, p.node
            USING ERRCODE = 'invalid_schema_name';
    END IF;
    IF src->'sequence' IS NULL OR jsonb_typeof(src->'sequence') = 'null' THEN
        RAISE EXCEPTION 'the generator of shard % on node "%" (%.%) is not a sequence of its schema %', shard, p.node,
                quote_ident(src->>'sequence_schema'), quote_ident(src->>'sequence_name'), quote_ident(src->>'schema_name')
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'A move copies one schema; a shard adopted with a generator elsewhere cannot be moved.';
    END IF;
    trial := shardid_internal._node('shardid_move_target', format('SELECT shardid_internal._create_shard_copy(%s, %L, true)', shard, src), to_node)::jsonb;
    PERFORM shardid_internal._move_compare_shard(shard, p.node, to_node, src->'definition', trial, format('node "%s" (its templates)', to_node),
                                  format('A move makes the shard on node "%s" from that node''s templates (shardid.sharded_tables) and copies the rows; make the shard and the templates agree first (ALTER the shard''s tables, or the templates).', to_node));
    IF NOT offline THEN
        IF src->>'wal_level' <> 'logical' THEN
            RAISE EXCEPTION 'node "%" has wal_level = %: an online move needs wal_level = logical there', p.node, src->>'wal_level'
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'Set wal_level = logical on that node (a restart), or move the shard offline (offline => true, bin/shardid-move-shard --offline).';
        END IF;
        IF src->>'no_identity' IS NOT NULL THEN
            RAISE EXCEPTION 'tables of shard % have no replica identity (a primary key, or REPLICA IDENTITY FULL or USING INDEX): %', shard, src->>'no_identity'
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'ALTER TABLE ... REPLICA IDENTITY FULL (or add a primary key), or move the shard offline.';
        END IF;
        IF NOT (src->>'free_slot')::boolean THEN
            RAISE EXCEPTION 'node "%" has no free replication slot', p.node
                USING ERRCODE = 'configuration_limit_exceeded',
                      HINT = 'Raise max_replication_slots there (a restart), or drop an unused slot.';
        END IF;
        tgt := shardid_internal._node('shardid_move_target',
            $q$SELECT pg_catalog.jsonb_build_object('version', pg_catalog.current_setting('server_version_num')::pg_catalog.int4,
                                                    'retry_ms', s.setting::pg_catalog.int4)
                 FROM pg_catalog.pg_settings AS s WHERE s.name OPERATOR(pg_catalog.=) 'wal_retrieve_retry_interval'$q$, to_node)::jsonb;
    END IF;
    INSERT INTO shardid.shard_moves (shard, source, target, schema_name, mode, phase, bytes_total)
        VALUES (shard, p.node, to_node, src->>'schema_name', CASE WHEN offline THEN 'offline' ELSE 'online' END, 'schema',
                (src->>'bytes')::bigint)
        RETURNING * INTO m;
    RAISE NOTICE 'moving shard % (%) from "%" to "%" (%)', shard, quote_ident(m.schema_name), m.source, m.target, m.mode;
    IF tgt IS NOT NULL THEN
        PERFORM shardid_internal._move_check_launcher(to_node, (tgt->>'version')::integer, (tgt->>'retry_ms')::integer);
    END IF;
    RETURN m;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_prepare(integer, text, boolean) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_prepare(integer, text, boolean) IS
    'Router, moves: resumes the shard''s move in progress, or checks a new one (placement, nodes, layouts, registries, templates, online prerequisites) and records it.';
