-- Router, moves: a pause point for tests. When the session running a move
-- sets shardid_test.move_pause to the phase it reaches, it waits there
-- while another session holds the advisory lock
-- (hashtext('shardid_test.move_pause'), shard), so a test can cancel or
-- terminate it in that phase. Without the setting it does nothing.
CREATE OR REPLACE FUNCTION shardid_internal._move_pause(shard integer, phase text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF current_setting('shardid_test.move_pause', true) IS NOT DISTINCT FROM phase THEN
        PERFORM pg_advisory_lock_shared(hashtext('shardid_test.move_pause'), shard);
        PERFORM pg_advisory_unlock_shared(hashtext('shardid_test.move_pause'), shard);
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_pause(integer, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_pause(integer, text) IS
    'Router, moves: test hook; waits in a phase named by shardid_test.move_pause while another session holds its advisory lock.';
