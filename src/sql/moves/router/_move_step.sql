-- Router, move_shard(): one step of a move, the phase function of s.phase
-- given the move's row (schema, copy: one poll, frozen: the cut-over,
-- caught_up: the repoint, repointed: the finish), then the row read again
-- for the next step. o: the move's options, whole; each phase function
-- takes what it uses. The caller commits after each step, so the phase
-- commits as it advances. On an error the step's work is undone and the
-- error is returned in s.err after _move_failed() (s.phase: the move's
-- phase now); the caller commits, rolls back (_move_rollback) and raises
-- it (_move_rolled_back).
CREATE OR REPLACE FUNCTION shardid_internal._move_step(s shardid_internal._move_run, o shardid.move_options)
    RETURNS shardid_internal._move_run
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    m        shardid.shard_moves := s.m;
    shard    integer := m.shard;
    e_state  text;
    e_msg    text;
    e_detail text;
    e_hint   text;
BEGIN
    BEGIN
        CASE s.phase
            WHEN 'schema' THEN
                PERFORM shardid_internal._move_pause(shard, 'schema');
                PERFORM shardid_internal._move_schema(m);
            WHEN 'copy' THEN
                s.state := shardid_internal._move_copy(m, o, s.state);
            WHEN 'frozen' THEN
                s.steps := shardid_internal._move_cutover(m, o);
            WHEN 'caught_up' THEN
                PERFORM shardid_internal._move_pause(shard, 'caught_up');
                PERFORM shardid_internal._move_repoint(m);
            WHEN 'repointed' THEN
                PERFORM shardid_internal._move_pause(shard, 'repointed');
                s.old := shardid_internal._move_finish(m, o);
            ELSE
                RAISE EXCEPTION 'move of shard % in unexpected phase %', shard, s.phase USING ERRCODE = 'internal_error';
        END CASE;
        s.phase := NULL;
        SELECT x.* INTO m FROM shardid.shard_moves AS x WHERE x.shard = (s.m).shard;
        IF FOUND THEN
            s.phase := m.phase;
            s.m := m;
        END IF;
    EXCEPTION WHEN query_canceled OR OTHERS THEN
        GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_msg = MESSAGE_TEXT,
                                e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
        s.phase := shardid_internal._move_failed(shard, s.phase, e_state, e_msg);
        s.err := ARRAY[e_state, e_msg, e_detail, e_hint];
        RETURN s;
    END;
    -- the repoint of a shard frozen in this CALL: the refused window ends
    -- when the caller commits it
    s.routed := COALESCE(s.phase = 'repointed' AND m.frozen_at IS NOT NULL, false);
    -- offline: the rows are to be copied by the caller, then CALL again
    s.waiting := COALESCE(s.steps ? 'waiting', false);
    RETURN s;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_step(shardid_internal._move_run, shardid.move_options) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_step(shardid_internal._move_run, shardid.move_options) IS
    'Router, moves: one step of a move, the phase function of its phase given the move''s row, then the row read again; on an error the step is undone, recorded (_move_failed) and returned.';
