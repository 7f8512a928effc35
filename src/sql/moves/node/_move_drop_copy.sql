-- Node, target of a move that is rolled back: unregisters the shard and
-- drops its copy, if this node registers the shard under that schema (the
-- copy is made and registered in one transaction, so that is the move's
-- own; anything else is left alone). Returns whether it dropped one.
CREATE OR REPLACE FUNCTION shardid_internal._move_drop_copy(shard integer, schema_name name) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
    SET client_min_messages = warning
AS $$
BEGIN
    IF NOT shardid_internal._move_registered(shard, schema_name) THEN
        RETURN false;
    END IF;
    PERFORM shardid.detach_shard(shard);
    EXECUTE format('DROP SCHEMA IF EXISTS %I CASCADE', schema_name);
    RETURN true;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_drop_copy(integer, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_drop_copy(integer, name) IS
    'Node, move on the target, rollback: unregisters the shard and drops its copy if registered under that schema.';
