-- apply_ddl(): runs one statement on one table as owner (SET LOCAL ROLE,
-- undone when this function returns), never as the caller's superuser.
CREATE OR REPLACE FUNCTION shardid._apply_ddl_run(statement text, owner name) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM set_config('role', owner, true);
    EXECUTE statement;
END
$$;

COMMENT ON FUNCTION shardid._apply_ddl_run(text, name) IS
    'apply_ddl(): runs one statement as the given role (the template''s owner), which the caller must be a member of.';
