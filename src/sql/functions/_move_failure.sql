-- Router, move_shard(): the detail and hint of the error a failed move
-- raises, {detail, hint}, from the error's own (e_detail, e_hint), the
-- phase _move_failed() returned and what the rollback achieved since
-- (_move_outcome): a repointed move is finished by the next CALL, one
-- rolled back stays where it was, an incomplete rollback is finished by
-- abort_move().
CREATE OR REPLACE FUNCTION shardid_internal._move_failure(shard integer, phase text, target text, e_detail text, e_hint text)
    RETURNS text[]
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    outcome text;
BEGIN
    IF phase = 'repointed' THEN
        e_hint := format('The shard is served by node "%s"; its old copy is not retired yet. CALL shardid.move_shard(%s, %L); again to finish.',
                         target, shard, target);
    ELSIF phase IS NOT NULL THEN
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
    RETURN ARRAY[e_detail, e_hint];
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_failure(integer, text, text, text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_failure(integer, text, text, text, text) IS
    'Router, moves: the detail and hint of a failed move''s error, from the phase it was in and what its rollback achieved.';
