-- apply_ddl() on a node, a new CONCURRENTLY change: whether it is a re-run
-- of a finished one (a migration run twice): the ledger has the same
-- command finished for this template, and the template is as that change
-- left it (the index a CREATE INDEX makes is there and valid, the one a
-- DROP INDEX drops is gone). Then a NOTICE says so and nothing is run or
-- recorded. (A statement that runs in a transaction block is recognised
-- by its first batch instead: _apply_ddl_first_batch.)
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_rerun(change shardid.ddl_changes) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    prior bigint;
    t     shardid.sharded_tables;
    chk   record;
    there boolean;
BEGIN
    IF change.change_id IS NOT NULL OR NOT change.concurrent THEN
        RETURN false;
    END IF;
    SELECT c.change_id INTO prior FROM shardid.ddl_changes AS c
     WHERE c.template = change.template AND c.command = change.command AND c.finished_at IS NOT NULL AND NOT c.abandoned
     ORDER BY c.change_id DESC LIMIT 1;
    IF prior IS NULL THEN
        RETURN false;
    END IF;
    SELECT s.* INTO t FROM shardid.sharded_tables AS s WHERE s.table_name = change.table_name;
    chk := shardid_internal._apply_ddl_check(change.command, t.template_schema, t.template_name);
    IF chk.index_name IS NULL THEN
        RETURN false;
    END IF;
    SELECT EXISTS (SELECT FROM pg_index AS x
                    WHERE x.indexrelid = to_regclass(format('%I.%I', t.template_schema, chk.index_name)) AND x.indisvalid)
      INTO there;
    IF there <> (chk.kind = 'CREATE INDEX') THEN
        RETURN false;
    END IF;
    RAISE NOTICE 'apply_ddl: % had this change already (index %, change % ran the same command): nothing run, nothing recorded',
        change.template, quote_ident(chk.index_name), prior;
    RETURN true;
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_rerun(shardid.ddl_changes) IS
    'apply_ddl() on a node: whether a new CONCURRENTLY change re-runs a finished one (same command, the template''s index as it left it); says so in a NOTICE.';
