-- Router: moves one logical shard to another node while it takes writes
-- (docs/moves.md). The move is a row of shardid.shard_moves whose phase
-- commits as it advances (schema, copy, frozen, caught_up, repointed), the
-- nodes driven over dblink (CREATE EXTENSION dblink here). CALL it again
-- after any interruption to resume from the phase reached. A failure or a
-- cancel (pg_cancel_backend) before the router points at the target rolls
-- the move back (_move_rollback), the source writable first; after it,
-- CALL again to finish. pg_terminate_backend of the session, or its end,
-- leaves the phase for the next CALL or abort_move(): the shard's lock
-- (shardid.session_locks) and the source's freeze lease go with the
-- session. One session per shard (that lock, committed before anything
-- else, released and committed before the CALL ends). Writes to the shard are
-- refused (25006) only during the cut-over.
--   drop_old: drop the old copy instead of keeping it renamed
--   offline: for a source without wal_level = logical; the shard is frozen
--     while its rows are copied, by bin/shardid-move-shard --offline
--   lock_timeout: how long the freeze and the retirement may keep trying
--     to lock the shard's tables (300 ms at a time)
--   cutover_timeout: how long the frozen shard waits for the target
--   catchup_timeout: how long the copy may take
--   node_timeout: how long a node may be unreachable during the copy
-- A procedure that commits cannot pin search_path with SET: every name
-- below is schema-qualified, and the work is done by functions that pin it.
CREATE OR REPLACE PROCEDURE shardid.move_shard(
    shard integer,
    to_node text,
    drop_old boolean DEFAULT false,
    offline boolean DEFAULT false,
    lock_timeout interval DEFAULT '10 s',
    cutover_timeout interval DEFAULT '30 s',
    catchup_timeout interval DEFAULT '1 day',
    node_timeout interval DEFAULT '30 s')
    LANGUAGE plpgsql
AS $$
DECLARE
    m        shardid.shard_moves;
    last     shardid.shard_moves;
    phase    text;
    state    jsonb := '{}';
    steps    jsonb;
    old      text;
    outcome  text;
    t_start  timestamptz := pg_catalog.clock_timestamp();
    t_routed timestamptz;
    e_state  text;
    e_msg    text;
    e_detail text;
    e_hint   text;
    hints    text[];
BEGIN
    IF NOT shardid_internal._commit_allowed() THEN
        RAISE EXCEPTION 'shardid.move_shard() cannot run inside a transaction block'
            USING ERRCODE = 'active_sql_transaction',
                  DETAIL = 'It commits once per phase (so that an interruption resumes or rolls back from there), which a CALL inside BEGIN ... COMMIT, a function, an EXCEPTION block or a multi-statement query string cannot do.',
                  HINT = 'CALL it on its own (autocommit).';
    END IF;
    PERFORM shardid_internal._move_lock(shard, 'shardid.move_shard()');
    COMMIT;
    BEGIN
        IF offline IS NULL OR drop_old IS NULL OR lock_timeout IS NULL OR cutover_timeout IS NULL
           OR catchup_timeout IS NULL OR node_timeout IS NULL THEN
            RAISE EXCEPTION 'move_shard() arguments must not be NULL' USING ERRCODE = 'null_value_not_allowed';
        END IF;
        m := shardid_internal._move_prepare(shard, to_node, offline);
        phase := m.phase;
        last := m;
    EXCEPTION WHEN query_canceled OR OTHERS THEN
        GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_msg = MESSAGE_TEXT,
                                e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
    END;
    IF e_state IS NOT NULL THEN
        IF e_state OPERATOR(pg_catalog.=) '57014' THEN
            PERFORM shardid_internal._absorb_cancel();
        END IF;
        PERFORM shardid_internal._move_unlock(shard);
        COMMIT;
        PERFORM shardid_internal._raise(e_state, e_msg, e_detail, e_hint);
    END IF;
    COMMIT;

    IF phase OPERATOR(pg_catalog.=) 'aborting' THEN
        CALL shardid_internal._move_rollback(shard);
        outcome := shardid_internal._move_outcome(shard);
        PERFORM shardid_internal._move_unlock(shard);
        COMMIT;
        PERFORM shardid_internal._raise('55000',
            pg_catalog.format('a rollback of the move of shard %s was interrupted; %s', shard,
                              CASE WHEN outcome OPERATOR(pg_catalog.=) 'rolled back' THEN 'it is finished now: the shard stays where it was'
                                   ELSE 'it is still not complete: ' OPERATOR(pg_catalog.||) outcome END),
            NULL, pg_catalog.format('CALL shardid.move_shard(%s, %L); again to move it.', shard, to_node));
    END IF;

    WHILE phase IS NOT NULL LOOP
        BEGIN
            CASE phase
                WHEN 'schema' THEN
                    PERFORM shardid_internal._move_pause(shard, 'schema');
                    PERFORM shardid_internal._move_schema(shard);
                WHEN 'copy' THEN
                    state := shardid_internal._move_copy(shard, catchup_timeout, node_timeout, state);
                WHEN 'frozen' THEN
                    steps := shardid_internal._move_cutover(shard, lock_timeout, cutover_timeout);
                WHEN 'caught_up' THEN
                    PERFORM shardid_internal._move_pause(shard, 'caught_up');
                    PERFORM shardid_internal._move_repoint(shard);
                WHEN 'repointed' THEN
                    PERFORM shardid_internal._move_pause(shard, 'repointed');
                    old := shardid_internal._move_finish(shard, drop_old, lock_timeout);
                ELSE
                    RAISE EXCEPTION 'move of shard % in unexpected phase %', shard, phase USING ERRCODE = 'internal_error';
            END CASE;
            phase := NULL;
            SELECT x.* INTO m FROM shardid.shard_moves AS x WHERE x.shard OPERATOR(pg_catalog.=) move_shard.shard;
            IF FOUND THEN
                phase := m.phase;
                last := m;
            END IF;
        EXCEPTION WHEN query_canceled OR OTHERS THEN
            GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_msg = MESSAGE_TEXT,
                                    e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
        END;
        EXIT WHEN e_state IS NOT NULL;
        COMMIT;
        -- the end of the refused window: the repoint committed in this CALL
        IF phase OPERATOR(pg_catalog.=) 'repointed' AND t_routed IS NULL AND last.frozen_at IS NOT NULL THEN
            t_routed := pg_catalog.clock_timestamp();
        END IF;
        -- offline: the rows are to be copied by the caller, then CALL again
        EXIT WHEN steps OPERATOR(pg_catalog.?) 'waiting';
    END LOOP;

    IF e_state IS NOT NULL THEN
        phase := shardid_internal._move_failed(shard, phase, e_state, e_msg);
        COMMIT;
        -- rolled back unless it is repointed (or gone): _move_rollback_start
        CALL shardid_internal._move_rollback(shard);
        hints := shardid_internal._move_failure(shard, phase, last.target, e_detail, e_hint);
        PERFORM shardid_internal._move_unlock(shard);
        COMMIT;
        PERFORM shardid_internal._raise(e_state, e_msg, hints[1], hints[2]);
    END IF;

    PERFORM shardid_internal._move_unlock(shard);
    COMMIT;
    PERFORM shardid_internal._move_report(last, t_start, t_routed, old, steps);
END
$$;

REVOKE ALL ON PROCEDURE shardid.move_shard(integer, text, boolean, boolean, interval, interval, interval, interval) FROM PUBLIC;

COMMENT ON PROCEDURE shardid.move_shard(integer, text, boolean, boolean, interval, interval, interval, interval) IS
    'Router: moves a shard to another node while it takes writes (refused only during the cut-over); CALL again to resume an interrupted move; a failure or cancel before the repoint rolls it back.';
