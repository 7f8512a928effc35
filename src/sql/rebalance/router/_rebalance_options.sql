-- Router: the one options record of a rebalance or drain job, built and
-- checked once from the entry points' named parameters (rebalance(),
-- drain_node(), rebalance_start(), drain_node_start()) and stored whole in
-- the job's row (shardid.rebalance_jobs.options), which the scheduler and
-- the moves' workers read: the strategy, max_moves and excluded_shards
-- (_require_rebalance_options()), the parallel options
-- (_require_parallel_options()), and the move options with their defaults
-- (_move_options(), the record shardid.move_options as jsonb, from which
-- each move reads it back whole). A drain refuses an unknown node (42704). Pinned, so
-- that the procedures that call it hold no operator of their own.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_options(kind text, drain_node text, strategy text, max_moves integer,
                                                               excluded_shards integer[], drop_old boolean,
                                                               lock_timeout interval, cutover_timeout interval,
                                                               catchup_timeout interval, node_timeout interval,
                                                               max_parallel integer, max_moves_per_node integer,
                                                               move_retries integer, retry_pause interval)
    RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM shardid_internal._require_rebalance_options(strategy, max_moves);
    PERFORM shardid_internal._require_parallel_options(max_parallel, max_moves_per_node, move_retries, retry_pause);
    IF kind = 'drain' AND (drain_node IS NULL OR NOT EXISTS (SELECT FROM shardid.nodes AS x WHERE x.node = _rebalance_options.drain_node)) THEN
        RAISE EXCEPTION 'node "%" does not exist', drain_node USING ERRCODE = 'undefined_object';
    END IF;
    RETURN pg_catalog.jsonb_build_object('strategy', strategy, 'max_moves', max_moves,
                                         'excluded_shards', COALESCE(excluded_shards, '{}'),
                                         'max_parallel', max_parallel, 'max_moves_per_node', max_moves_per_node,
                                         'move_retries', move_retries, 'retry_pause', retry_pause)
           || pg_catalog.to_jsonb(shardid_internal._move_options(pg_catalog.jsonb_build_object(
                  'drop_old', drop_old, 'lock_timeout', lock_timeout, 'cutover_timeout', cutover_timeout,
                  'catchup_timeout', catchup_timeout, 'node_timeout', node_timeout)));
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_options(text, text, text, integer, integer[], boolean, interval, interval, interval, interval, integer, integer, integer, interval) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_options(text, text, text, integer, integer[], boolean, interval, interval, interval, interval, integer, integer, integer, interval) IS
    'Router: the one options record of a rebalance or drain job, built and checked once from the entry points'' parameters (strategy, max_moves, excluded_shards, parallel and retry options, move options with their defaults); 42704 for a drain of an unknown node.';
