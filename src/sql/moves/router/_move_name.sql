-- Router, moves: the name of a move's publication, replication slot and
-- subscription (and, on 15, of the role its subscription runs as):
-- shardid_move_<shard>_<move_id>, unique per move (move_id is the start
-- in ms), plain ASCII as slot names must be, within 63 bytes.
CREATE OR REPLACE FUNCTION shardid_internal._move_name(shard integer, move_id bigint) RETURNS name
    LANGUAGE sql IMMUTABLE STRICT
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT shardid_internal._fit_name('shardid_move_' || shard, '_' || move_id)
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_name(integer, bigint) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_name(integer, bigint) IS
    'Router, moves: shardid_move_<shard>_<move_id>, the name of a move''s publication, slot and subscription.';
