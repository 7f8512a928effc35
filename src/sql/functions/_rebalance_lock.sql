-- Router: takes the rebalance lock for this session, the row 'rebalance'
-- of shardid.session_locks that rebalance() holds across its commits, so
-- that rebalance(), drain_node() and the background job run one at a time;
-- NULL when taken (or held already), else the process ID of the session
-- that holds it. The caller commits at once. Released by
-- _rebalance_unlock(), or free once the session ends.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_lock() RETURNS integer
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT shardid_internal._session_lock('rebalance')
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_lock() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_lock() IS
    'Router: takes the lock rebalance() holds, for drain_node() and the background rebalance; NULL when taken, else the holder''s process ID.';
