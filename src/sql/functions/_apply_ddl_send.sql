-- apply_ddl(), outside a transaction block: on the dblink connection conn,
-- becomes the table's owner (SET ROLE), drops what an interrupted run left
-- (cleanup, waiting for each), and sends the statement without waiting
-- for it (_apply_ddl_busy, _apply_ddl_result follow). The statement is one
-- statement of the kinds _ddl_command() lets through, so it cannot change
-- the role back.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_send(conn text, node text, owner name, cleanup text[], statement text)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    sql text;
BEGIN
    PERFORM shardid_internal._node(conn, format('SET ROLE %I', owner), node);
    FOREACH sql IN ARRAY COALESCE(cleanup, '{}') LOOP
        RAISE NOTICE 'apply_ddl: dropping an index left invalid by an interrupted run: %', sql;
        PERFORM shardid_internal._node(conn, sql, node);
    END LOOP;
    PERFORM shardid_internal._node_send(conn, statement);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._apply_ddl_send(text, text, name, text[], text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_ddl_send(text, text, name, text[], text) IS
    'apply_ddl(), outside a transaction block: on a dblink connection, SET ROLE to the table''s owner, runs the cleanup statements, sends the statement without waiting.';
