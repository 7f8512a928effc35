-- Router, moves: what _move_rollback() achieved, read from the move's row:
-- 'rolled back' (no row left), 'repointed' (not rolled back: the router
-- points at the target), 'cancelled' (a cancel stopped the rollback), or
-- 'incomplete: ' and what is left.
CREATE OR REPLACE FUNCTION shardid_internal._move_outcome(shard integer) RETURNS text
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN m.shard IS NULL THEN 'rolled back'
                WHEN m.phase = 'repointed' THEN 'repointed'
                WHEN m.last_error LIKE 'rollback cancelled%' THEN 'cancelled'
                ELSE 'incomplete: ' || COALESCE(m.last_error, 'phase ' || m.phase) END
      FROM (SELECT 1) AS one
      LEFT JOIN shardid.shard_moves AS m ON m.shard = _move_outcome.shard
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_outcome(integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_outcome(integer) IS
    'Router, moves: the outcome of a rollback, from the move''s row: rolled back, repointed, cancelled, or incomplete and what is left.';
