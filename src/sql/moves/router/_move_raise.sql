-- Router, move_shard(): raises the error of a run (s.err) if it has one,
-- once the caller has committed what is to be kept.
CREATE OR REPLACE FUNCTION shardid_internal._move_raise(s shardid_internal._move_run) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF s.err IS NOT NULL THEN
        PERFORM shardid_internal._raise(s.err[1], s.err[2], s.err[3], s.err[4]);
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_raise(shardid_internal._move_run) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_raise(shardid_internal._move_run) IS
    'Router, moves: raises the error a move_shard() run carries, if any.';
