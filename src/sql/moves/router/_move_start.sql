-- Router, move_shard() once it holds the shard's lock: prepares the move
-- with its options o (offline) (_move_prepare: a move in progress
-- resumed, or a new one checked and recorded). Returns the run: the phase
-- to go on from (aborting: a rollback to finish first), or the error to
-- raise once the caller has committed, the lock released here (a cancel
-- absorbed first).
CREATE OR REPLACE FUNCTION shardid_internal._move_start(shard integer, to_node text, o shardid.move_options)
    RETURNS shardid_internal._move_run
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    s        shardid_internal._move_run;
    m        shardid.shard_moves;
    e_state  text;
    e_msg    text;
    e_detail text;
    e_hint   text;
BEGIN
    BEGIN
        m := shardid_internal._move_prepare(shard, to_node, o.offline);
    EXCEPTION WHEN query_canceled OR OTHERS THEN
        GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_msg = MESSAGE_TEXT,
                                e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
        IF e_state = '57014' THEN
            PERFORM shardid_internal._absorb_cancel();
        END IF;
        PERFORM shardid_internal._move_unlock(shard);
        s.err := ARRAY[e_state, e_msg, e_detail, e_hint];
        RETURN s;
    END;
    s.m := m;
    s.phase := m.phase;
    s.state := '{}';
    s.aborting := m.phase = 'aborting';
    RETURN s;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_start(integer, text, shardid.move_options) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_start(integer, text, shardid.move_options) IS
    'Router, moves: prepares the move with its options (resumed or recorded); returns the run, or its error with the shard''s lock released.';
