-- Router: CALL drain_node() in the background, as rebalance_start() does
-- for rebalance(): returns the job's ID at once.
CREATE OR REPLACE FUNCTION shardid.drain_node_start(
    node text,
    strategy text DEFAULT 'by_size',
    drop_old boolean DEFAULT false,
    lock_timeout interval DEFAULT '10 s',
    cutover_timeout interval DEFAULT '30 s',
    catchup_timeout interval DEFAULT '1 day',
    node_timeout interval DEFAULT '30 s') RETURNS bigint
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM shardid_internal._check_rebalance_options(strategy, NULL);
    PERFORM shardid_internal._dblink_schema();
    IF node IS NULL OR NOT EXISTS (SELECT FROM shardid.nodes AS x WHERE x.node = drain_node_start.node) THEN
        RAISE EXCEPTION 'node "%" does not exist', node USING ERRCODE = 'undefined_object';
    END IF;
    RETURN shardid_internal._rebalance_job_create('drain', node,
        jsonb_build_object('strategy', strategy, 'max_moves', NULL, 'excluded_shards', '{}'::integer[], 'drop_old', drop_old,
                           'lock_timeout', lock_timeout, 'cutover_timeout', cutover_timeout,
                           'catchup_timeout', catchup_timeout, 'node_timeout', node_timeout));
END
$$;

REVOKE ALL ON FUNCTION shardid.drain_node_start(text, text, boolean, interval, interval, interval, interval) FROM PUBLIC;

COMMENT ON FUNCTION shardid.drain_node_start(text, text, boolean, interval, interval, interval, interval) IS
    'Router: starts drain_node() in a background worker and returns the job''s ID at once; follow it with rebalance_status(), rebalance_wait(), rebalance_stop().';
