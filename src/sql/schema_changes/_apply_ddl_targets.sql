-- apply_ddl(): the targets of a change on a node that do not have it yet,
-- in order: the template first (new shards are made from it), then each
-- registered shard's copy by shard number; running ones (a statement
-- outside a transaction block that was interrupted) before the others.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_targets(change_id bigint, max integer)
    RETURNS TABLE (target text, shard integer, schema_name name, table_name name, running boolean)
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT x.target, x.shard, x.schema_name, x.table_name, a.change_id IS NOT NULL
      FROM shardid.ddl_changes AS c
      JOIN shardid.sharded_tables AS t ON t.table_name = c.table_name
      CROSS JOIN LATERAL (SELECT 'template'::text AS target, NULL::integer AS shard, t.template_schema AS schema_name,
                                 t.template_name AS table_name
                          UNION ALL
                          SELECT s.schema_name::text, s.shard, s.schema_name, t.table_name
                            FROM shardid.shard_registry AS s) AS x
      LEFT JOIN shardid.ddl_applied AS a ON a.change_id = c.change_id AND a.target = x.target
     WHERE c.change_id = _apply_ddl_targets.change_id
       AND (a.change_id IS NULL OR NOT a.done)
     ORDER BY a.change_id IS NULL, x.shard NULLS FIRST
     LIMIT max
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_targets(bigint, integer) IS
    'apply_ddl(): up to max targets of a change that lack it on this node (template first, then shards by number; interrupted ones first).';
