-- Router, drop_retired_copies(): drops one retired copy
-- (_drop_retired_copy_on) and returns the counts with it: {copies dropped,
-- bytes freed}. The caller commits.
CREATE OR REPLACE FUNCTION shardid_internal._drop_retired_copy_counted(counts bigint[], node text, schema_name name) RETURNS bigint[]
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    freed bigint := counts[2] + shardid_internal._drop_retired_copy_on(node, schema_name);
BEGIN
    RETURN ARRAY[counts[1] + 1, freed];
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._drop_retired_copy_counted(bigint[], text, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._drop_retired_copy_counted(bigint[], text, name) IS
    'Router, drop_retired_copies(): drops one retired copy and returns the counts of copies dropped and bytes freed with it.';
