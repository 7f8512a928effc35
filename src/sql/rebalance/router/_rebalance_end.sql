-- Router, rebalance(), once the lock is released and committed: raises
-- the error that stopped it (err, from _rebalance_next), or reports:
-- stopped at max_moves, or balanced (with the moves made, moved).
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_end(err text[], max_moves integer, moved integer[]) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    made integer := cardinality(moved);
BEGIN
    IF err IS NOT NULL THEN
        PERFORM shardid_internal._raise(err[1], err[2], err[3], err[4]);
    ELSIF max_moves IS NOT NULL AND made >= max_moves THEN
        RAISE NOTICE 'rebalance: stopped at max_moves (moves made: %): CALL rebalance() again for more', made;
    ELSIF made = 0 THEN
        RAISE NOTICE 'rebalance: balanced: nothing to move';
    ELSE
        RAISE NOTICE 'rebalance: balanced (moves made: %)', made;
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_end(text[], integer, integer[]) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_end(text[], integer, integer[]) IS
    'Router, rebalance(): after the lock is released, raises the error that stopped it, or reports stopped at max_moves or balanced, with the moves made.';
