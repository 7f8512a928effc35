-- Router: CALL drain_node() in the background, as rebalance_start() does
-- for rebalance(): returns the job's ID at once; max_parallel,
-- max_moves_per_node, move_retries and retry_pause as rebalance_start().
CREATE OR REPLACE FUNCTION shardid.drain_node_start(node text, strategy text DEFAULT 'by_size',
    drop_old boolean DEFAULT NULL, lock_timeout interval DEFAULT NULL, cutover_timeout interval DEFAULT NULL,
    catchup_timeout interval DEFAULT NULL, node_timeout interval DEFAULT NULL,
    max_parallel integer DEFAULT NULL, max_moves_per_node integer DEFAULT 1,
    move_retries integer DEFAULT 0, retry_pause interval DEFAULT '10 s') RETURNS bigint
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT shardid_internal._rebalance_job_create('drain', node, shardid_internal._rebalance_options('drain', node, strategy,
               NULL, NULL, drop_old, lock_timeout, cutover_timeout, catchup_timeout, node_timeout, max_parallel,
               max_moves_per_node, move_retries, retry_pause))
$$;

REVOKE ALL ON FUNCTION shardid.drain_node_start(text, text, boolean, interval, interval, interval, interval, integer, integer, integer, interval) FROM PUBLIC;

COMMENT ON FUNCTION shardid.drain_node_start(text, text, boolean, interval, interval, interval, interval, integer, integer, integer, interval) IS
    'Router: starts drain_node() in a background worker and returns the job''s ID at once; parallel moves and retries as rebalance_start(). Follow it with rebalance_status(), rebalance_wait(), rebalance_stop().';
