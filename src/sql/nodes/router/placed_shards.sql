-- The placed shards, for fan-out: SPLIT i_shards; RUN ON i_shards; reaches
-- every node once with the shards it holds (RUN ON ALL would also try the
-- partitions of unplaced shards).
CREATE OR REPLACE FUNCTION shardid.placed_shards() RETURNS integer[]
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT COALESCE(pg_catalog.array_agg(p.shard ORDER BY p.shard), '{}')
      FROM shardid.shard_placement AS p
$$;

COMMENT ON FUNCTION shardid.placed_shards() IS
    'Router: the placed shard numbers, for fan-out with SPLIT i_shards; RUN ON i_shards;';
