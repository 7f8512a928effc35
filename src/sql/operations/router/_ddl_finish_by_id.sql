-- Router, check_cluster(): the fix of an unfinished apply_ddl() change
-- whose template or command holds a control character: a DO block that
-- reads both from the ledger (shardid.ddl_changes of the database it runs
-- in) by the change's ID and CALLs apply_ddl() with them, so that the
-- text of the fix holds neither. A DO block at top level may CALL a
-- procedure that commits.
CREATE OR REPLACE FUNCTION shardid_internal._ddl_finish_by_id(change_id bigint) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT pg_catalog.format('DO $fix$ DECLARE c record; BEGIN SELECT x.template, x.command INTO STRICT c FROM shardid.ddl_changes AS x '
                             'WHERE x.change_id OPERATOR(pg_catalog.=) %s AND x.finished_at IS NULL; '
                             'CALL shardid.apply_ddl(c.template, c.command); END $fix$;', change_id)
$$;

REVOKE ALL ON FUNCTION shardid_internal._ddl_finish_by_id(bigint) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._ddl_finish_by_id(bigint) IS
    'Router, check_cluster(): the fix that finishes an unfinished apply_ddl() change by its ID in the ledger, without its template or command in the text.';
