-- apply_ddl(): runs one statement on one table as the table's owner (SET
-- LOCAL ROLE, undone when this function returns), never as the caller's
-- superuser; 42501 when the caller is not a member of the owner.
CREATE OR REPLACE FUNCTION shardid._apply_ddl_run(rel regclass, statement text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    owner name;
BEGIN
    SELECT r.rolname INTO owner FROM pg_class AS c JOIN pg_roles AS r ON r.oid = c.relowner WHERE c.oid = rel;
    IF NOT pg_has_role(owner, 'MEMBER') THEN
        RAISE EXCEPTION 'permission denied to change table %', rel
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = format('apply_ddl() runs the command as the table''s owner %I, and role %I is not a member of it.', owner, current_user);
    END IF;
    PERFORM set_config('role', owner, true);
    EXECUTE statement;
END
$$;

COMMENT ON FUNCTION shardid._apply_ddl_run(regclass, text) IS
    'apply_ddl(): runs one statement as the owner of the given table (42501 unless the caller is a member of that role).';
