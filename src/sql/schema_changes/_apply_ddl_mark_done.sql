-- apply_ddl() on a node: marks a running target (claimed by
-- _apply_ddl_claim for a statement outside a transaction block) as having
-- the change.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_mark_done(change_id bigint, target text) RETURNS void
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    UPDATE shardid.ddl_applied AS a SET done = true, applied_at = clock_timestamp()
     WHERE a.change_id = _apply_ddl_mark_done.change_id AND a.target = _apply_ddl_mark_done.target
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_mark_done(bigint, text) IS
    'apply_ddl() on a node: marks a running target of a change as done.';
