-- Router, move_shard(): the first step after a phase failed with e_state
-- and e_msg: absorbs a second cancel, closes the move's connections and
-- records the error as the move's last_error (on one line: _one_line). Returns the move's phase
-- now (NULL without a row; phase, the one it failed in, if the row cannot
-- be written). Never raises; the caller commits, then rolls back
-- (_move_rollback, which keeps a repointed move) and reports
-- (_move_rolled_back).
CREATE OR REPLACE FUNCTION shardid_internal._move_failed(shard integer, phase text, e_state text, e_msg text) RETURNS text
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF e_state = '57014' THEN
        PERFORM shardid_internal._absorb_cancel();
    END IF;
    PERFORM shardid_internal._move_disconnect();
    BEGIN
        UPDATE shardid.shard_moves AS x SET last_error = shardid_internal._one_line(e_msg), updated_at = clock_timestamp()
         WHERE x.shard = _move_failed.shard
        RETURNING x.phase INTO phase;
    EXCEPTION WHEN query_canceled OR OTHERS THEN
        NULL;
    END;
    RETURN phase;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_failed(integer, text, text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_failed(integer, text, text, text) IS
    'Router, moves: after a failed phase, absorbs a second cancel, closes the move''s connections, records the error on the move''s row and returns its phase; never raises.';
