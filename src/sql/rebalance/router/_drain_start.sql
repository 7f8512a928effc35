-- Router, drain_node(): what it refuses before anything is done (an
-- unknown node, no other node, a move in progress to the node, which
-- would land a shard on it), then the rebalance lock, which it holds
-- across its commits as rebalance() does (55P03 naming the holder).
CREATE OR REPLACE FUNCTION shardid_internal._drain_start(node text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    m      shardid.shard_moves;
BEGIN
    IF node IS NULL OR NOT EXISTS (SELECT FROM shardid.nodes AS x WHERE x.node = _drain_start.node) THEN
        RAISE EXCEPTION 'node "%" does not exist', node USING ERRCODE = 'undefined_object';
    END IF;
    IF NOT EXISTS (SELECT FROM shardid.nodes AS x WHERE x.node <> _drain_start.node) THEN
        RAISE EXCEPTION 'there is no other node to drain node "%" onto', node
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Add a node first (shardid.add_node()).';
    END IF;
    SELECT * INTO m FROM shardid.shard_moves AS x WHERE x.target = _drain_start.node AND x.phase <> 'aborting' ORDER BY x.shard LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'shard % is being moved to node "%" (phase %)', m.shard, node, m.phase
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = pg_catalog.format('Finish it (CALL shardid.move_shard(%s, %L);) or roll it back (CALL shardid.abort_move(%s);) first.', m.shard, node, m.shard);
    END IF;
    PERFORM shardid_internal._rebalance_lock(true);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._drain_start(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._drain_start(text) IS
    'Router, drain_node(): refuses an unknown node, no other node, or a move in progress to the node; then takes the rebalance lock (55P03 naming its holder).';
