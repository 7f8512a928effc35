-- Router, rebalance(): its options checked (_check_rebalance_options),
-- then the rebalance lock taken for this session (_rebalance_lock():
-- 55P03 naming the background job or session that holds it). The caller commits at once and keeps the lock
-- across its commits.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_begin(strategy text, max_moves integer) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM shardid_internal._check_rebalance_options(strategy, max_moves);
    PERFORM shardid_internal._rebalance_lock(true);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_begin(text, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_begin(text, integer) IS
    'Router, rebalance(): checks its options and takes the rebalance lock (55P03 naming its holder).';
