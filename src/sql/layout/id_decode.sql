CREATE OR REPLACE FUNCTION shardid.id_decode(id bigint, OUT ts timestamptz, OUT shard integer, OUT seq integer)
    LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_id_decode';

COMMENT ON FUNCTION shardid.id_decode(bigint) IS
    'All three parts of an ID: (ts, shard, seq).';
