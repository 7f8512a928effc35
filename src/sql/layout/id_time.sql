-- The decoders are IMMUTABLE so indexes, generated columns and constraints
-- can use them: the layout they read changes only while nothing stores
-- their results (configure() checks shardid.stored_decodes, 05_stored_decodes.sql).
CREATE OR REPLACE FUNCTION shardid.id_time(id bigint) RETURNS timestamptz
    LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_id_time';

COMMENT ON FUNCTION shardid.id_time(bigint) IS
    'The time part of an ID: when it was generated, to the millisecond.';
