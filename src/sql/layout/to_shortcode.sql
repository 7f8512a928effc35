CREATE OR REPLACE FUNCTION shardid.to_shortcode(id bigint) RETURNS text
    LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_to_shortcode';

COMMENT ON FUNCTION shardid.to_shortcode(bigint) IS
    'The URL-safe short code of an ID: base 64 over A-Z a-z 0-9 - _, most significant digit first.';
