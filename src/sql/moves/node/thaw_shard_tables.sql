-- Node, deprecated (0.4): the name of unfreeze_shard_tables() before 0.4,
-- kept for scripts that call it. The pair on a node is
-- freeze_shard_tables()/unfreeze_shard_tables(), as freeze_shard()/
-- unfreeze_shard() on the router.
CREATE OR REPLACE FUNCTION shardid.thaw_shard_tables(schema_name name) RETURNS integer
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT shardid.unfreeze_shard_tables(schema_name)
$$;

REVOKE ALL ON FUNCTION shardid.thaw_shard_tables(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid.thaw_shard_tables(name) IS
    'Node, deprecated: unfreeze_shard_tables() by its name before 0.4.';
