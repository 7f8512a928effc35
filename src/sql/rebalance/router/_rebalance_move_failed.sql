-- Router, in a move's worker after an error ended its CALL: records it in
-- the move's row (error); the driver retries the move or gives up.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_move_failed(job_id bigint, shard integer, error text) RETURNS void
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    UPDATE shardid.rebalance_job_moves AS x
       SET state = 'error', last_error = error, updated_at = pg_catalog.clock_timestamp()
     WHERE x.job_id = _rebalance_move_failed.job_id AND x.shard = _rebalance_move_failed.shard
       AND x.state IN ('starting', 'running')
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_move_failed(bigint, integer, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_move_failed(bigint, integer, text) IS
    'Router, a rebalance move''s worker: records the error that ended its move; the driver retries it or gives up.';
