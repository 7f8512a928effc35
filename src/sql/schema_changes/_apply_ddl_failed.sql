-- apply_ddl() on a node, a statement outside a transaction block that
-- failed on target: if no target has the change yet (it failed on the
-- first), the change is not kept: it is closed as abandoned, and the
-- invalid indexes a failed CREATE INDEX CONCURRENTLY left on the target
-- are returned as the statements that drop them (the caller runs them on
-- its connection, outside a transaction block). A change some target has
-- stays open, to be finished or abandoned: NULL. Called over the statement's
-- own dblink connection, so the ledger is written whatever the caller's
-- transaction does next.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_failed(change_id bigint, target text) RETURNS text[]
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    x   record;
    rel regclass;
BEGIN
    PERFORM shardid_internal._apply_ddl_owner(c.table_name)
       FROM shardid.ddl_changes AS c WHERE c.change_id = _apply_ddl_failed.change_id;
    IF EXISTS (SELECT FROM shardid.ddl_applied AS a WHERE a.change_id = _apply_ddl_failed.change_id AND a.done) THEN
        RETURN NULL;
    END IF;
    UPDATE shardid.ddl_changes AS c SET finished_at = now(), abandoned = true
     WHERE c.change_id = _apply_ddl_failed.change_id AND c.finished_at IS NULL;
    SELECT t.schema_name, t.table_name INTO x
      FROM shardid_internal._apply_ddl_targets(_apply_ddl_failed.change_id, NULL) AS t
     WHERE t.target = _apply_ddl_failed.target;
    rel := to_regclass(format('%I.%I', x.schema_name, x.table_name));
    RETURN ARRAY(SELECT format('DROP INDEX CONCURRENTLY IF EXISTS %I.%I', x.schema_name, i.relname)
                   FROM pg_index AS ix JOIN pg_class AS i ON i.oid = ix.indexrelid
                  WHERE ix.indrelid = rel AND NOT ix.indisvalid
                  ORDER BY i.relname);
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_failed(bigint, text) IS
    'apply_ddl() on a node, CONCURRENTLY: after a failed statement, closes the change as abandoned if no target has it (returning the statements that drop the invalid indexes left on the target); a change some target has stays open.';
