-- Router, moves: the end of a session's work on a shard's move: closes
-- its node connections and releases the shard's lock in
-- shardid.session_locks (the caller commits). Never fails.
CREATE OR REPLACE FUNCTION shardid_internal._move_unlock(shard integer) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM shardid_internal._move_disconnect();
    PERFORM shardid_internal._session_unlock('move ' || shard);
EXCEPTION WHEN OTHERS THEN
    NULL;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_unlock(integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_unlock(integer) IS
    'Router, moves: closes the move''s node connections and releases the shard''s lock in shardid.session_locks held by this session (the caller commits).';
