-- test/lib/move_pause.sql — the move tests' pause point, not part of the
-- extension. shardid_internal._move_pause(shard, phase), which a move passes in
-- each phase, calls this function when a superuser owns it and its schema.
-- Load it on the router as a superuser (test/tap/ShardidMoves.pm,
-- test/tap/rebalance.pl, test/tap/day2_more.pl). When the session running a move sets
-- shardid_test.move_pause to the phase it reaches, it waits there while
-- another session holds the advisory lock
-- (hashtext('shardid_test.move_pause'), shard), so a test can cancel or
-- terminate it in that phase. Without the setting it does nothing.
CREATE SCHEMA IF NOT EXISTS shardid_test;
REVOKE ALL ON SCHEMA shardid_test FROM PUBLIC;
CREATE OR REPLACE FUNCTION shardid_test.move_pause(shard integer, phase text) RETURNS void
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
