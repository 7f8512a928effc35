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
    run_as oid[];
    stmts  text[];
    whats  text[];
    objs   text[];
    nums   integer[];
BEGIN
    -- read once: the checks, then the statements
    SELECT array_agg(s.run_as ORDER BY o), array_agg(s.statement ORDER BY o), array_agg(s.what ORDER BY o),
           array_agg(s.object ORDER BY o), array_agg(s.shard ORDER BY o)
      INTO run_as, stmts, whats, objs, nums
      FROM shardid_internal._privilege_steps(shards, only_table, tidy) WITH ORDINALITY AS s(shard, object, what, run_as, statement, o)
     WHERE NOT usage_only OR s.object <> 'table';
    FOR i IN 1 .. COALESCE(cardinality(stmts), 0) LOOP
        IF as_role IS NOT NULL AND NOT pg_has_role(as_role, run_as[i], 'USAGE') THEN
            RAISE EXCEPTION 'permission denied to run a statement as role %, the owner of the %', quote_ident(pg_get_userbyid(run_as[i])), objs[i]
                USING ERRCODE = 'insufficient_privilege',
                      DETAIL = format('%s: role %s lacks the privileges of that owner.', whats[i], quote_ident(as_role)),
                      HINT = format('Let role %s run SELECT * FROM shardid.align_privileges(%s) on this node.',
                                    quote_ident(pg_get_userbyid(run_as[i])), nums[i]);
        END IF;
    END LOOP;
    FOR i IN 1 .. COALESCE(cardinality(stmts), 0) LOOP
        PERFORM shardid_internal._run_as_owner(run_as[i]::regrole, stmts[i]);
        RETURN NEXT stmts[i];
    END LOOP;
END
$$;

COMMENT ON FUNCTION shardid_internal._align_privileges(integer[], name, boolean, boolean, name) IS
    'Internal: runs _privilege_steps() for some shards (the schemas'' and generators'' only, if asked), each as the owner of what it touches through the fence (_run_as_owner); 42501 for a step whose owner''s privileges as_role lacks; returns the statements. Executable by PUBLIC (the shard functions call it with the caller''s rights; the fence checks the caller).';
