-- abandon_ddl(template, undo => true) on a node: the change to undo and
-- the tables that lack it. The change is the one a router sent (origin:
-- the router's change, finished here or not), else the open one of the
-- template; change_id is NULL when this node has none (a router's change
-- that never reached it: every table lacks it). Each target (the
-- template, then each registered shard's copy) with its table and
-- whether it has the change (done in the ledger) or was left running by
-- a statement outside a transaction block.
CREATE OR REPLACE FUNCTION shardid_internal._undo_ddl_original(template text, origin text)
    RETURNS TABLE (change_id bigint, target text, shard integer, schema_name name, table_name name, has boolean, running boolean)
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    WITH c AS (
        SELECT d.change_id FROM shardid.ddl_changes AS d
         WHERE d.template = _undo_ddl_original.template
           AND CASE WHEN _undo_ddl_original.origin IS NULL THEN d.finished_at IS NULL ELSE d.origin = _undo_ddl_original.origin END
    )
    SELECT (SELECT c.change_id FROM c), x.target, x.shard, x.schema_name, x.table_name,
           COALESCE(a.done, false), COALESCE(NOT a.done, false)
      FROM shardid.sharded_tables AS t
      CROSS JOIN LATERAL (SELECT 'template'::text AS target, NULL::integer AS shard, t.template_schema AS schema_name,
                                 t.template_name AS table_name
                          UNION ALL
                          SELECT s.schema_name::text, s.shard, s.schema_name, t.table_name
                            FROM shardid.shard_registry AS s) AS x
      LEFT JOIN shardid.ddl_applied AS a ON a.change_id = (SELECT c.change_id FROM c) AND a.target = x.target
     WHERE format('%I.%I', t.template_schema, t.template_name) = _undo_ddl_original.template
     ORDER BY x.shard NULLS FIRST
$$;

REVOKE ALL ON FUNCTION shardid_internal._undo_ddl_original(text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._undo_ddl_original(text, text) IS
    'abandon_ddl(undo) on a node: the change to undo (the router''s origin, else the open one; NULL if none) and every target of the template with its table, whether it has the change and whether a statement outside a transaction block left it running.';
