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
           CASE WHEN pg_catalog.count(g.shard) OPERATOR(pg_catalog.=) pg_catalog.count(*)
                 AND pg_catalog.min(g.shard) OPERATOR(pg_catalog.=) pg_catalog.max(g.shard)
                THEN pg_catalog.min(g.shard) END,
           pg_catalog.array_agg(DISTINCT g.tbl),
           CASE WHEN s.relpersistence OPERATOR(pg_catalog.=) 'p'
                THEN pg_catalog.pg_sequence_last_value(s.oid::pg_catalog.regclass) END
      FROM (SELECT sdep.refobjid AS seq,
                   COALESCE(pg_catalog.pg_partition_root(d.adrelid), d.adrelid::pg_catalog.regclass) AS tbl,
                   pg_catalog.substring(pg_catalog.pg_get_expr(d.adbin, d.adrelid),
                                        '^shardid\.next_id\((-?[0-9]+),')::integer AS shard
              FROM pg_catalog.pg_attrdef AS d
              JOIN pg_catalog.pg_attribute AS a
                ON a.attrelid OPERATOR(pg_catalog.=) d.adrelid AND a.attnum OPERATOR(pg_catalog.=) d.adnum
              JOIN pg_catalog.pg_class AS t ON t.oid OPERATOR(pg_catalog.=) d.adrelid
              JOIN pg_catalog.pg_depend AS fdep
                ON fdep.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_attrdef'::pg_catalog.regclass
               AND fdep.objid OPERATOR(pg_catalog.=) d.oid
               AND fdep.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
               AND fdep.refobjid OPERATOR(pg_catalog.=) 'shardid.next_id(integer, pg_catalog.regclass)'::pg_catalog.regprocedure
              JOIN pg_catalog.pg_depend AS sdep
                ON sdep.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_attrdef'::pg_catalog.regclass
               AND sdep.objid OPERATOR(pg_catalog.=) d.oid
               AND sdep.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
             WHERE t.relkind IN ('r', 'p') AND NOT a.attisdropped) AS g
      JOIN pg_catalog.pg_class AS s
        ON s.oid OPERATOR(pg_catalog.=) g.seq AND s.relkind OPERATOR(pg_catalog.=) 'S'
      JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) s.relnamespace
     GROUP BY n.nspname, s.relname, s.oid, s.relpersistence
$$;

REVOKE ALL ON FUNCTION shardid._generator_states() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION shardid._generator_states() TO pg_monitor;

COMMENT ON FUNCTION shardid._generator_states() IS
    'Internal (for shardid.generators): every generator sequence a column DEFAULT shardid.next_id(shard, seq) names, its shard, the tables it serves and its raw state; read as the extension owner, executable by pg_monitor.';
