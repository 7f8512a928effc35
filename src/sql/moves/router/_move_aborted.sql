-- Router, move_shard() of a move found being rolled back, after
-- _move_rollback has gone on with it: releases the shard's lock and
-- returns the run with the error (55000) to raise once the caller has
-- committed, saying whether the rollback is finished now (_move_outcome).
CREATE OR REPLACE FUNCTION shardid_internal._move_aborted(s shardid_internal._move_run, to_node text)
    RETURNS shardid_internal._move_run
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    shard   integer := (s.m).shard;
    outcome text := shardid_internal._move_outcome(shard);
BEGIN
    PERFORM shardid_internal._move_unlock(shard);
    s.err := ARRAY['55000',
                   format('a rollback of the move of shard %s was interrupted; %s', shard,
                          CASE WHEN outcome = 'rolled back' THEN 'it is finished now: the shard stays where it was'
                               ELSE 'it is still not complete: ' || outcome END),
                   NULL, format('CALL shardid.move_shard(%s, %L); again to move it.', shard, to_node)];
    RETURN s;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_aborted(shardid_internal._move_run, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_aborted(shardid_internal._move_run, text) IS
    'Router, moves: after move_shard() went on with a rollback it found, releases the shard''s lock and returns the run with its 55000 error (finished now, or what is left).';
