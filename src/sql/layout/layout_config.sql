-- The layout of this database. Empty means Instagram's default layout; a row
-- is written by configure(). Dumped by pg_dump as extension configuration.
CREATE TABLE shardid.layout_config (
    singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    epoch_ms   bigint  NOT NULL,
    shard_bits integer NOT NULL,
    seq_bits   integer NOT NULL
);

SELECT pg_catalog.pg_extension_config_dump('shardid.layout_config', '');

COMMENT ON TABLE shardid.layout_config IS
    'The ID layout of this database (empty: Instagram''s default). Change it with shardid.configure().';
