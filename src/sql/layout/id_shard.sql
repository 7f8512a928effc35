CREATE OR REPLACE FUNCTION shardid.id_shard(id bigint) RETURNS integer
    LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_id_shard';

COMMENT ON FUNCTION shardid.id_shard(bigint) IS
    'The logical shard of an ID, for routing.';
