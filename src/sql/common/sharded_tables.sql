-- The sharded tables: created in every shard, and in shards created later.
CREATE TABLE shardid.sharded_tables (
    table_name      name    PRIMARY KEY,
    template_schema name    NOT NULL,
    template_name   name    NOT NULL,
    id_column       name    NOT NULL,
    position        integer NOT NULL UNIQUE
);

SELECT pg_catalog.pg_extension_config_dump('shardid.sharded_tables', '');

GRANT SELECT ON shardid.sharded_tables TO PUBLIC;

COMMENT ON TABLE shardid.sharded_tables IS
    'Tables created in every shard by create_table(): name, template, id column, creation order.';
