-- apply_ddl(), moves: runs one statement on one table as its owner, never
-- as the caller's superuser. The role is set for the statement only: a
-- function's SET clause undoes only the settings it names, so the
-- caller's role is put back here (the ledger is then written with the
-- caller's grants).
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_run(statement text, owner name) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    caller text := current_setting('role');
BEGIN
    PERFORM set_config('role', owner, true);
    EXECUTE statement;
    PERFORM set_config('role', caller, true);
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_run(text, name) IS
    'apply_ddl(): runs one statement as the given role (the template''s owner), which the caller must be a member of.';
