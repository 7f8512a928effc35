CREATE TYPE shardid.layout_report AS (
    epoch          timestamptz,  -- time 0 of the IDs
    time_bits      integer,      -- 63 - shard_bits - seq_bits
    shard_bits     integer,
    seq_bits       integer,
    max_shard      integer,      -- 2^shard_bits - 1
    ids_per_ms     bigint,       -- per generator: 2^seq_bits
    ids_per_second bigint,       -- per generator, sustained
    last_time      timestamptz,  -- the last millisecond an ID can hold
    in_use         boolean       -- IDs have been issued: the layout is frozen
);

COMMENT ON TYPE shardid.layout_report IS
    'What shardid.layout() and shardid.configure() report about a layout.';
