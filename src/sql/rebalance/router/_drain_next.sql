-- Router, drain_node(): the next move off the node, with its NOTICE.
-- First the online moves from the node left in progress (pending: read by
-- the first call, lowest shard first; each call takes one off), resumed;
-- then the first move of drain_plan(node, strategy, 1), re-made on every
-- call. shard is NULL when nothing is left to move.
CREATE OR REPLACE FUNCTION shardid_internal._drain_next(INOUT pending shardid.shard_moves[], node text, strategy text,
                                                        OUT shard integer, OUT target text)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    m    shardid.shard_moves;
    plan record;
BEGIN
    IF pending IS NULL THEN
        pending := ARRAY(SELECT x FROM shardid.shard_moves AS x
                          WHERE x.source = _drain_next.node AND x.phase <> 'aborting' AND x.mode = 'online'
                          ORDER BY x.shard);
    END IF;
    IF cardinality(pending) > 0 THEN
        m := pending[1];
        pending := pending[2:];
        RAISE NOTICE 'drain_node: resuming the move of shard % to node "%" (phase %)', m.shard, m.target, m.phase;
        shard := m.shard; target := m.target;
        RETURN;
    END IF;
    SELECT p.shard, p.target, p.bytes INTO plan FROM shardid.drain_plan(node, strategy, 1) AS p;
    IF FOUND THEN
        RAISE NOTICE 'drain_node: shard % from node "%" to node "%"%', plan.shard, node, plan.target,
            CASE WHEN plan.bytes IS NULL THEN '' ELSE format(' (%s)', pg_size_pretty(plan.bytes)) END;
        shard := plan.shard; target := plan.target;
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._drain_next(shardid.shard_moves[], text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._drain_next(shardid.shard_moves[], text, text) IS
    'Router, drain_node(): the next move off the node with its NOTICE: an online move from it left in progress (resumed), else the first move of a fresh drain_plan(); none when the node is empty.';
