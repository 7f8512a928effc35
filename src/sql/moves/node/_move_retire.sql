-- Node, source of a move, after the router points at the target: retires
-- the old copy (retire_shard: unregistered, then dropped or renamed to
-- new_name with triggers refusing writes), trying to lock its tables for
-- lock_timeout_ms. Returns the new name, 'dropped', or 'already retired'
-- when this node no longer registers the shard under schema_name.
CREATE OR REPLACE FUNCTION shardid_internal._move_retire(shard integer, schema_name name, target text, new_name name, lock_timeout_ms integer)
    RETURNS text
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
    SET client_min_messages = warning
AS $$
BEGIN
    IF NOT shardid_internal._move_registered(shard, schema_name) THEN
        RETURN 'already retired';
    END IF;
    PERFORM set_config('lock_timeout', lock_timeout_ms || 'ms', true);
    RETURN COALESCE(quote_ident(shardid.retire_shard(shard, target, new_name)), 'dropped');
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_retire(integer, name, text, name, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_retire(integer, name, text, name, integer) IS
    'Node, move on the source after the repoint: retires the old copy (dropped or renamed, refusing writes); returns its new name, dropped, or already retired.';
