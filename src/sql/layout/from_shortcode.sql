CREATE OR REPLACE FUNCTION shardid.from_shortcode(code text) RETURNS bigint
    LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_from_shortcode';

COMMENT ON FUNCTION shardid.from_shortcode(text) IS
    'The ID of a short code; refuses characters outside the alphabet, leading zero digits and codes over 63 bits.';
