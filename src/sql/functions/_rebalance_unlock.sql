-- Router: releases the rebalance lock if this session holds it.
CREATE OR REPLACE FUNCTION shardid._rebalance_unlock() RETURNS boolean
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT pg_advisory_unlock(hashtext('shardid-rebalance'), 0)
      FROM (SELECT) AS x
     WHERE EXISTS (SELECT FROM pg_locks AS l
                    WHERE l.locktype = 'advisory' AND l.pid = pg_backend_pid()
                      AND l.classid = hashtext('shardid-rebalance')::oid AND l.objid = 0::oid
                      AND l.objsubid = 2 AND l.granted)
$$;

REVOKE ALL ON FUNCTION shardid._rebalance_unlock() FROM PUBLIC;

COMMENT ON FUNCTION shardid._rebalance_unlock() IS
    'Router: releases the lock rebalance() holds, if this session holds it.';
