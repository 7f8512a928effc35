-- Router, check_cluster(): the fix of an unfinished apply_ddl() change
-- whose template or command holds a control character: the CALL of
-- finish_ddl() with the change's ID, which reads both from the ledger
-- (shardid.ddl_changes of the database it runs in), so that the text of
-- the fix holds neither.
CREATE OR REPLACE FUNCTION shardid_internal._ddl_finish_by_id(change_id bigint) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT pg_catalog.format('CALL shardid.finish_ddl(%s);', change_id)
$$;

REVOKE ALL ON FUNCTION shardid_internal._ddl_finish_by_id(bigint) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._ddl_finish_by_id(bigint) IS
    'Router, check_cluster(): the fix that finishes an unfinished apply_ddl() change by its ID in the ledger (CALL shardid.finish_ddl()), without its template or command in the text.';
