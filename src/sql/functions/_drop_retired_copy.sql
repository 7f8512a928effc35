-- Node: drops one retired copy (DROP SCHEMA ... CASCADE), refusing a
-- schema that is not one: a registered shard, or a schema without
-- retire_shard()'s trigger (found by its function, not its name). Returns
-- the bytes it held.
CREATE OR REPLACE FUNCTION shardid_internal._drop_retired_copy(schema_name name) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    freed bigint;
BEGIN
    SELECT r.bytes INTO freed FROM shardid_internal._retired_here() AS r WHERE r.schema_name = _drop_retired_copy.schema_name;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'schema % is not a retired copy of a shard', schema_name
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'A retired copy is a schema no shard is registered in, whose tables carry retire_shard()''s trigger.';
    END IF;
    EXECUTE pg_catalog.format('DROP SCHEMA %I CASCADE', schema_name);
    RETURN freed;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._drop_retired_copy(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._drop_retired_copy(name) IS
    'Node: drops a retired copy of a moved shard (its schema, CASCADE); refuses (55000) a schema that is not one. Returns the bytes it held.';
