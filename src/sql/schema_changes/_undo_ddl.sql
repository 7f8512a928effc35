-- abandon_ddl(template, undo => true), in the session it opens to the
-- database it was called in: the undo recorded (_undo_ddl_start; on the
-- router, then on every node: _undo_ddl_nodes), committed, and run by
-- apply_ddl() itself as a change of its own, batched and resumable as
-- any, CONCURRENTLY when the change was. result: {template, command,
-- change_id, original, and per node on a router: nodes}. A procedure
-- because it commits; no SET clause: it holds only the steps and their
-- COMMITs.
CREATE OR REPLACE PROCEDURE shardid_internal._undo_ddl(template text, INOUT result jsonb DEFAULT NULL)
    LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid_internal._undo_ddl()',
                                             'before the undo runs',
                                             'It is called by shardid.abandon_ddl(template, undo => true).');
    result := shardid_internal._undo_ddl_start(template);
    COMMIT;
    IF shardid_internal._apply_ddl_on_nodes() THEN
        result := result OPERATOR(pg_catalog.||) pg_catalog.jsonb_build_object('nodes', shardid_internal._undo_ddl_nodes(result));
        COMMIT;
    END IF;
    CALL shardid.apply_ddl(result OPERATOR(pg_catalog.->>) 'template', result OPERATOR(pg_catalog.->>) 'command');
END
$$;

REVOKE ALL ON PROCEDURE shardid_internal._undo_ddl(text, jsonb) FROM PUBLIC;

COMMENT ON PROCEDURE shardid_internal._undo_ddl(text, jsonb) IS
    'abandon_ddl(undo), in its own session to this database: records the undo (on a router, on every node too), commits, and runs the inverse with apply_ddl() as a change of its own; result says what it did.';
