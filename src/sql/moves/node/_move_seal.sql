-- Node, source of a move, once the target has everything: makes the
-- freeze permanent, so it outlives this session (the router repoints
-- next), and returns the schema's definition for the last comparison.
CREATE OR REPLACE FUNCTION shardid_internal._move_seal(schema_name name, shard integer, target text, lock_timeout_ms integer)
    RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM set_config('lock_timeout', lock_timeout_ms || 'ms', true);
    PERFORM shardid.freeze_shard_tables(schema_name, shard, target, false);
    RETURN shardid_internal._shard_definition(schema_name);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_seal(name, integer, text, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_seal(name, integer, text, integer) IS
    'Node, move cut-over on the source: makes the freeze permanent and returns the schema''s definition.';
