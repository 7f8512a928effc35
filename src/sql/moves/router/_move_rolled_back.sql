-- Router, after a rollback (_move_rollback) made by move_shard() or
-- abort_move(): releases the shard's lock and returns the run with the
-- error to raise once the caller has committed, from what the rollback
-- achieved (_move_outcome), in one place for the three ways to get here:
--   after = 'abort': abort_move(); no error when the move is rolled back
--     (or there was none); 55000 when the router serves the shard from the
--     target already (move_shard() finishes it) or the rollback is not
--     complete; 57014 when a cancel stopped it part way.
--   after = 'resume': move_shard() found a rollback and went on with it;
--     55000, saying whether it is finished now (to_node: the move asked).
--   after = 'failure': a step failed (_move_step) and was rolled back; the
--     step's SQLSTATE and message (s.err), its detail and hint with the
--     phase _move_failed() returned (s.phase): a repointed move is
--     finished by the next CALL, one rolled back stays where it was, an
--     incomplete rollback is finished by abort_move().
CREATE OR REPLACE FUNCTION shardid_internal._move_rolled_back(s shardid_internal._move_run, after text, to_node text DEFAULT NULL)
    RETURNS shardid_internal._move_run
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    shard    integer := (s.m).shard;
    target   text := (s.m).target;
    outcome  text;
    e_detail text := s.err[3];
    e_hint   text := s.err[4];
BEGIN
    IF after <> 'failure' OR s.phase <> 'repointed' THEN  -- NULL phase: no rollback ran
        outcome := shardid_internal._move_outcome(shard);
    END IF;
    PERFORM shardid_internal._move_unlock(shard);
    IF after = 'abort' THEN
        IF outcome = 'repointed' THEN
            s.err := ARRAY['55000', format('shard %s is already served by node "%s": the move cannot be aborted', shard, target),
                           NULL, format('CALL shardid.move_shard(%s, %L); to finish it.', shard, target)];
        ELSIF outcome = 'cancelled' THEN
            s.err := ARRAY['57014', 'canceling statement due to user request',
                           'The rollback stopped part way: CALL shardid.abort_move() again to finish it.', NULL];
        ELSIF outcome <> 'rolled back' AND outcome <> 'none' THEN
            s.err := ARRAY['55000', format('the rollback of the move of shard %s is not complete', shard), outcome,
                           format('The shard is writable on node "%s" unless that node is down. Fix the cause, then CALL shardid.abort_move(%s); again.',
                                  (s.m).source, shard)];
        END IF;
    ELSIF after = 'resume' THEN
        s.err := ARRAY['55000',
                       format('a rollback of the move of shard %s was interrupted; %s', shard,
                              CASE WHEN outcome = 'rolled back' THEN 'it is finished now: the shard stays where it was'
                                   ELSE 'it is still not complete: ' || outcome END),
                       NULL, format('CALL shardid.move_shard(%s, %L); again to move it.', shard, to_node)];
    ELSIF after = 'failure' THEN
        IF s.phase = 'repointed' THEN
            e_hint := format('The shard is served by node "%s"; its old copy is not retired yet. CALL shardid.move_shard(%s, %L); again to finish.',
                             target, shard, target);
        ELSIF s.phase IS NOT NULL THEN
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
        s.err := ARRAY[s.err[1], s.err[2], e_detail, e_hint];
    ELSE
        RAISE EXCEPTION 'after must be abort, resume or failure, not %', after USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN s;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_rolled_back(shardid_internal._move_run, text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_rolled_back(shardid_internal._move_run, text, text) IS
    'Router, moves: after a rollback made by abort_move() (abort), by move_shard() going on with one it found (resume) or after a failed step (failure), releases the shard''s lock and returns the run with the error to raise from what the rollback achieved.';
