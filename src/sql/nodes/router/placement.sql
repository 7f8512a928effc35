-- The placement, with the move in progress if any; no connect strings
-- (shardid.nodes is for administrators).
CREATE OR REPLACE VIEW shardid.placement AS
SELECT p.shard, p.node, p.frozen, p.placed_at, m.target AS moving_to, m.phase AS move_phase
  FROM shardid.shard_placement AS p
  LEFT JOIN shardid.shard_moves AS m ON m.shard OPERATOR(pg_catalog.=) p.shard;

GRANT SELECT ON shardid.placement TO PUBLIC;

COMMENT ON VIEW shardid.placement IS
    'Router: each placed shard with its node, whether it is frozen on the router, and the target and phase of its move in progress.';
