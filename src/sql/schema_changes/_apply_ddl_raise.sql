-- apply_ddl() on a node: raises the error a batch's statement caused, as
-- the user's own: without the CONTEXT lines of shardid's helpers (_raise)
-- and naming the table it failed on, found by its statement in the
-- error's context among the targets the batch had (they still lack the
-- change: the batch rolled back).
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_raise(change shardid.ddl_changes, batch_size integer, sqlstate text,
                                                             message text, detail text, hint text, context text)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    failed text;
BEGIN
    IF change.change_id IS NOT NULL THEN
        SELECT format('%I.%I', x.schema_name, x.table_name) INTO failed
          FROM shardid_internal._apply_ddl_targets(change.change_id, batch_size) AS x
         WHERE strpos(context, (shardid_internal._apply_ddl_check(change.command, x.schema_name, x.table_name)).statement) > 0
         LIMIT 1;
    END IF;
    PERFORM shardid_internal._raise(sqlstate, CASE WHEN failed IS NULL THEN message ELSE format('%s (on %s)', message, failed) END,
                                    detail, hint);
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_raise(shardid.ddl_changes, integer, text, text, text, text, text) IS
    'apply_ddl() on a node: raises a batch''s error without shardid''s CONTEXT lines, naming the table it failed on.';
