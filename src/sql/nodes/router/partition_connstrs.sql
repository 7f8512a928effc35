-- The connect string of every PL/Proxy partition, in partition order: the
-- node's for a placed shard, read-only for a frozen one, a failing one that
-- names the shard for the rest. Also usable from plproxy.get_cluster_partitions().
CREATE OR REPLACE FUNCTION shardid.partition_connstrs(OUT shard integer, OUT connstr text)
    RETURNS SETOF record
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    l shardid.layout_report := shardid.layout();
BEGIN
    -- PL/Proxy allocates one slot per partition and SQL/MED keeps them all
    -- in one catalog row: 2^16 partitions is the most this supports.
    IF l.shard_bits > 16 THEN
        RAISE EXCEPTION 'a PL/Proxy cluster cannot have one partition per shard with % shard bits', l.shard_bits
            USING ERRCODE = 'program_limit_exceeded',
                  DETAIL = pg_catalog.format('This layout has %s shards; the router supports at most 65536 (16 shard bits).',
                                             l.max_shard::bigint + 1);
    END IF;
    RETURN QUERY
    SELECT g.s,
           CASE
               WHEN p.shard IS NULL THEN
                   pg_catalog.format('service=''shardid: shard %s is not placed on any node''', g.s)
               WHEN p.frozen THEN
                   n.connstr || ' options=''-c default_transaction_read_only=on'''
               ELSE n.connstr
           END
      FROM pg_catalog.generate_series(0, l.max_shard) AS g(s)
      LEFT JOIN shardid.shard_placement AS p ON p.shard = g.s
      LEFT JOIN shardid.nodes AS n ON n.node = p.node
     ORDER BY g.s;
END
$$;

COMMENT ON FUNCTION shardid.partition_connstrs() IS
    'Router: the connect string of each PL/Proxy partition (= logical shard) of cluster ''shardid'', in order; unplaced shards get one that fails naming the shard, frozen ones a read-only one.';
