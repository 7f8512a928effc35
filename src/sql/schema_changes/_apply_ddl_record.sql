-- apply_ddl() on a node: records a new change that _apply_ddl_start()
-- returned unrecorded, and says in a NOTICE what it will do (how many of
-- how many tables; how: in batches, or how many at a time outside a
-- transaction block); returns it with its change_id. A resumed change is
-- returned as it is.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_record(change shardid.ddl_changes, todo integer, total integer,
                                                              how text) RETURNS shardid.ddl_changes
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c shardid.ddl_changes := change;
BEGIN
    IF c.change_id IS NULL THEN
        INSERT INTO shardid.ddl_changes AS d (template, table_name, command, kind, concurrent, on_nodes, origin)
            VALUES (c.template, c.table_name, c.command, c.kind, c.concurrent, false, c.origin)
            RETURNING d.* INTO c;
    END IF;
    RAISE NOTICE 'apply_ddl: change % of %: % on % of % tables (template and shards), %',
        c.change_id, c.template, c.kind, todo, total, how;
    RETURN c;
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_record(shardid.ddl_changes, integer, integer, text) IS
    'apply_ddl() on a node: records a new change (returned unrecorded by _apply_ddl_start) and announces it in a NOTICE (tables to change, how); returns it with its change_id.';
