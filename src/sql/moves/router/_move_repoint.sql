-- Router, phase 'caught_up' of a move: points the router at the target
-- (repoint_shard(), which also turns the phase to 'repointed', under the
-- lock on shard_placement that a rollback takes to read the phase).
CREATE OR REPLACE FUNCTION shardid_internal._move_repoint(m shardid.shard_moves) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    shard integer := m.shard;
BEGIN
    PERFORM shardid.repoint_shard(shard, m.target);
    UPDATE shardid.shard_moves AS x SET repointed_at = clock_timestamp() WHERE x.shard = m.shard;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_repoint(shardid.shard_moves) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_repoint(shardid.shard_moves) IS
    'Router, move phase caught_up: repoints the shard at its target (phase repointed, same transaction).';
