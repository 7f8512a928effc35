-- Router, phase 'copy' of a move, one poll (the procedure commits after
-- each, so move_progress shows it): first the source's publication and
-- slot and the target's subscription (its OID committed at once, it names
-- the table-sync slots), then each poll records the subscription's
-- progress and the slot's lag, fails the move at the subscription's first
-- error, and every 2 s compares the definitions on both nodes (DDL is not
-- replicated). A node that cannot be reached is retried for node_timeout
-- (a restarting target reconnects on its own), then the move fails naming
-- it. A subscription stopped by a source that restarted or failed over
-- with the slot kept (a failover slot, 17 and later) is enabled again.
-- When every table is ready and the lag is under 1 MB: phase
-- 'frozen'. state carries what one poll tells the next.
CREATE OR REPLACE FUNCTION shardid_internal._move_copy(m shardid.shard_moves, o shardid.move_options, state jsonb)
    RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    shard integer := m.shard;
    nm    name;
    now_t timestamptz := clock_timestamp();
    prog  jsonb;
    slot  jsonb;
    sub   jsonb;
    ds    jsonb;
    dt    jsonb;
    who   text;
    node  text;
    conn  text;
    st    text;
    msg   text;
    det   text;
    hnt   text;
    since timestamptz;
BEGIN
    nm := shardid_internal._move_name(m.shard, m.move_id);
    IF state ? 'polled' THEN
        PERFORM pg_sleep(0.2);
        now_t := clock_timestamp();
    END IF;
    state := state || jsonb_build_object('polled', true);
    BEGIN
        who := 'source'; node := m.source; conn := 'shardid_move_source';
        PERFORM shardid_internal._node_connect(conn, node);
        IF m.subscription IS NULL THEN
            PERFORM shardid_internal._node(conn, format('SELECT shardid_internal._move_publish(%L, %L)', nm, m.schema_name), node);
            PERFORM shardid_internal._node(conn, format('SELECT shardid_internal._move_create_slot(%L)', nm), node);
            -- which postmaster the slot was made on (below)
            state := state || jsonb_build_object('source_started',
                         shardid_internal._node(conn, format('SELECT shardid_internal._move_slot_status(%L)', nm), node)::jsonb->'started');
            PERFORM shardid_internal._move_pause(shard, 'subscribe');
            who := 'target'; node := m.target; conn := 'shardid_move_target';
            PERFORM shardid_internal._node_connect(conn, node);
            sub := shardid_internal._node(conn, format('SELECT shardid_internal._move_subscribe(%L, %L, %L)', nm,
                                              (SELECT n.connstr FROM shardid.nodes AS n WHERE n.node = m.source),
                                              m.schema_name), node)::jsonb;
            UPDATE shardid.shard_moves AS x
               SET subscription = (sub->>'subid')::oid, target_sysid = sub->>'sysid', updated_at = now_t
             WHERE x.shard = m.shard;
            RETURN state - 'unreachable_since';
        END IF;
        IF NOT state ? 'paused' THEN
            PERFORM shardid_internal._move_pause(shard, 'copy');
            state := state || jsonb_build_object('paused', true);
        END IF;
        slot := shardid_internal._node(conn, format('SELECT shardid_internal._move_slot_status(%L)', nm), node)::jsonb;
        who := 'target'; node := m.target; conn := 'shardid_move_target';
        PERFORM shardid_internal._node_connect(conn, node);
        prog := shardid_internal._node(conn, format('SELECT shardid_internal._move_copy_progress(%L)', nm), node)::jsonb;
        IF NOT state ? 'compared' OR now_t - (state->>'compared')::timestamptz > '2 s'::interval THEN
            dt := shardid_internal._node(conn, format('SELECT shardid_internal._shard_definition(%L, %L)', m.schema_name, nm), node)::jsonb;
            who := 'source'; node := m.source; conn := 'shardid_move_source';
            ds := shardid_internal._node(conn, format('SELECT shardid_internal._shard_definition(%L)', m.schema_name), node)::jsonb;
            PERFORM shardid_internal._move_compare(ds, dt, format('node "%s"', m.source), format('node "%s"', m.target),
                                          format('the tables of shard %s changed on node "%s" during the copy', shard, m.source),
                                          'Logical replication does not carry DDL: make the change after the move (or on both nodes).');
            state := state || jsonb_build_object('compared', now_t);
        END IF;
    EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
        msg := shardid_internal._one_line(msg);
        -- the node's own error (a subscription that cannot reach the
        -- source fails with 08006 too) when the connection still works
        IF NOT shardid_internal._node_unreachable(st) OR shardid_internal._node_alive(conn) THEN
            PERFORM shardid_internal._raise(st, msg, det, hnt);
        END IF;
        PERFORM shardid_internal._node_close(conn);
        since := COALESCE((state->>'unreachable_since')::timestamptz, now_t);
        UPDATE shardid.shard_moves AS x
           SET last_error = format('node "%s" (the %s) unreachable since %s: %s', node, who, since, msg), updated_at = now_t
         WHERE x.shard = m.shard;
        IF now_t - since > o.node_timeout THEN
            RAISE EXCEPTION 'node "%" (the % of the move) has been unreachable for % during the copy: %',
                    node, who, date_trunc('second', now_t - since), regexp_replace(msg, '^node "[^"]*": ', '')
                USING ERRCODE = st;
        END IF;
        RETURN state || jsonb_build_object('unreachable_since', since);
    END;
    state := state - 'unreachable_since';

    IF NOT (slot->>'exists')::boolean THEN
        RAISE EXCEPTION 'the replication slot % of the move is gone from node "%"', nm, m.source
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    IF NOT (prog->>'exists')::boolean THEN
        RAISE EXCEPTION 'the subscription % of the move is gone from node "%"', nm, m.target
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    IF (prog->>'enabled')::boolean AND now_t < COALESCE((state->>'resumed_until')::timestamptz, '-infinity') THEN
        -- enabled again (below): the error that stopped it may reach the
        -- statistics after that
        state := state || jsonb_build_object('errors_seen', COALESCE((prog->>'errors')::bigint, 0));
    END IF;
    IF NOT (prog->>'enabled')::boolean OR COALESCE((prog->>'errors')::bigint, 0) > COALESCE((state->>'errors_seen')::bigint, 0) THEN
        -- Another postmaster answers for the source than when the slot was
        -- made or at the last good poll (a restart, or a failover whose new
        -- primary has the slot: a failover slot, 17 and later) and the slot
        -- is there: the subscription stopped at the lost connection
        -- (disable_on_error), not at a row. It is enabled again, once per
        -- change of source, and goes on from the slot.
        IF state->>'source_started' IS DISTINCT FROM slot->>'started' AND state ? 'source_started' THEN
            PERFORM shardid_internal._node('shardid_move_target', format('SELECT shardid_internal._move_subscribe(%L, %L, %L)', nm,
                                              (SELECT n.connstr FROM shardid.nodes AS n WHERE n.node = m.source),
                                              m.schema_name), m.target);
            UPDATE shardid.shard_moves AS x
               SET last_error = format('the subscription stopped when node "%s" (the source) restarted or failed over; enabled again on its slot', m.source),
                   updated_at = now_t
             WHERE x.shard = m.shard;
            RETURN state || jsonb_build_object('source_started', slot->'started', 'errors_seen', COALESCE((prog->>'errors')::bigint, 0),
                                               'resumed_until', now_t + '5 s'::interval);
        END IF;
        RAISE EXCEPTION 'replicating shard % to node "%" failed: its subscription % stopped at an error', shard, m.target, nm
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('%s error(s) reported by the subscription''s workers; the server log of node "%s" says which.',
                                  COALESCE(prog->>'errors', '?'), m.target);
    END IF;
    state := state || jsonb_build_object('source_started', slot->'started');
    UPDATE shardid.shard_moves AS x
       SET tables_ready = (prog->>'tables_ready')::integer, tables_total = (prog->>'tables_total')::integer,
           bytes_copied = (prog->>'bytes')::bigint, lag_bytes = (slot->>'lag')::bigint,
           last_error = NULL, updated_at = now_t,
           phase = CASE WHEN (prog->>'tables_ready')::integer = (prog->>'tables_total')::integer
                             AND (slot->>'lag')::bigint < 1048576 THEN 'frozen' ELSE x.phase END
     WHERE x.shard = m.shard;
    IF now_t - m.started_at > o.catchup_timeout THEN
        RAISE EXCEPTION 'the copy of shard % to node "%" did not catch up within %', shard, m.target, o.catchup_timeout
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('Tables ready: %s of %s; lag: %s bytes.', prog->>'tables_ready', prog->>'tables_total', slot->>'lag');
    END IF;
    RETURN state;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_copy(shardid.shard_moves, shardid.move_options, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_copy(shardid.shard_moves, shardid.move_options, jsonb) IS
    'Router, move phase copy, one poll: starts replication, records progress and lag, fails at a replication error, a change of definitions, or an unreachable node (after node_timeout); turns frozen when caught up.';
