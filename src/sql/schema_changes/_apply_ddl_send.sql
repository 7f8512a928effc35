-- apply_ddl(), outside a transaction block: on the dblink connection conn
-- (search_path pinned, _apply_ddl_connect), drops what an interrupted run
-- left (cleanup, waiting for each), and sends the statement without
-- waiting for it (_apply_ddl_busy, _apply_ddl_result follow). The
-- statement is one CREATE INDEX or DROP INDEX CONCURRENTLY of the table
-- (_ddl_command): it runs as the connection's role, and PostgreSQL itself
-- runs the table owner's code it reaches (index expressions and
-- predicates) as that owner in a security-restricted operation, as
-- _run_as_owner does for the statements a function can run.
-- No SET ROLE: the owner's code could set it back.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_send(conn text, node text, cleanup text[], statement text)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    sql text;
BEGIN
    FOREACH sql IN ARRAY COALESCE(cleanup, '{}') LOOP
        RAISE NOTICE 'apply_ddl: dropping an index left invalid by an interrupted run: %', sql;
        PERFORM shardid_internal._node(conn, sql, node);
    END LOOP;
    PERFORM shardid_internal._node_send(conn, statement);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._apply_ddl_send(text, text, text[], text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_ddl_send(text, text, text[], text) IS
    'apply_ddl(), outside a transaction block: on a dblink connection, runs the cleanup statements, sends the statement (CONCURRENTLY; PostgreSQL runs the owner''s code in it as the owner) without waiting.';
