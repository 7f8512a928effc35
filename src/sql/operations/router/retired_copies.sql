-- Router: the retired copies that moves left on their source nodes
-- (move_shard() without drop_old keeps the old copy, renamed
-- <schema>_moved_<move id>, its tables refusing writes, and records it on
-- the node in shardid.retired_schemas), for drop_retired_copies(): each
-- with whether the cleanup may drop it and, if not, why. Schemas that
-- only look like one (not recorded) are listed too, never droppable.
-- Reads every node over dblink: administrators only.
CREATE OR REPLACE VIEW shardid.retired_copies AS
SELECT c.node, c.shard, c.schema_name, c.moved_to, c.retired_at, c.bytes, c.recorded, c.droppable, c.reason
  FROM shardid_internal._retired_copies() AS c;

REVOKE ALL ON shardid.retired_copies FROM PUBLIC;

COMMENT ON VIEW shardid.retired_copies IS
    'Router: the retired copies of moved shards on every node: node, shard, schema, the node it moved to, when it was retired, size in bytes, whether a move recorded it, whether drop_retired_copies() may drop it and why not. Read over dblink; administrators only.';
COMMENT ON COLUMN shardid.retired_copies.node IS 'The node that keeps the copy (the move''s source).';
COMMENT ON COLUMN shardid.retired_copies.shard IS 'The shard it is a copy of.';
COMMENT ON COLUMN shardid.retired_copies.schema_name IS 'The copy''s schema, <schema>_moved_<move id>.';
COMMENT ON COLUMN shardid.retired_copies.moved_to IS 'The node the shard moved to.';
COMMENT ON COLUMN shardid.retired_copies.retired_at IS 'When it was retired: as recorded; for one not recorded, the move ID in its name (NULL when the name has none).';
COMMENT ON COLUMN shardid.retired_copies.bytes IS 'Its tables'' size with their indexes and TOAST.';
COMMENT ON COLUMN shardid.retired_copies.recorded IS 'Whether retire_shard() recorded it on the node (shardid.retired_schemas); one that is not is never dropped by drop_retired_copies().';
COMMENT ON COLUMN shardid.retired_copies.droppable IS 'Whether drop_retired_copies() may drop it: recorded, not registered again, holding nothing but its own objects.';
COMMENT ON COLUMN shardid.retired_copies.reason IS 'Why it may not be dropped (NULL when it may): not recorded, registered again, or the objects of others it holds or that use it.';
