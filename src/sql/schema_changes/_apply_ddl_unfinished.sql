-- Node or router: the re-CALLs that finish this database's unfinished
-- apply_ddl() changes (shardid.ddl_changes), oldest first, as a JSON array
-- of text; a move whose shard differs from the target's templates names
-- them.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_unfinished() RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT COALESCE(jsonb_agg(format('CALL shardid.apply_ddl(%L, %L);', c.template, c.command) ORDER BY c.change_id), '[]')
      FROM shardid.ddl_changes AS c
     WHERE c.finished_at IS NULL
$$;

REVOKE ALL ON FUNCTION shardid_internal._apply_ddl_unfinished() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_ddl_unfinished() IS
    'Node or router: the re-CALLs of apply_ddl() that finish this database''s unfinished changes, as a JSON array.';
