-- apply_ddl() on a node, once the change is finished and committed: the
-- NOTICE that ends it: the tables changed by this CALL and those that had
-- the change already.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_notice_end(change shardid.ddl_changes, done integer, todo integer,
                                                                  total integer) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE NOTICE 'apply_ddl: change % of % finished: % tables changed now, % of % had it already',
        change.change_id, change.template, done, total - todo, total;
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_notice_end(shardid.ddl_changes, integer, integer, integer) IS
    'apply_ddl() on a node: the NOTICE that ends a change: tables changed now, and how many of all had it already.';
