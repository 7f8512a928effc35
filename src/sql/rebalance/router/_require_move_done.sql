-- rebalance() trusts a move only once it is done: after CALL move_shard()
-- returns, its row must be gone and the shard placed on the target. A move
-- that returns unfinished (an offline move waits for a client to copy its
-- rows) or went elsewhere stops the rebalance instead of being counted.
CREATE OR REPLACE FUNCTION shardid_internal._require_move_done(shard integer, target text) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    phase text;
    node  text;
BEGIN
    SELECT m.phase INTO phase FROM shardid.shard_moves AS m WHERE m.shard = _require_move_done.shard;
    IF FOUND THEN
        RAISE EXCEPTION 'the move of shard % to node "%" returned unfinished (phase %)', shard, target, phase
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = pg_catalog.format('CALL shardid.move_shard(%s, %L); to go on with it, or CALL shardid.abort_move(%s); to roll it back, then rebalance again.',
                                           shard, target, shard);
    END IF;
    SELECT p.node INTO node FROM shardid.shard_placement AS p WHERE p.shard = _require_move_done.shard;
    IF node IS DISTINCT FROM target THEN
        RAISE EXCEPTION 'shard % is placed on node "%" after its move to node "%"', shard, COALESCE(node, '(none)'), target
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._require_move_done(integer, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._require_move_done(integer, text) IS
    'Internal, rebalance(): raises 55000 unless the move of a shard is done (no move row left, placed on the target).';
