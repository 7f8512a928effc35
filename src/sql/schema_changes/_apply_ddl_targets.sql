-- apply_ddl(): the targets of a change on a node that do not have it yet,
-- in order: running ones (a statement outside a transaction block that
-- was interrupted) first, then the template (new shards are made from
-- it), then each registered shard's copy by shard number. Up to max of
-- them (NULL: all): the shards are read in shard order and stop at max,
-- so a batch does not sort every shard of a change of 8192 to find its
-- next few (a batch bounded by time may change only a few tables).
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_targets(change_id bigint, max integer)
    RETURNS TABLE (target text, shard integer, schema_name name, table_name name, running boolean)
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    WITH c AS (
        SELECT d.change_id, t.template_schema, t.template_name, t.table_name
          FROM shardid.ddl_changes AS d JOIN shardid.sharded_tables AS t ON t.table_name = d.table_name
         WHERE d.change_id = _apply_ddl_targets.change_id)
    SELECT y.target, y.shard, y.schema_name, y.table_name, y.running
      FROM (SELECT 0 AS k, x.target, x.shard, x.schema_name, x.table_name, true AS running
              FROM c JOIN shardid.ddl_applied AS a ON a.change_id = c.change_id AND NOT a.done
              CROSS JOIN LATERAL (SELECT 'template'::text AS target, NULL::integer AS shard, c.template_schema AS schema_name,
                                         c.template_name AS table_name
                                   WHERE a.target = 'template'
                                  UNION ALL
                                  SELECT s.schema_name::text, s.shard, s.schema_name, c.table_name
                                    FROM shardid.shard_registry AS s
                                   WHERE s.schema_name::text = a.target) AS x
            UNION ALL
            SELECT 1, 'template', NULL, c.template_schema, c.template_name, false
              FROM c
             WHERE NOT EXISTS (SELECT FROM shardid.ddl_applied AS a WHERE a.change_id = c.change_id AND a.target = 'template')
            UNION ALL
            (SELECT 2, s.schema_name::text, s.shard, s.schema_name, c.table_name, false
               FROM c CROSS JOIN shardid.shard_registry AS s
              WHERE NOT EXISTS (SELECT FROM shardid.ddl_applied AS a WHERE a.change_id = c.change_id AND a.target = s.schema_name::text)
              ORDER BY s.shard
              LIMIT max)) AS y
     ORDER BY y.k, y.shard NULLS FIRST
     LIMIT max
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_targets(bigint, integer) IS
    'apply_ddl(): up to max targets of a change that lack it on this node (interrupted ones first, then the template, then shards by number).';
