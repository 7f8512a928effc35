-- Last step of a move, once the new node holds a verified copy: the
-- partition points at the new node, writable. The shard must be frozen on
-- the router, or have a move to this node in phase caught_up (frozen on its
-- node), which turns repointed in the same transaction.
CREATE OR REPLACE FUNCTION shardid.repoint_shard(shard integer, node text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p shardid.shard_placement;
    m shardid.shard_moves;
BEGIN
    LOCK TABLE shardid.shard_placement IN SHARE ROW EXCLUSIVE MODE;
    SELECT * INTO p FROM shardid.shard_placement AS x WHERE x.shard = repoint_shard.shard;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'shard % is not placed on any node', shard USING ERRCODE = 'undefined_object';
    END IF;
    IF NOT EXISTS (SELECT FROM shardid.nodes AS n WHERE n.node = repoint_shard.node) THEN
        RAISE EXCEPTION 'node "%" does not exist', node USING ERRCODE = 'undefined_object';
    END IF;
    SELECT * INTO m FROM shardid.shard_moves AS x WHERE x.shard = repoint_shard.shard FOR UPDATE;
    IF m.shard IS NOT NULL AND (m.phase <> 'caught_up' OR m.target <> repoint_shard.node) THEN
        RAISE EXCEPTION 'shard % is being moved to node "%" (phase %)', shard, m.target, m.phase
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Only a move that has caught up on its target may be repointed, to that target.',
                  HINT = pg_catalog.format('CALL shardid.move_shard(%s, %L); resumes it, CALL shardid.abort_move(%s); rolls it back.', shard, m.target, shard);
    END IF;
    IF m.shard IS NULL AND NOT p.frozen THEN
        RAISE EXCEPTION 'shard % is not frozen', shard
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Repointing a shard that takes writes would lose the writes made during the copy.',
                  HINT = 'Use CALL shardid.move_shard(), which freezes, copies, checks and repoints.';
    END IF;
    UPDATE shardid.shard_placement AS x
       SET node = repoint_shard.node, frozen = false, placed_at = pg_catalog.now()
     WHERE x.shard = repoint_shard.shard;
    UPDATE shardid.shard_moves AS x SET phase = 'repointed', updated_at = pg_catalog.now()
     WHERE x.shard = repoint_shard.shard;
    PERFORM shardid_internal._refresh_partition(shard);
END
$$;

REVOKE ALL ON FUNCTION shardid.repoint_shard(integer, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid.repoint_shard(integer, text) IS
    'Router, last move step: points the partition of a frozen shard, or of a caught-up move to that node, at its new node, writable.';
