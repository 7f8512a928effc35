-- Node: the retired copies of moved shards here, as retire_shard()
-- recorded them when it renamed each (move_shard() without drop_old): the
-- schema by OID (its name then, the shard, the node it moved to, when) and
-- the relations shardid made in it (the shard's tables, their partitions,
-- its generator and the sequences those tables own). drop_retired_copies()
-- drops only a schema recorded here, and only while it holds nothing but
-- these relations and what depends on them alone (their indexes,
-- constraints, triggers, TOAST): never a schema that merely looks like a
-- retired copy (a tenant can move its retired table anywhere it may
-- create). Not dumped: a restored node has other OIDs, and its copies are
-- then reported as not recorded. Administrators only.
CREATE TABLE shardid.retired_schemas (
    schema_oid  oid PRIMARY KEY,
    schema_name name NOT NULL,
    shard       integer NOT NULL,
    moved_to    text NOT NULL,
    relations   oid[] NOT NULL,
    retired_at  timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp()
);

REVOKE ALL ON shardid.retired_schemas FROM PUBLIC;

COMMENT ON TABLE shardid.retired_schemas IS
    'Node: the retired copies of moved shards here, recorded by retire_shard(): schema OID and name, shard, the node it moved to, the relations shardid made in it (OIDs), when. drop_retired_copies() drops only these. Administrators only.';
