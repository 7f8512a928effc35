CREATE OR REPLACE FUNCTION shardid.id_seq(id bigint) RETURNS integer
    LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_id_seq';

COMMENT ON FUNCTION shardid.id_seq(bigint) IS
    'The sequence part of an ID.';
