-- apply_ddl(): the role every statement of a change runs as, on the
-- template and on each shard's copy alike: the template's owner (a shard
-- table of another owner is refused by PostgreSQL, 42501). Never the
-- caller's superuser rights, unless the template belongs to a superuser;
-- 42501 when the caller is not a member of that role.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_owner(table_name name) RETURNS name
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    owner name;
BEGIN
    SELECT r.rolname INTO owner
      FROM shardid.sharded_tables AS t
      JOIN pg_namespace AS n ON n.nspname = t.template_schema
      JOIN pg_class AS c ON c.relnamespace = n.oid AND c.relname = t.template_name
      JOIN pg_roles AS r ON r.oid = c.relowner
     WHERE t.table_name = _apply_ddl_owner.table_name;
    IF owner IS NULL THEN
        RAISE EXCEPTION 'the template of sharded table % no longer exists', table_name
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    IF NOT pg_has_role(owner, 'MEMBER') THEN
        RAISE EXCEPTION 'permission denied to change sharded table %', table_name
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = format('apply_ddl() runs the command as the template''s owner %I, and role %I is not a member of it.', owner, current_user);
    END IF;
    RETURN owner;
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_owner(name) IS
    'apply_ddl(): the template''s owner, whom every statement of a change runs as; 42501 unless the caller is a member of that role.';
