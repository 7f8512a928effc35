-- Router, moves: the end of a session's work on a shard's move: closes
-- its node connections and releases the shard's advisory lock (as often
-- as this session holds it). Never fails.
CREATE OR REPLACE FUNCTION shardid._move_unlock(shard integer) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM shardid._move_disconnect();
    FOR i IN 1 .. 1000 LOOP
        EXIT WHEN NOT EXISTS (SELECT FROM pg_locks AS l
                               WHERE l.locktype = 'advisory' AND l.granted AND l.pid = pg_backend_pid()
                                 AND l.classid = hashtext('shardid-move-shard')::oid
                                 AND l.objid = shard::oid AND l.objsubid = 2);
        PERFORM pg_advisory_unlock(hashtext('shardid-move-shard'), shard);
    END LOOP;
END
$$;

REVOKE ALL ON FUNCTION shardid._move_unlock(integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_unlock(integer) IS
    'Router, moves: closes the move''s node connections and releases the shard''s advisory lock held by this session.';
