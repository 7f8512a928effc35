-- Router, move_shard(), after a failed step (_move_step) and the rollback
-- (_move_rollback): releases the shard's lock and returns the run with the
-- error to raise once the caller has committed: the step's SQLSTATE and
-- message, the detail and hint from the error's own, the phase
-- _move_failed() returned (s.phase) and what the rollback achieved since
-- (_move_outcome): a repointed move is finished by the next CALL, one
-- rolled back stays where it was, an incomplete rollback is finished by
-- abort_move().
CREATE OR REPLACE FUNCTION shardid_internal._move_failure(s shardid_internal._move_run)
    RETURNS shardid_internal._move_run
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    shard    integer := (s.m).shard;
    target   text := (s.m).target;
    e_detail text := s.err[3];
    e_hint   text := s.err[4];
    outcome  text;
BEGIN
    IF s.phase = 'repointed' THEN
        e_hint := format('The shard is served by node "%s"; its old copy is not retired yet. CALL shardid.move_shard(%s, %L); again to finish.',
                         target, shard, target);
    ELSIF s.phase IS NOT NULL THEN
        outcome := shardid_internal._move_outcome(shard);
        e_detail := concat_ws(E'\n', NULLIF(e_detail, ''),
            CASE outcome WHEN 'rolled back' THEN 'The move was rolled back: the shard stays where it was, writable.'
                         WHEN 'repointed' THEN NULL
                         ELSE 'The rollback is not complete (' || outcome ||
                              format('): the shard is writable where it was unless its node is down. CALL shardid.abort_move(%s); to finish it.', shard) END);
        IF outcome = 'repointed' THEN
            e_hint := format('The shard is served by node "%s" already. CALL shardid.move_shard(%s, %L); again to finish.',
                             target, shard, target);
        END IF;
    END IF;
    PERFORM shardid_internal._move_unlock(shard);
    s.err := ARRAY[s.err[1], s.err[2], e_detail, e_hint];
    RETURN s;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_failure(shardid_internal._move_run) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_failure(shardid_internal._move_run) IS
    'Router, moves: after a failed step and its rollback, releases the shard''s lock and returns the run with the error to raise: its detail and hint from the phase it was in and what the rollback achieved.';
