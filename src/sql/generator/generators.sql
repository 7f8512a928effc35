-- Generator health, for monitoring: one row per generator that a column
-- DEFAULT names. A burst of more than ids_per_ms IDs in a millisecond
-- carries a generator's state ahead of the clock (lead), up to
-- shardid.max_drift, where next_id() starts to wait; a lead beyond it means
-- the clock stepped back or a failover moved the generator.
-- failover_pending: the generator was last logged before this server's
-- timeline began (a promotion, a restore), so its next ID makes that move.
-- time_left is how long the layout can still issue IDs. Times are measured
-- from now(), the start of the transaction. The retired copy of a moved
-- shard (its tables carry retire_shard()'s trigger, known by its function)
-- issues no ID and is not a generator of its shard: shardid.retired_copies
-- lists those on the router.
--
-- Readable by superusers and pg_monitor, as the states are sequence values,
-- which PostgreSQL shows only to roles with a privilege on the sequence
-- (shardid.shards shows the registered shards to everyone, with a state
-- only where the reader has that privilege).
CREATE OR REPLACE VIEW shardid.generators AS
SELECT g.schema,
       g.sequence,
       g.shard,
       g.tables,
       st.ts AS last_time,
       CASE WHEN st.ts IS NOT NULL THEN
           GREATEST(st.ts OPERATOR(pg_catalog.-) pg_catalog.now(), '0'::interval)
       END AS lead,
       g.failover_pending,
       st.seq::bigint OPERATOR(pg_catalog.+) 1 AS ids_in_ms,
       l.ids_per_ms,
       l.last_time AS layout_end,
       l.last_time OPERATOR(pg_catalog.-) pg_catalog.now() AS time_left
  FROM shardid_internal._generator_states() AS g
 CROSS JOIN shardid.layout() AS l
 CROSS JOIN LATERAL shardid_internal._state_decode(g.state) AS st
 WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_trigger AS t
                    WHERE t.tgrelid::pg_catalog.regclass OPERATOR(pg_catalog.=) ANY (g.tables)
                      AND t.tgfoid OPERATOR(pg_catalog.=) 'shardid_internal._refuse_retired_write()'::pg_catalog.regprocedure);

REVOKE ALL ON shardid.generators FROM PUBLIC;
GRANT SELECT ON shardid.generators TO pg_monitor;

COMMENT ON VIEW shardid.generators IS
    'Generator health: every generator a column DEFAULT shardid.next_id(shard, seq) names (but retired copies of moved shards), its shard and tables, the time of its last ID, its lead over now() (left by bursts or a failover move), whether its next ID makes a failover move, the IDs it issued in that millisecond, and the layout''s end. Readable by pg_monitor.';
COMMENT ON COLUMN shardid.generators.schema IS 'Schema of the generator sequence.';
COMMENT ON COLUMN shardid.generators.sequence IS 'The generator sequence.';
COMMENT ON COLUMN shardid.generators.shard IS 'The shard its DEFAULTs issue IDs for (NULL unless they all name the same literal shard).';
COMMENT ON COLUMN shardid.generators.tables IS 'The tables whose column DEFAULT names the generator (partitions as their partitioned table).';
COMMENT ON COLUMN shardid.generators.last_time IS 'Time of the generator''s state: of the last ID it issued (NULL before the first, or for a state outside the layout).';
COMMENT ON COLUMN shardid.generators.lead IS 'How far last_time is ahead of now(): the drift a burst left (0 when not ahead). Capped by shardid.max_drift unless the clock stepped back or a failover moved the generator.';
COMMENT ON COLUMN shardid.generators.failover_pending IS 'True when the generator was last WAL-logged on an earlier timeline (before this server''s promotion or point-in-time restore): its next ID moves it shardid.max_clock_skew + shardid.max_drift ahead, past the old timeline''s IDs. NULL on a standby (in recovery).';
COMMENT ON COLUMN shardid.generators.ids_in_ms IS 'IDs issued in the millisecond of last_time, out of ids_per_ms.';
COMMENT ON COLUMN shardid.generators.ids_per_ms IS 'IDs a generator can issue per millisecond (2^seq_bits).';
COMMENT ON COLUMN shardid.generators.layout_end IS 'The last time the layout can represent: no ID can be issued after it.';
COMMENT ON COLUMN shardid.generators.time_left IS 'layout_end - now(): how long the layout can still issue IDs.';
