-- Router, rebalance(): its options checked (_check_rebalance_options),
-- then the rebalance lock taken for this session (55P03 naming the
-- session that holds it). The caller commits at once and keeps the lock
-- across its commits.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_begin(strategy text, max_moves integer) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    holder integer;
BEGIN
    PERFORM shardid_internal._check_rebalance_options(strategy, max_moves);
    holder := shardid_internal._session_lock('rebalance');
    IF holder IS NOT NULL THEN
        RAISE EXCEPTION 'another rebalance is running'
            USING ERRCODE = 'lock_not_available',
                  DETAIL = format('The router session with process ID %s holds the rebalance lock.', holder),
                  HINT = 'Wait for it to finish, or cancel it (pg_cancel_backend); a rebalance that failed keeps the lock until its session ends.';
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_begin(text, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_begin(text, integer) IS
    'Router, rebalance(): checks its options and takes the rebalance lock (55P03 naming its holder).';
