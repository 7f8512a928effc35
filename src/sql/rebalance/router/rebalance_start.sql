-- Router: CALL rebalance() in the background: returns the job's ID at
-- once, while a dynamic background worker (no shared_preload_libraries
-- needed) makes the moves as the calling role, committing after each. The
-- job outlives the caller's session; rebalance_status() follows it,
-- rebalance_wait() waits for it, rebalance_stop() stops it. After a restart
-- of the server the job is reported interrupted, and rebalance_start()
-- resumes the work (a move left in progress first).
CREATE OR REPLACE FUNCTION shardid.rebalance_start(
    strategy text DEFAULT 'by_size',
    max_moves integer DEFAULT NULL,
    excluded_shards integer[] DEFAULT '{}',
    drop_old boolean DEFAULT false,
    lock_timeout interval DEFAULT '10 s',
    cutover_timeout interval DEFAULT '30 s',
    catchup_timeout interval DEFAULT '1 day',
    node_timeout interval DEFAULT '30 s') RETURNS bigint
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM shardid_internal._check_rebalance_options(strategy, max_moves);
    PERFORM shardid_internal._dblink_schema();
    RETURN shardid_internal._rebalance_job_create('rebalance', NULL,
        jsonb_build_object('strategy', strategy, 'max_moves', max_moves,
                           'excluded_shards', COALESCE(excluded_shards, '{}'), 'drop_old', drop_old,
                           'lock_timeout', lock_timeout, 'cutover_timeout', cutover_timeout,
                           'catchup_timeout', catchup_timeout, 'node_timeout', node_timeout));
END
$$;

REVOKE ALL ON FUNCTION shardid.rebalance_start(text, integer, integer[], boolean, interval, interval, interval, interval) FROM PUBLIC;

COMMENT ON FUNCTION shardid.rebalance_start(text, integer, integer[], boolean, interval, interval, interval, interval) IS
    'Router: starts rebalance() in a background worker and returns the job''s ID at once; options as rebalance(). Follow it with rebalance_status(), rebalance_wait(), rebalance_stop().';
