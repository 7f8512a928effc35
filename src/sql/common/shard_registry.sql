-- The registered shards: one schema and one generator sequence each.
CREATE TABLE shardid.shard_registry (
    shard           integer PRIMARY KEY CHECK (shard OPERATOR(pg_catalog.>=) 0),
    schema_name     name    NOT NULL UNIQUE,
    sequence_schema name    NOT NULL,
    sequence_name   name    NOT NULL
);

SELECT pg_catalog.pg_extension_config_dump('shardid.shard_registry', '');

GRANT SELECT ON shardid.shard_registry TO PUBLIC;

COMMENT ON TABLE shardid.shard_registry IS
    'Registered logical shards: shard number, its schema and its generator sequence. Written by create_shard(), attach_shard(), adopt(), detach_shard().';
