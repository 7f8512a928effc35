-- Node, last move step on the source: unregisters the shard and retires
-- its schema: dropped, or kept under new_name with a trigger on every table
-- that refuses writes. Returns the schema's new name (NULL when dropped).
CREATE OR REPLACE FUNCTION shardid.retire_shard(shard integer, target text, new_name name) RETURNS name
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nsp name;
BEGIN
    nsp := shardid.detach_shard(shard);
    PERFORM shardid.thaw_shard_tables(nsp);
    IF new_name IS NULL THEN
        EXECUTE pg_catalog.format('DROP SCHEMA %I CASCADE', nsp);
        RETURN NULL;
    END IF;
    PERFORM shardid._for_tables(nsp, '{r,p}',
        'CREATE TRIGGER shardid_retired BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON %I.%I
         FOR EACH STATEMENT EXECUTE FUNCTION shardid._refuse_retired_write(%L, %L)',
        ARRAY[shard::text, target]);
    EXECUTE pg_catalog.format('ALTER SCHEMA %I RENAME TO %I', nsp, new_name);
    RETURN new_name;
END
$$;

REVOKE ALL ON FUNCTION shardid.retire_shard(integer, text, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid.retire_shard(integer, text, name) IS
    'Node, after a move: detaches the shard and drops its schema (new_name NULL) or renames it to new_name with triggers refusing writes.';
