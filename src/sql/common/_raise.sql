-- Raises an error from its parts (as GET STACKED DIAGNOSTICS gives them),
-- leaving out an empty detail or hint (PL/pgSQL's RAISE refuses NULL
-- options and prints empty ones), and without CONTEXT lines: the error is
-- the one of the call the user made, not of shardid's helpers
-- (src/pg/raise.cpp).
CREATE OR REPLACE FUNCTION shardid_internal._raise(sqlstate text, message text, detail text DEFAULT NULL, hint text DEFAULT NULL)
    RETURNS void
    LANGUAGE c VOLATILE
    AS 'MODULE_PATHNAME', 'shardid_raise';

-- Raising an error grants nothing: executable by PUBLIC, so that code run
-- with the caller's rights (the event trigger shardid_template_drop) may
-- call it.
REVOKE ALL ON FUNCTION shardid_internal._raise(text, text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION shardid_internal._raise(text, text, text, text) TO PUBLIC;

COMMENT ON FUNCTION shardid_internal._raise(text, text, text, text) IS
    'Internal: raises an error from SQLSTATE, message, detail and hint, leaving out empty ones, without CONTEXT lines of shardid''s helpers. Executable by PUBLIC.';
