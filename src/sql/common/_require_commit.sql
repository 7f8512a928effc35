-- The refusal every procedure of shardid starts with, since each commits as
-- it goes: 25001 "<caller> cannot run inside a transaction block" unless
-- allowed. Called as the first statement of a procedure's body, with
-- shardid_internal._commit_allowed() as its first argument: the procedure's
-- own statement evaluates that argument before this function runs (inside
-- any function, _commit_allowed() would answer false). commits says when
-- the procedure commits ("after every batch"), for the DETAIL.
CREATE OR REPLACE FUNCTION shardid_internal._require_commit(allowed boolean, caller text, commits text,
                                                            hint text DEFAULT 'CALL it on its own (autocommit).')
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT allowed THEN
        RAISE EXCEPTION '% cannot run inside a transaction block', caller
            USING ERRCODE = 'active_sql_transaction',
                  DETAIL = format('It commits %s, which a CALL inside BEGIN ... COMMIT, a function, an EXCEPTION block or a multi-statement query string cannot do.', commits),
                  HINT = hint;
    END IF;
END
$$;

COMMENT ON FUNCTION shardid_internal._require_commit(boolean, text, text, text) IS
    'The procedures: raises 25001 (caller cannot run inside a transaction block, with when it commits and a hint) unless allowed, which is _commit_allowed() evaluated by the procedure''s own statement.';
