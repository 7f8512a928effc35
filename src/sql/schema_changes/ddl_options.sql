-- The one options record of apply_ddl(): built and checked once from its
-- named parameters (_ddl_options), passed whole to the node's loop
-- (_apply_ddl_here) and from the router to every node, where the same
-- builder reads it back, so that an option is honoured on each node or
-- refused on the router. A new option is an attribute here, its default
-- in _ddl_options() and its consumer.
CREATE TYPE shardid.ddl_options AS (
    batch_size  integer,   -- tables a batch commits at most
    batch_time  interval,  -- a batch commits once it has held its first table's lock this long (NULL: no bound)
    loopback    text,      -- a node's connect string to itself, for CONCURRENTLY (NULL: its socket); refused on a router
    connections integer    -- tables CONCURRENTLY changes at once on a node, each on a connection of its own
);

COMMENT ON TYPE shardid.ddl_options IS
    'The options of one apply_ddl(), built and checked once (shardid_internal._ddl_options) and passed whole, from the router to every node too: batch_size, batch_time, loopback, connections.';
