CREATE OR REPLACE FUNCTION shardid.make_id(ts timestamptz, shard integer, seq integer) RETURNS bigint
    LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_make_id';

COMMENT ON FUNCTION shardid.make_id(timestamptz, integer, integer) IS
    'Composes an ID from a time (truncated to the millisecond), a shard and a sequence value; for tests and backfills.';
