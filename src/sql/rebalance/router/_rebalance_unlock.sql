-- Router: releases the rebalance lock if this session holds it.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_unlock() RETURNS boolean
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT shardid_internal._session_unlock('rebalance')
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_unlock() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_unlock() IS
    'Router: releases the lock rebalance() holds, if this session holds it.';
