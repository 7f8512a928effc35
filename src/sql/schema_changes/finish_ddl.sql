-- finish_ddl(change_id): finishes an unfinished apply_ddl() change by its
-- ID in this database's ledger (shardid.ddl_changes): CALLs apply_ddl()
-- with the change's own template and command, read from the ledger, so
-- that no text is pasted (check_cluster()'s fix of a change whose text
-- has a control character). As apply_ddl(), it checks the caller and
-- runs every statement as the template's owner. No SET clause (it
-- COMMITs, through apply_ddl()): it holds the call, the work is done by
-- functions that pin search_path. CALL it on its own.
CREATE OR REPLACE PROCEDURE shardid.finish_ddl(change_id bigint)
    LANGUAGE plpgsql
AS $$
DECLARE
    c record;
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid.finish_ddl()',
                                             'after every batch', 'CALL it on its own.');
    c := shardid_internal._finish_ddl_change(change_id);
    CALL shardid.apply_ddl(c.template, c.command);
END
$$;

COMMENT ON PROCEDURE shardid.finish_ddl(bigint) IS
    'Finishes an unfinished apply_ddl() change by its ID in shardid.ddl_changes: apply_ddl() of its own template and command, read from the ledger (check_cluster()''s fix of a change whose text has a control character). CALL it on its own.';
