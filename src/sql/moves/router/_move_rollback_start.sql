-- Router, the first transaction of _move_rollback(): reads the move's row
-- under the lock on shard_placement that repoint_shard() takes and, unless
-- it is repointed, turns it to phase 'aborting' and says so (a NOTICE,
-- once: _move_rollback() may run the steps again). Returns the row to roll
-- back; NULL when there is none, it is repointed (it stays so), or this
-- failed or was cancelled. Never raises: the caller commits either way.
CREATE OR REPLACE FUNCTION shardid_internal._move_rollback_start(shard integer) RETURNS shardid.shard_moves
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    m shardid.shard_moves;
BEGIN
    LOCK TABLE shardid.shard_placement IN SHARE ROW EXCLUSIVE MODE;
    SELECT * INTO m FROM shardid.shard_moves AS x WHERE x.shard = _move_rollback_start.shard FOR UPDATE;
    IF m.shard IS NULL OR m.phase = 'repointed' THEN
        RETURN NULL;
    END IF;
    UPDATE shardid.shard_moves AS x SET phase = 'aborting', updated_at = clock_timestamp()
     WHERE x.shard = _move_rollback_start.shard;
    RAISE NOTICE 'rolling back the move of shard %: it stays on "%"', m.shard, m.source;
    RETURN m;
EXCEPTION WHEN query_canceled OR OTHERS THEN
    RETURN NULL;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_rollback_start(integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_rollback_start(integer) IS
    'Router, moves: marks a move that is not repointed as aborting, under the repoint''s lock, and returns its row; NULL when there is nothing to roll back; never raises.';
