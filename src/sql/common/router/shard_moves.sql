-- Moves in progress, one row per shard, written by shardid.move_shard():
-- schema (the target's copy made from its templates) -> copy (publication,
-- slot, subscription: initial copy, then catch-up while the application
-- writes) -> frozen (writes refused on the source while the target
-- confirms source_lsn and gets the generators) -> caught_up (the source's
-- freeze made permanent) -> repointed (router switched; subscription,
-- slots and publication dropped, the old copy retired); the row is deleted
-- when the move is done or rolled back (phase aborting meanwhile).
-- move_id (ms since 1970 at the start) names the move's publication, slot,
-- subscription (shardid_move_<shard>_<move_id>) and retired schema; the
-- progress columns are refreshed while it copies (view move_progress).
-- Not dumped: a restored router has no move in progress.
CREATE TABLE shardid.shard_moves (
    shard          integer PRIMARY KEY REFERENCES shardid.shard_placement (shard),
    move_id        bigint NOT NULL
                   DEFAULT (pg_catalog.date_part('epoch', pg_catalog.clock_timestamp()) OPERATOR(pg_catalog.*) 1000)::bigint,
    source         text NOT NULL REFERENCES shardid.nodes (node),
    target         text NOT NULL REFERENCES shardid.nodes (node),
    schema_name    name NOT NULL,
    mode           text NOT NULL CHECK (mode OPERATOR(pg_catalog.=) ANY (ARRAY['online', 'offline'])),
    phase          text NOT NULL CHECK (phase OPERATOR(pg_catalog.=) ANY (ARRAY['schema', 'copy', 'frozen', 'caught_up', 'repointed', 'aborting'])),
    source_lsn     pg_lsn,
    subscription   oid,
    target_sysid   text,
    tables_ready   integer,
    tables_total   integer,
    bytes_copied   bigint,
    bytes_total    bigint,
    lag_bytes      bigint,
    last_error     text,
    started_at     timestamptz NOT NULL DEFAULT pg_catalog.now(),
    updated_at     timestamptz NOT NULL DEFAULT pg_catalog.now(),
    frozen_at      timestamptz,
    repointed_at   timestamptz,
    CHECK (source OPERATOR(pg_catalog.<>) target)
);

GRANT SELECT ON shardid.shard_moves TO PUBLIC;

COMMENT ON TABLE shardid.shard_moves IS
    'Router: moves in progress (shardid.move_shard()), one row per shard: source, target, phase (schema, copy, frozen, caught_up, repointed, or aborting), progress, last error. Deleted when the move is done or aborted.';
