-- abandon_ddl(template, undo => true), the way back in one call: the open change is closed and reversed where it was applied,
-- by its inverse run as a change of its own with apply_ddl()'s batches,
-- ledger and fence (on a router, on every node): a CREATE [UNIQUE] INDEX
-- [CONCURRENTLY]'s index dropped, CONCURRENTLY when it was built so, with
-- the invalid ones a failed build left; a named ADD CONSTRAINT's
-- constraint dropped; a column's SET/DROP DEFAULT or SET STATISTICS set
-- back to the value the tables that lack the change still hold. A change
-- with no safe inverse (ADD or DROP COLUMN, a type change, ...) is refused
-- before anything changes (0A000), with the apply_ddl() call that
-- completes it in the HINT. The statements commit as they go, so the work
-- runs on a dblink connection to this database (this server's socket,
-- the session's role, as apply_ddl() CONCURRENTLY does); an interrupted
-- undo is finished by calling it again. One row per node (NULL: here):
-- the undo's change, its command, how many tables it reversed.
CREATE OR REPLACE FUNCTION shardid_internal._abandon_ddl_undo(template text)
    RETURNS TABLE (node text, change_id bigint, command text, targets_with integer, targets_without integer, without text[])
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    conn CONSTANT text := 'shardid_abandon_ddl_undo';
    res  jsonb;
BEGIN
    IF template IS NULL THEN
        RAISE EXCEPTION 'abandon_ddl() template must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    -- a refusal before anything changes, in this session
    PERFORM shardid_internal._undo_ddl_plan(template);
    PERFORM shardid_internal._apply_ddl_connect(conn, NULL, NULL);
    BEGIN
        res := shardid_internal._node(conn, format('CALL shardid_internal._undo_ddl(%L)', template))::jsonb;
    EXCEPTION WHEN OTHERS OR query_canceled THEN
        PERFORM shardid_internal._node_close(conn);
        RAISE;
    END;
    PERFORM shardid_internal._node_close(conn);
    RAISE NOTICE 'abandon_ddl: change % of % undone: %', res->>'original', res->>'template', res->>'command';
    IF res ? 'nodes' THEN
        RETURN QUERY SELECT x.node, x.change_id, res->>'command', x.reversed, 0, '{}'::text[]
                       FROM jsonb_to_recordset(res->'nodes') AS x(node text, change_id bigint, reversed integer);
    ELSE
        RETURN QUERY SELECT NULL::text, (res->>'change_id')::bigint, res->>'command', (res->>'reversed')::integer, 0, '{}'::text[];
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._abandon_ddl_undo(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._abandon_ddl_undo(text) IS
    'abandon_ddl(template, undo => true): reverses the open apply_ddl() change of a sharded table where it was applied (on a router: on every node), as a change of its own run by apply_ddl() over a dblink connection to this database; refused before anything changes when it has no safe inverse; one row per node (NULL here) with the undo''s change, its command and how many tables it reversed.';
