-- Node: undoes freeze_shard_tables() (abort of a move), and releases a
-- freeze lease this session holds. Returns the number of triggers dropped.
CREATE OR REPLACE FUNCTION shardid.thaw_shard_tables(schema_name name) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n integer := shardid._for_tables(schema_name, NULL, 'DROP TRIGGER shardid_move_frozen ON %I.%I', trigger => 'shardid_move_frozen');
BEGIN
    PERFORM pg_advisory_unlock(1936222564, l.objid::integer)
       FROM pg_locks AS l
      WHERE l.locktype = 'advisory' AND l.pid = pg_backend_pid() AND l.granted
        AND l.classid = 1936222564::oid AND l.objsubid = 2 AND l.mode = 'ExclusiveLock';
    RETURN n;
END
$$;

REVOKE ALL ON FUNCTION shardid.thaw_shard_tables(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid.thaw_shard_tables(name) IS
    'Node: drops the shardid_move_frozen triggers of a schema (abort of a move) and releases this session''s freeze lease; returns how many triggers.';
