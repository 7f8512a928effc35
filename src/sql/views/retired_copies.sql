-- Router: the retired copies that moves left on their source nodes
-- (move_shard() without drop_old keeps the old copy, renamed
-- <schema>_moved_<move id>, its tables refusing writes), for
-- drop_retired_copies(). Reads every node over dblink: administrators only.
CREATE OR REPLACE VIEW shardid.retired_copies AS
SELECT c.node, c.shard, c.schema_name, c.moved_to, c.retired_at, c.bytes
  FROM shardid_internal._retired_copies() AS c;

REVOKE ALL ON shardid.retired_copies FROM PUBLIC;

COMMENT ON VIEW shardid.retired_copies IS
    'Router: the retired copies of moved shards on every node: node, shard, schema, the node it moved to, when it was retired (from the move ID in its name), size in bytes. Read over dblink; administrators only.';
COMMENT ON COLUMN shardid.retired_copies.node IS 'The node that keeps the copy (the move''s source).';
COMMENT ON COLUMN shardid.retired_copies.shard IS 'The shard it is a copy of.';
COMMENT ON COLUMN shardid.retired_copies.schema_name IS 'The copy''s schema, <schema>_moved_<move id>.';
COMMENT ON COLUMN shardid.retired_copies.moved_to IS 'The node the shard moved to.';
COMMENT ON COLUMN shardid.retired_copies.retired_at IS 'When it was retired: the move ID in its name (NULL when the name has none).';
COMMENT ON COLUMN shardid.retired_copies.bytes IS 'Its tables'' size with their indexes and TOAST.';
