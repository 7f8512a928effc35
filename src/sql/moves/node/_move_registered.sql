-- Node, either end of a move: whether this node registers the shard under
-- schema_name, i.e. still holds the copy the move made or is retiring (a
-- copy is made and registered in one transaction); anything else is left
-- alone.
CREATE OR REPLACE FUNCTION shardid_internal._move_registered(shard integer, schema_name name) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT EXISTS (SELECT FROM shardid.shard_registry AS r
                    WHERE r.shard = _move_registered.shard AND r.schema_name = _move_registered.schema_name)
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_registered(integer, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_registered(integer, name) IS
    'Node, moves: whether this node registers the shard under that schema (the move''s own copy, not yet removed).';
