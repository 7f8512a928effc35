-- Runs the steps of _privilege_steps() for some shards (NULL: every one),
-- each through the one fence as the owner of what it touches
-- (_run_as_owner: a security-restricted operation, search_path pinned;
-- never SET ROLE). usage_only: the schemas' and generators' steps only
-- (after run_on_shards() ran a GRANT or REVOKE on the copies itself).
-- as_role, when given, is the role the statements are for (run_on_shards()
-- on a loopback connection): a step run as an owner whose privileges it
-- lacks is refused (42501) before anything runs; without it,
-- _run_as_owner() checks the caller. Returns each statement it ran.
CREATE OR REPLACE FUNCTION shardid_internal._align_privileges(shards integer[], only_table name, usage_only boolean,
                                                              tidy boolean, as_role name DEFAULT NULL)
    RETURNS SETOF text
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    st record;
BEGIN
    IF as_role IS NOT NULL THEN
        FOR st IN SELECT * FROM shardid_internal._privilege_steps(shards, only_table, tidy) AS s
                   WHERE (NOT usage_only OR s.object <> 'table') AND NOT pg_has_role(as_role, s.run_as, 'USAGE') LOOP
            RAISE EXCEPTION 'permission denied to run a statement as role %, the owner of the %', quote_ident(pg_get_userbyid(st.run_as)), st.object
                USING ERRCODE = 'insufficient_privilege',
                      DETAIL = format('%s: role %s lacks the privileges of that owner.', st.what, quote_ident(as_role)),
                      HINT = format('Let role %s run SELECT * FROM shardid.align_privileges(%s) on this node.',
                                    quote_ident(pg_get_userbyid(st.run_as)), st.shard);
        END LOOP;
    END IF;
    FOR st IN SELECT * FROM shardid_internal._privilege_steps(shards, only_table, tidy) AS s
               WHERE NOT usage_only OR s.object <> 'table' LOOP
        PERFORM shardid_internal._run_as_owner(st.run_as::regrole, st.statement);
        RETURN NEXT st.statement;
    END LOOP;
END
$$;

COMMENT ON FUNCTION shardid_internal._align_privileges(integer[], name, boolean, boolean, name) IS
    'Internal: runs _privilege_steps() for some shards (the schemas'' and generators'' only, if asked), each as the owner of what it touches through the fence (_run_as_owner); 42501 for a step whose owner''s privileges as_role lacks; returns the statements. Executable by PUBLIC (the shard functions call it with the caller''s rights; the fence checks the caller).';
