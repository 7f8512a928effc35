CREATE OR REPLACE FUNCTION shardid_internal._require_layout(epoch timestamptz, shard_bits integer, seq_bits integer)
    RETURNS bigint
    LANGUAGE c IMMUTABLE STRICT AS 'MODULE_PATHNAME', 'shardid_check_layout';

REVOKE ALL ON FUNCTION shardid_internal._require_layout(timestamptz, integer, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._require_layout(timestamptz, integer, integer) IS
    'Validates a layout and returns its epoch in Unix milliseconds; used by configure().';
