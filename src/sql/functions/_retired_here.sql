-- Node: the retired copies of moved shards in this database. A retired
-- copy is a schema that retire_shard() renamed and whose tables carry its
-- trigger: known by the trigger's function (_refuse_retired_write), never
-- by a name a tenant could also use; the trigger's arguments name the
-- shard and the node it moved to. retired_at is read from the move ID in
-- the name (<schema>_moved_<move id>: milliseconds since 1970), NULL when
-- the name has none.
CREATE OR REPLACE FUNCTION shardid_internal._retired_here()
    RETURNS TABLE (schema_name name, shard integer, moved_to text, retired_at timestamptz, bytes bigint)
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT n.nspname,
           pg_catalog.min(pg_catalog.split_part(pg_catalog.encode(t.tgargs, 'escape'), '\000', 1))::integer,
           pg_catalog.min(pg_catalog.split_part(pg_catalog.encode(t.tgargs, 'escape'), '\000', 2)),
           pg_catalog.to_timestamp(pg_catalog.substring(n.nspname::text, '_moved_([0-9]{10,15})(_[0-9]+)?$')::double precision
                                   OPERATOR(pg_catalog./) 1000),
           (SELECT COALESCE(pg_catalog.sum(pg_catalog.pg_total_relation_size(c2.oid)), 0)::bigint
              FROM pg_catalog.pg_class AS c2
             WHERE c2.relnamespace OPERATOR(pg_catalog.=) n.oid
               AND c2.relkind OPERATOR(pg_catalog.=) ANY ('{r,m,p}'::"char"[]))
      FROM pg_catalog.pg_trigger AS t
      JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) t.tgrelid
      JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
     WHERE t.tgfoid OPERATOR(pg_catalog.=) 'shardid_internal._refuse_retired_write()'::pg_catalog.regprocedure
       AND NOT EXISTS (SELECT FROM shardid.shard_registry AS r WHERE r.schema_name OPERATOR(pg_catalog.=) n.nspname)
     GROUP BY n.oid, n.nspname
     ORDER BY n.nspname
$$;

REVOKE ALL ON FUNCTION shardid_internal._retired_here() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._retired_here() IS
    'Node: the retired copies of moved shards here (schemas whose tables carry retire_shard()''s trigger): schema, shard, node it moved to, when (from the move ID in the name), size in bytes.';
