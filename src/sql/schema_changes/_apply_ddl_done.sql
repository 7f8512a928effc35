-- apply_ddl() on a node: records that a running target has the change.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_done(change_id bigint, target text) RETURNS void
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    UPDATE shardid.ddl_applied AS a SET done = true, applied_at = clock_timestamp()
     WHERE a.change_id = _apply_ddl_done.change_id AND a.target = _apply_ddl_done.target
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_done(bigint, text) IS
    'apply_ddl() on a node: marks a running target of a change as done.';
