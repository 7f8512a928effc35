-- Router, rebalance(): what to do next, with its NOTICE. First the moves
-- left in progress (pending: the rows of shardid.shard_moves read by the
-- first call, lowest shard first; each call takes one off): one being
-- rolled back is aborted (abort: abort_move(), not counted), an offline
-- one stops the rebalance (err: 55000, raised by _rebalance_end once the
-- lock is released), any other is resumed. Then the first move of
-- rebalance_plan(strategy, 1, ...), re-made on every call, the shards
-- moved in this CALL excluded so that none moves twice. shard is NULL
-- when the rebalance is to end: max_moves reached (counting the moves
-- made, moved), nothing left to move, or err.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_next(INOUT pending shardid.shard_moves[], strategy text, max_moves integer,
                                                            excluded_shards integer[], moved integer[],
                                                            OUT shard integer, OUT target text, OUT abort boolean, OUT err text[])
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    m    shardid.shard_moves;
    made integer := cardinality(moved);
    plan record;
BEGIN
    IF pending IS NULL THEN
        pending := ARRAY(SELECT x FROM shardid.shard_moves AS x ORDER BY x.shard);
    END IF;
    IF cardinality(pending) > 0 THEN
        m := pending[1];
        pending := pending[2:];
        IF m.phase = 'aborting' THEN
            RAISE NOTICE 'rebalance: finishing the rollback of the move of shard % to node "%"', m.shard, m.target;
            shard := m.shard; target := m.target; abort := true;
        ELSIF m.mode = 'offline' THEN
            err := ARRAY['55000', format('the offline move of shard %s to node "%s" is in progress (phase %s)', m.shard, m.target, m.phase),
                         'An offline move copies the shard''s rows from a client; rebalance() cannot finish it.',
                         format('Finish it with bin/shardid-move-shard --shard %s --to %s --offline, or roll it back with CALL shardid.abort_move(%s);',
                                m.shard, m.target, m.shard)];
        ELSIF max_moves IS NULL OR made < max_moves THEN
            RAISE NOTICE 'rebalance: resuming the move of shard % to node "%" (phase %)', m.shard, m.target, m.phase;
            shard := m.shard; target := m.target; abort := false;
        END IF;
        RETURN;
    END IF;
    IF max_moves IS NOT NULL AND made >= max_moves THEN
        RETURN;
    END IF;
    SELECT p.shard, p.source, p.target, p.bytes INTO plan
      FROM shardid.rebalance_plan(strategy, 1, COALESCE(excluded_shards, '{}') || moved) AS p;
    IF FOUND THEN
        RAISE NOTICE 'rebalance: shard % from node "%" to node "%"%', plan.shard, plan.source, plan.target,
            CASE WHEN plan.bytes IS NULL THEN '' ELSE format(' (%s)', pg_size_pretty(plan.bytes)) END;
        shard := plan.shard; target := plan.target; abort := false;
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_next(shardid.shard_moves[], text, integer, integer[], integer[]) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_next(shardid.shard_moves[], text, integer, integer[], integer[]) IS
    'Router, rebalance(): the next move with its NOTICE: a move left in progress (resumed, or aborted if being rolled back; an offline one is an error), else the first move of a fresh plan; none when done or at max_moves.';
