-- Router, the planners (_plan()): the planner's view of the placement,
-- read once in one statement: every placed shard of the nodes given
-- (NULL: every node), the node it counts on, its size (by_size, read from
-- the nodes by shard_sizes(); NULL for by_count, which reaches no node)
-- and the shards that count but do not move (pinned: in a move, frozen,
-- in excluded_shards, or going), as the parallel arrays _rebalance_moves()
-- takes. A shard counts where it is going: on the target of its move in
-- progress (on its source while the move is being rolled back), and on
-- the node going_to names for it (a job's move that has started, or
-- waits for its retry, whatever its worker is doing), so that a plan made
-- while moves run never counts one of them twice or sends another shard
-- where one is already going.
CREATE OR REPLACE FUNCTION shardid_internal._plan_placement(strategy text, excluded_shards integer[], nodes text[],
                                                            going_shards integer[], going_to text[],
                                                            OUT placed integer[], OUT counted_on text[], OUT sizes bigint[],
                                                            OUT pinned integer[])
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    size_shard integer[] := '{}';
    size_bytes bigint[] := '{}';
BEGIN
    IF strategy = 'by_size' THEN
        SELECT COALESCE(pg_catalog.array_agg(z.shard), '{}'), COALESCE(pg_catalog.array_agg(z.bytes), '{}')
          INTO size_shard, size_bytes
          FROM shardid.shard_sizes() AS z;
    END IF;
    SELECT COALESCE(pg_catalog.array_agg(p.shard ORDER BY p.shard), '{}'),
           COALESCE(pg_catalog.array_agg(p.counted_on ORDER BY p.shard), '{}'),
           COALESCE(pg_catalog.array_agg(z.bytes ORDER BY p.shard), '{}'),
           COALESCE(pg_catalog.array_agg(p.shard ORDER BY p.shard)
                        FILTER (WHERE p.moving OR p.frozen OR p.shard = ANY (COALESCE(excluded_shards, '{}'))), '{}')
      INTO placed, counted_on, sizes, pinned
      FROM (SELECT x.shard, x.frozen, m.shard IS NOT NULL OR g.shard IS NOT NULL AS moving,
                   CASE WHEN g.shard IS NOT NULL THEN g.node
                        WHEN m.shard IS NULL OR m.phase = 'aborting' THEN x.node
                        ELSE m.target END AS counted_on
              FROM shardid.shard_placement AS x
              LEFT JOIN shardid.shard_moves AS m ON m.shard = x.shard
              LEFT JOIN ROWS FROM (pg_catalog.unnest(COALESCE(going_shards, '{}')), pg_catalog.unnest(COALESCE(going_to, '{}')))
                        AS g(shard, node) ON g.shard = x.shard) AS p
      LEFT JOIN ROWS FROM (pg_catalog.unnest(size_shard), pg_catalog.unnest(size_bytes)) AS z(shard, bytes) ON z.shard = p.shard
     WHERE nodes IS NULL OR p.counted_on = ANY (nodes);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._plan_placement(text, integer[], text[], integer[], text[]) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._plan_placement(text, integer[], text[], integer[], text[]) IS
    'Router, the planners: the placed shards of the given nodes, the node each counts on (the target of its move in progress, or of a job''s move going there), their sizes (by_size) and the pinned ones, read in one statement.';
