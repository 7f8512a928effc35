-- Router, abort_move(): takes the shard's lock (_move_lock) and reads the
-- move's row. Returns the run (its row), or, when no move of the shard is
-- in progress, the error to raise once the caller has committed, the lock
-- released here.
CREATE OR REPLACE FUNCTION shardid_internal._move_abort_start(shard integer) RETURNS shardid_internal._move_run
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    s shardid_internal._move_run;
    m shardid.shard_moves;
BEGIN
    PERFORM shardid_internal._move_lock(shard, 'shardid.abort_move()');
    SELECT x.* INTO m FROM shardid.shard_moves AS x WHERE x.shard = _move_abort_start.shard;
    IF NOT FOUND THEN
        PERFORM shardid_internal._move_unlock(shard);
        s.err := ARRAY['42704', format('no move of shard %s is in progress', shard), NULL, 'See shardid.move_progress.'];
        RETURN s;
    END IF;
    s.m := m;
    s.phase := m.phase;
    RETURN s;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_abort_start(integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_abort_start(integer) IS
    'Router, abort_move(): takes the shard''s move lock and returns the run with the move''s row, or with the error (42704) when no move is in progress, the lock released.';
