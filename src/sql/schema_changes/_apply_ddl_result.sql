-- apply_ddl(), outside a transaction block: waits for the statement sent
-- on conn (_apply_ddl_busy: a cancel of this session cancels it on its
-- server too) for change_id's target, in the ledger of the server at the
-- other end of conn. Its error is raised (node named), except on a
-- retried target when the error says the change is there already (42704
-- undefined, for a DROP; 42P07 duplicate, for a CREATE INDEX whose name
-- is taken by an index that is the template's, _apply_ddl_same_indexes):
-- the interrupted run had finished before the ledger recorded it. Before the error is
-- raised, that ledger hears of it over conn (_apply_ddl_failed): a change
-- no target has is closed there, not kept, and the invalid index the
-- statement left is dropped.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_result(conn text, node text, retry boolean, change_id bigint, target text)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    err     text[];
    st      text;
    msg     text;
    det     text;
    hnt     text;
    cleanup text[];
    sql     text;
BEGIN
    WHILE shardid_internal._apply_ddl_busy(conn) LOOP
    END LOOP;
    err := shardid_internal._node_outcome(conn, node);
    IF err IS NULL THEN
        RETURN;
    END IF;
    st := err[1];
    msg := err[2];
    det := err[3];
    hnt := err[4];
    -- a retried target that has the change already: the interrupted run
    -- made it; an index of that name must be the template's
    IF retry AND st IN ('42P07', '42704') THEN
        IF st = '42704' OR COALESCE(shardid_internal._node(conn, format('SELECT shardid_internal._apply_ddl_same_indexes(%s, %L)', change_id, target),
                                                           node)::boolean, false) THEN
            RAISE NOTICE 'apply_ddl: % (the interrupted run had made the change)', msg;
            RETURN;
        END IF;
        det := concat_ws(' ', NULLIF(det, ''), format('An index of that name is on %s, but it is not the template''s: drop or rename it there, then CALL apply_ddl() again.', target));
    END IF;
    IF st NOT IN ('08000', '08003', '08006') THEN
        cleanup := shardid_internal._node(conn, format('SELECT shardid_internal._apply_ddl_failed(%s, %L)', change_id, target), node)::text[];
        IF cleanup IS NOT NULL THEN
            RAISE NOTICE 'apply_ddl: change % failed on its first table (%): not kept', change_id, target;
        END IF;
        FOREACH sql IN ARRAY COALESCE(cleanup, '{}') LOOP
            PERFORM shardid_internal._node(conn, sql, node);
        END LOOP;
    END IF;
    PERFORM shardid_internal._raise(st, format('%s (on %s)', msg, CASE WHEN target = 'template' THEN 'the template' ELSE target END),
                                    det, hnt);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._apply_ddl_result(text, text, boolean, bigint, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_ddl_result(text, text, boolean, bigint, text) IS
    'apply_ddl(), outside a transaction block: waits for the statement sent on a dblink connection (a cancel cancels it there too), raises its error unless a retried target already had the change; a change no target has is closed first, its invalid index dropped.';
