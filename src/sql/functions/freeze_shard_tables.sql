-- Node, move cut-over: every table of the shard's schema gets the trigger
-- shardid_move_frozen, which refuses writes (25006, at once). Waits for
-- writes in flight (the caller sets lock_timeout). Returns the number of
-- tables.
--
-- lease: the freeze holds only while this session holds the advisory lock
-- (1936222564, shard), which it takes here (lock_not_available if writers
-- or another session hold it): if the session that froze the shard ends
-- (the mover was killed, the router or this node restarted) writes go
-- through again, since nothing is routed elsewhere before the freeze is
-- made permanent. Without lease (or called again without it) the freeze
-- is permanent until thaw_shard_tables(): what a move sets just before it
-- repoints the router, and what an offline move and a manual freeze use.
CREATE OR REPLACE FUNCTION shardid.freeze_shard_tables(schema_name name, shard integer, target text, lease boolean DEFAULT false)
    RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF lease AND NOT EXISTS (SELECT FROM pg_locks AS l
                              WHERE l.locktype = 'advisory' AND l.pid = pg_backend_pid() AND l.granted
                                AND l.classid = 1936222564::oid AND l.objid = shard::oid AND l.objsubid = 2
                                AND l.mode = 'ExclusiveLock') THEN
        -- waits (lock_timeout) for writers that passed a lapsed lease freeze
        PERFORM pg_advisory_lock(1936222564, shard);
    END IF;
    RETURN shardid._for_tables(schema_name, '{r,p}',
        'CREATE OR REPLACE TRIGGER shardid_move_frozen BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON %I.%I
         FOR EACH STATEMENT EXECUTE FUNCTION shardid._refuse_frozen_write(%L, %L, %L)',
        ARRAY[shard::text, target, CASE WHEN lease THEN 'lease' ELSE 'permanent' END]);
END
$$;

REVOKE ALL ON FUNCTION shardid.freeze_shard_tables(name, integer, text, boolean) FROM PUBLIC;

COMMENT ON FUNCTION shardid.freeze_shard_tables(name, integer, text, boolean) IS
    'Node, move cut-over: puts trigger shardid_move_frozen on every table of the schema (writes fail with 25006), held by this session''s advisory lock if lease, else permanent; returns the number of tables.';
