-- Node: the retired copies of moved shards in this database. A retired
-- copy is what retire_shard() recorded in shardid.retired_schemas (the
-- schema by OID, named as it is now), with whether drop_retired_copies()
-- may drop it and, if not, why (_retired_copy_check; a record whose
-- schema was dropped by hand is droppable: the cleanup forgets it). Also listed, never
-- droppable: unregistered schemas that look like a retired copy (a table
-- there carries retire_shard()'s trigger, known by its function) but were
-- not recorded: a copy retired before 0.3, a restored node's, or a
-- tenant's schema its retired table was moved into; their shard and node
-- come from the trigger's arguments, retired_at from the move ID in the
-- name (<schema>_moved_<move id>, NULL when it has none).
CREATE OR REPLACE FUNCTION shardid_internal._retired_here()
    RETURNS TABLE (schema_name name, shard integer, moved_to text, retired_at timestamptz, bytes bigint,
                   recorded boolean, droppable boolean, reason text)
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    WITH copies AS (
        SELECT COALESCE(n.nspname, r.schema_name) AS schema_name, r.shard, r.moved_to, r.retired_at, n.oid AS nsp,
               true AS recorded, shardid_internal._retired_copy_check(r.schema_oid, r.relations) AS reason
          FROM shardid.retired_schemas AS r
          LEFT JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) r.schema_oid
        UNION ALL
        SELECT n.nspname,
               pg_catalog.min(pg_catalog.split_part(pg_catalog.encode(t.tgargs, 'escape'), '\000', 1))::integer,
               pg_catalog.min(pg_catalog.split_part(pg_catalog.encode(t.tgargs, 'escape'), '\000', 2)),
               pg_catalog.to_timestamp(pg_catalog.substring(n.nspname::text, '_moved_([0-9]{10,15})(_[0-9]+)?$')::double precision
                                       OPERATOR(pg_catalog./) 1000),
               n.oid, false,
               'not recorded by a move (retired before 0.3, on a restored node, or not a retired copy): drop_retired_copies() never drops it'
          FROM pg_catalog.pg_trigger AS t
          JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) t.tgrelid
          JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
         WHERE t.tgfoid OPERATOR(pg_catalog.=) 'shardid_internal._refuse_retired_write()'::pg_catalog.regprocedure
           AND NOT EXISTS (SELECT FROM shardid.shard_registry AS r WHERE r.schema_name OPERATOR(pg_catalog.=) n.nspname)
           AND NOT EXISTS (SELECT FROM shardid.retired_schemas AS x WHERE x.schema_oid OPERATOR(pg_catalog.=) n.oid)
         GROUP BY n.oid, n.nspname)
    SELECT c.schema_name, c.shard, c.moved_to, c.retired_at,
           (SELECT COALESCE(pg_catalog.sum(pg_catalog.pg_total_relation_size(c2.oid)), 0)::bigint
              FROM pg_catalog.pg_class AS c2
             WHERE c2.relnamespace OPERATOR(pg_catalog.=) c.nsp
               AND c2.relkind OPERATOR(pg_catalog.=) ANY ('{r,m,p}'::"char"[])),
           c.recorded, c.reason IS NULL OR (c.recorded AND c.nsp IS NULL), c.reason
      FROM copies AS c
     ORDER BY c.schema_name
$$;

REVOKE ALL ON FUNCTION shardid_internal._retired_here() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._retired_here() IS
    'Node: the retired copies recorded here (shardid.retired_schemas) and unregistered schemas that only look like one (never droppable): schema, shard, node it moved to, when, size in bytes, recorded, droppable, and why not.';
