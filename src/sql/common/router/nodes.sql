-- The data nodes: a name and a libpq key=value connect string, which holds
-- no secret as libpq reads it (shardid_internal._connstr_secret(), defined before).
CREATE TABLE shardid.nodes (
    node     text PRIMARY KEY
             CHECK (node OPERATOR(pg_catalog.~) '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,62}$'),
    connstr  text NOT NULL
             CONSTRAINT nodes_connstr_no_password
             CHECK (shardid_internal._connstr_secret(connstr) IS NULL),
    added_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    -- false: plans move no shard onto it (set_node(); drain_node() sets it)
    accepts_shards boolean NOT NULL DEFAULT true
);

SELECT pg_catalog.pg_extension_config_dump('shardid.nodes', '');

-- administrators only (an explicit ACL, as an update from 0.1 leaves it)
REVOKE SELECT ON shardid.nodes FROM PUBLIC;

COMMENT ON TABLE shardid.nodes IS
    'Router: the data nodes, by name, with a libpq key=value connect string (never a password). Whether it accepts shards (rebalance and drain plans move none onto it when not). Written by add_node(), set_node(), remove_node(). Readable by administrators only.';
