-- Router, phase 'caught_up' of a move: points the router at the target
-- (repoint_shard(), which also turns the phase to 'repointed', under the
-- lock on shard_placement that a rollback takes to read the phase).
CREATE OR REPLACE FUNCTION shardid_internal._move_repoint(shard integer) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    m shardid.shard_moves;
BEGIN
    SELECT * INTO STRICT m FROM shardid.shard_moves AS x WHERE x.shard = _move_repoint.shard;
    PERFORM shardid.repoint_shard(shard, m.target);
    UPDATE shardid.shard_moves AS x SET repointed_at = clock_timestamp() WHERE x.shard = _move_repoint.shard;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_repoint(integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_repoint(integer) IS
    'Router, move phase caught_up: repoints the shard at its target (phase repointed, same transaction).';
