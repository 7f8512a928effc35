-- Moves in progress, one row per shard, written by bin/shardid-move-shard:
-- schema (DDL copied) -> copy (publication, subscription, initial copy and
-- catch-up) -> frozen (writes refused on the source, waiting for the target
-- to confirm source_lsn) -> caught_up (target attached, generator raised)
-- -> repointed (router switched; the old copy is being retired); the row is
-- deleted when the move is done or rolled back (phase aborting meanwhile). Not dumped: a restored router
-- has no move in progress.
CREATE TABLE shardid.shard_moves (
    shard       integer PRIMARY KEY REFERENCES shardid.shard_placement (shard),
    source      text NOT NULL REFERENCES shardid.nodes (node),
    target      text NOT NULL REFERENCES shardid.nodes (node),
    schema_name name NOT NULL,
    mode        text NOT NULL CHECK (mode OPERATOR(pg_catalog.=) ANY (ARRAY['online', 'offline'])),
    phase       text NOT NULL CHECK (phase OPERATOR(pg_catalog.=) ANY (ARRAY['schema', 'copy', 'frozen', 'caught_up', 'repointed', 'aborting'])),
    source_lsn  pg_lsn,
    progress    text,
    started_at  timestamptz NOT NULL DEFAULT pg_catalog.now(),
    updated_at  timestamptz NOT NULL DEFAULT pg_catalog.now(),
    CHECK (source OPERATOR(pg_catalog.<>) target)
);

GRANT SELECT ON shardid.shard_moves TO PUBLIC;

COMMENT ON TABLE shardid.shard_moves IS
    'Router: moves in progress (bin/shardid-move-shard), one row per shard: source, target, phase (schema, copy, frozen, caught_up, repointed, or aborting), progress. Deleted when the move is done or aborted.';
