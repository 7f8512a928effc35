-- apply_ddl() on a node, once the change is recorded and committed: the
-- NOTICE that says what it will do (how many of how many tables, in
-- batches or one at a time outside a transaction block).
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_announce(change shardid.ddl_changes, todo integer, total integer,
                                                                batch_size integer) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE NOTICE 'apply_ddl: change % of %: % on % of % tables (template and shards)%',
        change.change_id, change.template, change.kind, todo, total,
        CASE WHEN change.concurrent THEN ', one at a time outside a transaction block'
             ELSE format(', in batches of %s', batch_size) END;
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_announce(shardid.ddl_changes, integer, integer, integer) IS
    'apply_ddl() on a node: the NOTICE that starts a change: how many of how many tables, in batches or one at a time.';
