-- apply_ddl(): a caller who may not write the ledger (a template owner who
-- is no superuser) is told which grants it needs (42501) before anything
-- changes, rather than failing on the first write with PostgreSQL's bare
-- "permission denied for table ddl_changes".
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_grants() RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    missing text[];
BEGIN
    SELECT array_agg(format('%s on %s', p.priv, p.tab) ORDER BY p.tab, p.priv) INTO missing
      FROM (VALUES ('shardid.ddl_changes', 'INSERT'), ('shardid.ddl_changes', 'UPDATE'),
                   ('shardid.ddl_applied', 'INSERT'), ('shardid.ddl_applied', 'UPDATE')) AS p(tab, priv)
     WHERE NOT has_table_privilege(p.tab, p.priv);
    IF missing IS NOT NULL THEN
        RAISE EXCEPTION 'permission denied to record a change of a sharded table'
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = format('apply_ddl() records each change in its ledger; role %I lacks %s.', current_user,
                                  array_to_string(missing, ', ')),
                  HINT = format('An administrator grants them: GRANT INSERT, UPDATE ON shardid.ddl_changes, shardid.ddl_applied TO %I;',
                                current_user);
    END IF;
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_grants() IS
    'apply_ddl(): refuses (42501, the GRANT in the HINT) a caller who may not write the ledger (shardid.ddl_changes, ddl_applied), before anything changes.';
