-- Which node holds each placed shard; frozen while a move copies it.
CREATE TABLE shardid.shard_placement (
    shard     integer PRIMARY KEY CHECK (shard OPERATOR(pg_catalog.>=) 0),
    node      text NOT NULL REFERENCES shardid.nodes (node),
    frozen    boolean NOT NULL DEFAULT false,
    placed_at timestamptz NOT NULL DEFAULT pg_catalog.now()
);

CREATE INDEX shard_placement_node ON shardid.shard_placement (node);

SELECT pg_catalog.pg_extension_config_dump('shardid.shard_placement', '');

GRANT SELECT ON shardid.shard_placement TO PUBLIC;

COMMENT ON TABLE shardid.shard_placement IS
    'Router: the node holding each placed logical shard; frozen (read-only through the router) by freeze_shard().';
