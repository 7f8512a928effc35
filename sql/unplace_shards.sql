-- unplace_shards(): the undo of place_shards() on a router (this one has
-- no PL/Proxy; nodes.sql checks that the PL/Proxy cluster follows). It
-- refuses shards being moved or frozen, before anything changes.
SET client_min_messages = warning;
\set SHOW_CONTEXT never
SELECT shardid.add_node('ua', 'host=/nonexistent/ua dbname=app');
SELECT shardid.add_node('ub', 'host=/nonexistent/ub dbname=app');
SELECT shardid.place_shards('ua', 0, 3), shardid.place_shards('ub', 4, 5);

-- Arguments.
SELECT shardid.unplace_shards(NULL, 3);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.unplace_shards(3, 2);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.unplace_shards(0, 8192);
\echo :LAST_ERROR_SQLSTATE

-- A shard being moved, a frozen one: refused, nothing unplaced.
INSERT INTO shardid.shard_moves (shard, source, target, schema_name, mode, phase)
VALUES (1, 'ua', 'ub', 'shard_0001', 'online', 'copy');
SELECT shardid.unplace_shards(0, 3);
\echo :LAST_ERROR_SQLSTATE
DELETE FROM shardid.shard_moves;
SELECT shardid.freeze_shard(4);
SELECT shardid.unplace_shards(2, 5);
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS placed FROM shardid.shard_placement;
SELECT shardid.unfreeze_shard(4);

-- Administrators only.
CREATE ROLE regress_unplace_app;
SET ROLE regress_unplace_app;
SELECT shardid.unplace_shards(0, 0);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
DROP ROLE regress_unplace_app;

-- Unplaced shards of the range are skipped; the count is of those unplaced.
SELECT shardid.unplace_shards(3, 9) AS unplaced;
SELECT shardid.unplace_shards(3, 9) AS unplaced;
SELECT shard, node FROM shardid.placement ORDER BY shard;
-- A node left without shards can be removed.
SELECT shardid.remove_node('ub');
SELECT shardid.unplace_shards(0, 8191) AS unplaced;
SELECT shardid.remove_node('ua');
SELECT count(*) AS nodes FROM shardid.nodes;
