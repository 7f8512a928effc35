-- Router, phase 'repointed' of a move: the target serves the shard; what
-- is left is dropped and retired, each step repeatable: the subscription
-- (and 15's role) on the target, the slots (its own and the table-sync
-- ones) and the publication on the source, then the old copy on the
-- source (retire_shard: dropped with drop_old, else renamed
-- <schema>_moved_<move_id>, cut to 63 bytes at a character boundary, with
-- triggers refusing writes), locking its tables 300 ms at a time for
-- lock_timeout in all. Deletes the move's row; returns what became of the
-- old copy.
CREATE OR REPLACE FUNCTION shardid_internal._move_finish(m shardid.shard_moves, o shardid.move_options) RETURNS text
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    shard integer := m.shard;
    nm   name;
    res  jsonb;
    remaining text;
    old  text;
BEGIN
    nm := shardid_internal._move_name(m.shard, m.move_id);
    PERFORM shardid_internal._node_connect('shardid_move_target', m.target);
    res := shardid_internal._node('shardid_move_target', format('SELECT shardid_internal._move_unsubscribe(%L)', nm), m.target)::jsonb;
    PERFORM shardid_internal._node_connect('shardid_move_source', m.source);
    remaining := shardid_internal._node('shardid_move_source', format('SELECT shardid_internal._move_unpublish(%L, %L, %L, 10000)', nm,
                                                         COALESCE(m.subscription, (res->>'subid')::oid),
                                                         COALESCE(m.target_sysid, res->>'sysid')), m.source);
    IF remaining <> '' THEN
        RAISE EXCEPTION 'replication slots of the move are still in use on node "%": %', m.source, remaining
            USING ERRCODE = 'object_in_use',
                  HINT = format('The shard is served by node "%s". CALL shardid.move_shard(%s, %L); again to finish.', m.target, shard, m.target);
    END IF;
    old := (shardid_internal._move_lock_tables(shard,
                format('SELECT to_jsonb(shardid_internal._move_retire(%s, %L, %L, %L, 300))', shard, m.schema_name, m.target,
                       CASE WHEN o.drop_old THEN NULL ELSE shardid_internal._fit_name(m.schema_name, '_moved_' || m.move_id) END),
                o.lock_timeout))#>>'{}';
    DELETE FROM shardid.shard_moves AS x WHERE x.shard = m.shard;
    RETURN old;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_finish(shardid.shard_moves, shardid.move_options) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_finish(shardid.shard_moves, shardid.move_options) IS
    'Router, move phase repointed: drops the subscription, slots and publication, retires the old copy, deletes the move''s row.';
