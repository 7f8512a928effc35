-- Router, phase 'schema' of a move: the target makes the shard from its
-- templates with the source's owners and privileges, and registers it
-- (_create_shard_copy, one transaction there); the copy must be the
-- source's shard (else the move fails and rolls back). Then phase 'copy'
-- (online) or 'frozen' (offline).
CREATE OR REPLACE FUNCTION shardid_internal._move_schema(m shardid.shard_moves) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    shard integer := m.shard;
    src  jsonb;
    made jsonb;
BEGIN
    PERFORM shardid_internal._node_connect('shardid_move_source', m.source);
    PERFORM shardid_internal._node_connect('shardid_move_target', m.target);
    src := shardid_internal._node('shardid_move_source', format('SELECT shardid_internal._move_source_facts(%s)', shard), m.source)::jsonb;
    IF src->>'schema_name' IS DISTINCT FROM m.schema_name THEN
        RAISE EXCEPTION 'shard % is no longer registered on node "%" in schema %', shard, m.source, quote_ident(m.schema_name)
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    made := shardid_internal._node('shardid_move_target', format('SELECT shardid_internal._create_shard_copy(%s, %L, false)', shard, src), m.target)::jsonb;
    PERFORM shardid_internal._move_compare_shard(shard, m.source, m.target, src->'definition', made, format('node "%s"', m.target));
    UPDATE shardid.shard_moves AS x
       SET phase = CASE WHEN m.mode = 'offline' THEN 'frozen' ELSE 'copy' END, bytes_total = (src->>'bytes')::bigint,
           updated_at = clock_timestamp()
     WHERE x.shard = m.shard;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_schema(shardid.shard_moves) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_schema(shardid.shard_moves) IS
    'Router, move phase schema: the target makes and registers the shard from its templates with the source''s owners and privileges; the definitions must agree.';
