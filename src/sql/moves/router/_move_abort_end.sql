-- Router, abort_move(), after _move_rollback: releases the shard's lock
-- and returns the run with the error to raise once the caller has
-- committed, from what the rollback achieved (_move_outcome): none when
-- the move is rolled back; 55000 when the router serves the shard from the
-- target already (move_shard() finishes it) or the rollback is not
-- complete; 57014 when a cancel stopped it part way.
CREATE OR REPLACE FUNCTION shardid_internal._move_abort_end(s shardid_internal._move_run) RETURNS shardid_internal._move_run
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    shard   integer := (s.m).shard;
    outcome text := shardid_internal._move_outcome(shard);
BEGIN
    PERFORM shardid_internal._move_unlock(shard);
    IF outcome = 'repointed' THEN
        s.err := ARRAY['55000', format('shard %s is already served by node "%s": the move cannot be aborted', shard, (s.m).target),
                       NULL, format('CALL shardid.move_shard(%s, %L); to finish it.', shard, (s.m).target)];
    ELSIF outcome = 'cancelled' THEN
        s.err := ARRAY['57014', 'canceling statement due to user request',
                       'The rollback stopped part way: CALL shardid.abort_move() again to finish it.', NULL];
    ELSIF outcome <> 'rolled back' AND outcome <> 'none' THEN
        s.err := ARRAY['55000', format('the rollback of the move of shard %s is not complete', shard), outcome,
                       format('The shard is writable on node "%s" unless that node is down. Fix the cause, then CALL shardid.abort_move(%s); again.',
                              (s.m).source, shard)];
    END IF;
    RETURN s;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_abort_end(shardid_internal._move_run) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_abort_end(shardid_internal._move_run) IS
    'Router, abort_move(): after the rollback, releases the shard''s lock and returns the run with the error to raise (already repointed, cancelled, or not complete), none when it is rolled back.';
