-- copy_index_duplicates(shard, table_name, index_name): check_cluster()'s
-- fix of a copy that lacks a unique index of its template and holds rows
-- the index would refuse: the duplicated keys, each with how many rows
-- have it (read as the copy's owner, read-only:
-- _copy_index_duplicates). Once they are gone, CALL
-- shardid.build_copy_index() builds the index. Not executable by PUBLIC:
-- it reads a tenant's rows.
CREATE OR REPLACE FUNCTION shardid.copy_index_duplicates(shard integer, table_name name, index_name name)
    RETURNS TABLE (key text, row_count bigint)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    x record;
BEGIN
    x := shardid_internal._copy_index(shard, table_name, index_name);
    RETURN QUERY SELECT d.key, d.row_count
                   FROM jsonb_to_recordset(shardid_internal._copy_index_duplicates(x.copy, x.index, true)::jsonb)
                        AS d(key text, row_count bigint);
END
$$;

REVOKE ALL ON FUNCTION shardid.copy_index_duplicates(integer, name, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid.copy_index_duplicates(integer, name, name) IS
    'Node: check_cluster()''s fix of a shard''s copy that lacks its template''s unique index and holds rows it would refuse: each duplicated key with its rows (read as the copy''s owner, read-only). Delete or change them, then CALL shardid.build_copy_index().';
