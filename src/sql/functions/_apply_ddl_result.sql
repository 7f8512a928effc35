-- apply_ddl(), outside a transaction block: waits for the statement sent
-- on conn. Its error is raised (node
-- named), except on a retried target when the error says the change is
-- there already (42P07, 42710, 42701 duplicate; 42704 undefined, for a
-- DROP): the interrupted run had finished before the ledger recorded it.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_result(conn text, node text, retry boolean) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    st  text;
    msg text;
    det text;
    hnt text;
BEGIN
    BEGIN
        PERFORM shardid_internal._node_wait(conn, node);
    EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
    END;
    IF st IS NOT NULL THEN
        IF retry AND st IN ('42P07', '42710', '42701', '42704') THEN
            RAISE NOTICE 'apply_ddl: % (the interrupted run had made the change)', msg;
        ELSE
            PERFORM shardid_internal._raise(st, msg, det, hnt);
        END IF;
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._apply_ddl_result(text, text, boolean) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_ddl_result(text, text, boolean) IS
    'apply_ddl(), outside a transaction block: waits for the statement sent on a dblink connection, raises its error unless a retried target already had the change.';
