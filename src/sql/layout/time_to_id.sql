CREATE OR REPLACE FUNCTION shardid.time_to_id(ts timestamptz) RETURNS bigint
    LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_time_to_id';

COMMENT ON FUNCTION shardid.time_to_id(timestamptz) IS
    'The smallest ID of a time''s millisecond: WHERE id >= time_to_id(a) AND id < time_to_id(b) is a primary-key range scan.';
