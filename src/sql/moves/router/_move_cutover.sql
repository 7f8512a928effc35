-- Router, phase 'frozen' of a move: the cut-over, in one transaction here
-- (phase 'caught_up' commits at its end).
--   online:  the source freezes the shard under a lease (writes fail with
--            25006; the lease lapses if this session's connection to the
--            source ends, before anything is routed elsewhere) and reports
--            its WAL position and generator states; the target raises its
--            generators while the router waits for its subscription to
--            confirm that position (cutover_timeout); then, at once, the
--            source makes the freeze permanent and both report their
--            definitions, which must agree.
--   offline: the source freezes the shard for good; the data is copied by
--            the caller (bin/shardid-move-shard --offline: pg_dump
--            --data-only --disable-triggers), which CALLs again: until the
--            row counts agree this returns waiting = true; then the target
--            raises its generators and the definitions are compared.
-- The freeze tries to lock the shard's tables for 300 ms at a time, for
-- lock_timeout in all, so writers queue behind it for 300 ms at most.
-- Returns the milliseconds each step ended at, from the freeze.
CREATE OR REPLACE FUNCTION shardid_internal._move_cutover(m shardid.shard_moves, o shardid.move_options)
    RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    shard    integer := m.shard;
    nm       name;
    t0       timestamptz;
    steps    jsonb := '{}';
    fr       jsonb;
    ok       boolean;
    ds       jsonb;
    dt       jsonb;
    cs       jsonb;
    ct       jsonb;
BEGIN
    nm := shardid_internal._move_name(m.shard, m.move_id);
    PERFORM shardid_internal._node_connect('shardid_move_source', m.source);
    PERFORM shardid_internal._node_connect('shardid_move_target', m.target);
    t0 := clock_timestamp();
    fr := shardid_internal._move_lock_tables(shard, format('SELECT shardid_internal._move_freeze(%L, %s, %L, %L, 300)',
                                                  m.schema_name, shard, m.target, m.mode = 'online'), o.lock_timeout);
    steps := steps || jsonb_build_object('frozen', round(extract(epoch FROM clock_timestamp() - t0) * 1000));
    UPDATE shardid.shard_moves AS x
       SET frozen_at = COALESCE(x.frozen_at, t0), source_lsn = (fr->>'lsn')::pg_lsn, updated_at = clock_timestamp()
     WHERE x.shard = m.shard;

    IF m.mode = 'offline' THEN
        PERFORM shardid_internal._node_send('shardid_move_target', format('SELECT shardid_internal._move_row_counts(%L)', m.schema_name));
        cs := shardid_internal._node('shardid_move_source', format('SELECT shardid_internal._move_row_counts(%L)', m.schema_name), m.source)::jsonb;
        ct := shardid_internal._node_wait('shardid_move_target', m.target)::jsonb;
        IF cs IS DISTINCT FROM ct THEN
            RETURN jsonb_build_object('waiting', true, 'source', cs, 'target', ct);
        END IF;
    END IF;

    -- the target's generators, while it confirms the source's position
    PERFORM shardid_internal._node_send('shardid_move_target',
                               format('SELECT shardid_internal._move_raise_generators(%L, %L)', m.schema_name, fr->'states'));
    IF m.mode = 'online' THEN
        LOOP
            ok := (shardid_internal._node('shardid_move_source', format('SELECT shardid_internal._move_slot_status(%L, %L)', nm, fr->>'lsn'),
                                 m.source)::jsonb->>'confirmed')::boolean;
            EXIT WHEN ok;
            IF clock_timestamp() - t0 > o.cutover_timeout THEN
                RAISE EXCEPTION 'node "%" did not confirm the WAL position % of node "%" within %', m.target, fr->>'lsn',
                        m.source, o.cutover_timeout
                    USING ERRCODE = 'object_not_in_prerequisite_state',
                          DETAIL = 'Its subscription may have stopped (see its server log) or be far behind.';
            END IF;
            PERFORM pg_sleep(0.002);
        END LOOP;
        steps := steps || jsonb_build_object('confirmed', round(extract(epoch FROM clock_timestamp() - t0) * 1000));
    END IF;
    PERFORM shardid_internal._node_wait('shardid_move_target', m.target);
    steps := steps || jsonb_build_object('raised', round(extract(epoch FROM clock_timestamp() - t0) * 1000));
    PERFORM shardid_internal._move_pause(shard, 'frozen');

    -- the last comparison; the source's freeze made permanent meanwhile
    PERFORM shardid_internal._node_send('shardid_move_target', format('SELECT shardid_internal._shard_definition(%L, %L)', m.schema_name, nm));
    ds := shardid_internal._move_lock_tables(shard, format('SELECT shardid_internal._move_seal(%L, %s, %L, 300)', m.schema_name, shard, m.target),
                                    o.lock_timeout);
    dt := shardid_internal._node_wait('shardid_move_target', m.target)::jsonb;
    PERFORM shardid_internal._move_compare(ds, dt, format('node "%s"', m.source), format('node "%s"', m.target),
                                  format('the tables of shard %s changed on node "%s" during the move', shard, m.source),
                                  'Logical replication does not carry DDL: make the change after the move (or on both nodes).');
    steps := steps || jsonb_build_object('sealed', round(extract(epoch FROM clock_timestamp() - t0) * 1000));
    UPDATE shardid.shard_moves AS x SET phase = 'caught_up', updated_at = clock_timestamp()
     WHERE x.shard = m.shard;
    RETURN steps;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_cutover(shardid.shard_moves, shardid.move_options) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_cutover(shardid.shard_moves, shardid.move_options) IS
    'Router, move phase frozen: freezes the shard on the source, waits for the target, raises its generators, seals the freeze, compares definitions; then caught_up.';
