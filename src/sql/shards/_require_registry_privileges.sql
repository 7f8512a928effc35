-- Refuses a caller who may not change the registry, before anything is created.
CREATE OR REPLACE FUNCTION shardid_internal._require_registry_privileges(action text, need_create boolean) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF need_create AND NOT pg_catalog.has_database_privilege(pg_catalog.current_database(), 'CREATE') THEN
        RAISE EXCEPTION 'permission denied to %', action
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = pg_catalog.format('A shard is a schema: role %s needs CREATE on database %s.',
                                             pg_catalog.quote_ident(current_user::text),
                                             pg_catalog.quote_ident(pg_catalog.current_database()::text)),
                  HINT = pg_catalog.format('GRANT CREATE ON DATABASE %s TO %s;',
                                           pg_catalog.quote_ident(pg_catalog.current_database()::text),
                                           pg_catalog.quote_ident(current_user::text));
    END IF;
    IF NOT (pg_catalog.has_table_privilege('shardid.shard_registry', 'INSERT, UPDATE, DELETE')
            AND pg_catalog.has_table_privilege('shardid.sharded_tables', 'INSERT, UPDATE, DELETE')) THEN
        RAISE EXCEPTION 'permission denied to %', action
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = pg_catalog.format('Role %s may not change the shard registry.',
                                             pg_catalog.quote_ident(current_user::text)),
                  HINT = pg_catalog.format('GRANT INSERT, UPDATE, DELETE ON shardid.shard_registry, shardid.sharded_tables TO %s;',
                                           pg_catalog.quote_ident(current_user::text));
    END IF;
END
$$;

COMMENT ON FUNCTION shardid_internal._require_registry_privileges(text, boolean) IS
    'Raises 42501 unless the caller may write the shard registry (and, if asked, create schemas).';
