-- Every generator that a column DEFAULT names, with the tables it serves and
-- its state. A DEFAULT shardid.next_id(shard, seq) depends on next_id() and
-- on its sequence (a regclass constant), so the catalog finds them without
-- the shard registry; the shard is read from the DEFAULT's text (NULL unless
-- every DEFAULT naming the generator has the same literal). Partitions count
-- as their partitioned table.
--
-- SECURITY DEFINER so that a monitoring role (pg_monitor) reads the states
-- without a privilege on each sequence, and only to that role: it reads the
-- state of these sequences and of no other, and takes no argument. States
-- of temporary and unlogged sequences (next_id() refuses them) are not read.
CREATE OR REPLACE FUNCTION shardid._generator_states()
    RETURNS TABLE (schema name, sequence name, shard integer, tables pg_catalog.regclass[], state bigint)
    LANGUAGE sql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT n.nspname, s.relname,
           CASE WHEN pg_catalog.count(g.shard) = pg_catalog.count(*)
                 AND pg_catalog.min(g.shard) = pg_catalog.max(g.shard)
                THEN pg_catalog.min(g.shard) END,
           pg_catalog.array_agg(DISTINCT g.tbl),
           CASE WHEN s.relpersistence = 'p'
                THEN pg_catalog.pg_sequence_last_value(s.oid::pg_catalog.regclass) END
      FROM (SELECT sdep.refobjid AS seq,
                   COALESCE(pg_catalog.pg_partition_root(d.adrelid), d.adrelid::pg_catalog.regclass) AS tbl,
                   pg_catalog.substring(pg_catalog.pg_get_expr(d.adbin, d.adrelid),
                                        '^shardid\.next_id\((-?[0-9]+),')::integer AS shard
              FROM pg_catalog.pg_attrdef AS d
              JOIN pg_catalog.pg_attribute AS a
                ON a.attrelid = d.adrelid AND a.attnum = d.adnum
              JOIN pg_catalog.pg_class AS t ON t.oid = d.adrelid
              JOIN pg_catalog.pg_depend AS fdep
                ON fdep.classid = 'pg_catalog.pg_attrdef'::pg_catalog.regclass
               AND fdep.objid = d.oid
               AND fdep.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass
               AND fdep.refobjid = 'shardid.next_id(integer, pg_catalog.regclass)'::pg_catalog.regprocedure
              JOIN pg_catalog.pg_depend AS sdep
                ON sdep.classid = 'pg_catalog.pg_attrdef'::pg_catalog.regclass
               AND sdep.objid = d.oid
               AND sdep.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
             WHERE t.relkind IN ('r', 'p') AND NOT a.attisdropped) AS g
      JOIN pg_catalog.pg_class AS s
        ON s.oid = g.seq AND s.relkind = 'S'
      JOIN pg_catalog.pg_namespace AS n ON n.oid = s.relnamespace
     GROUP BY n.nspname, s.relname, s.oid, s.relpersistence
$$;

REVOKE ALL ON FUNCTION shardid._generator_states() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION shardid._generator_states() TO pg_monitor;

COMMENT ON FUNCTION shardid._generator_states() IS
    'Internal (for shardid.generators): every generator sequence a column DEFAULT shardid.next_id(shard, seq) names, its shard, the tables it serves and its raw state; read as the extension owner, executable by pg_monitor.';
