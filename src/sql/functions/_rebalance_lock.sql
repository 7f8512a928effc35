-- Router: takes the rebalance lock for this session, the one rebalance()
-- holds across its commits, so that rebalance(), drain_node() and the
-- background job run one at a time; NULL when taken (or held already),
-- else the process ID of the session that holds it. Released by
-- _rebalance_unlock(), or when the session ends.
CREATE OR REPLACE FUNCTION shardid._rebalance_lock() RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    lock_key CONSTANT integer := hashtext('shardid-rebalance');
BEGIN
    IF EXISTS (SELECT FROM pg_locks AS l
                WHERE l.locktype = 'advisory' AND l.pid = pg_backend_pid()
                  AND l.classid = lock_key::oid AND l.objid = 0::oid AND l.objsubid = 2 AND l.granted)
       OR pg_try_advisory_lock(lock_key, 0) THEN
        RETURN NULL;
    END IF;
    RETURN (SELECT l.pid FROM pg_locks AS l
             WHERE l.locktype = 'advisory' AND l.classid = lock_key::oid AND l.objid = 0::oid
               AND l.objsubid = 2 AND l.granted
             LIMIT 1);
END
$$;

REVOKE ALL ON FUNCTION shardid._rebalance_lock() FROM PUBLIC;

COMMENT ON FUNCTION shardid._rebalance_lock() IS
    'Router: takes the lock rebalance() holds, for drain_node() and the background rebalance; NULL when taken, else the holder''s process ID.';
