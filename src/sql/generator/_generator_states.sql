-- Every generator that a column DEFAULT names, with the tables it serves,
-- its state and whether its next ID makes a failover move
-- (shardid_internal._failover_pending). The catalog finds the DEFAULTs
-- shardid.next_id(shard, seq) without the shard registry
-- (shardid_internal._next_id_defaults); a generator's shard is NULL unless
-- every DEFAULT naming it has the same literal. Partitions count as their
-- partitioned table.
--
-- SECURITY DEFINER so that a monitoring role (pg_monitor) reads the states
-- without a privilege on each sequence, and only to that role: it reads the
-- state of these sequences and of no other, and takes no argument. States
-- of temporary and unlogged sequences (next_id() refuses them) are not read.
CREATE OR REPLACE FUNCTION shardid_internal._generator_states()
    RETURNS TABLE (schema name, sequence name, shard integer, tables pg_catalog.regclass[], state bigint,
                   failover_pending boolean)
    LANGUAGE sql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT n.nspname, s.relname,
           CASE WHEN pg_catalog.count(g.shard) = pg_catalog.count(*)
                 AND pg_catalog.min(g.shard) = pg_catalog.max(g.shard)
                THEN pg_catalog.min(g.shard) END,
           pg_catalog.array_agg(DISTINCT g.tbl),
           CASE WHEN s.relpersistence = 'p'
                THEN pg_catalog.pg_sequence_last_value(s.oid::pg_catalog.regclass) END,
           CASE WHEN s.relpersistence = 'p'
                THEN shardid_internal._failover_pending(s.oid::pg_catalog.regclass) END
      FROM (SELECT nd.seq,
                   COALESCE(pg_catalog.pg_partition_root(nd.rel), nd.rel::pg_catalog.regclass) AS tbl,
                   nd.shard
              FROM shardid_internal._next_id_defaults AS nd
              JOIN pg_catalog.pg_attribute AS a
                ON a.attrelid = nd.rel AND a.attnum = nd.attnum
              JOIN pg_catalog.pg_class AS t ON t.oid = nd.rel
             WHERE t.relkind IN ('r', 'p') AND NOT a.attisdropped) AS g
      JOIN pg_catalog.pg_class AS s
        ON s.oid = g.seq AND s.relkind = 'S'
      JOIN pg_catalog.pg_namespace AS n ON n.oid = s.relnamespace
     GROUP BY n.nspname, s.relname, s.oid, s.relpersistence
$$;

REVOKE ALL ON FUNCTION shardid_internal._generator_states() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION shardid_internal._generator_states() TO pg_monitor;

COMMENT ON FUNCTION shardid_internal._generator_states() IS
    'Internal (for shardid.generators): every generator sequence a column DEFAULT shardid.next_id(shard, seq) names, its shard, the tables it serves, its raw state and whether its next ID makes a failover move; read as the extension owner, executable by pg_monitor.';
