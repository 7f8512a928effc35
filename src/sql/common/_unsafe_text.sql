-- Whether a text read from a node (a name, a stored command) holds a
-- control character: C0 (a newline among them), DEL, C1, or a Unicode line
-- or paragraph separator. Text built from such a value could end a
-- comment or a line where the reader does not see it, so check_cluster()
-- reports it (unsafe_name) and never puts it into a fix.
CREATE OR REPLACE FUNCTION shardid_internal._unsafe_text(t text) RETURNS boolean
    LANGUAGE sql IMMUTABLE STRICT
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT t OPERATOR(pg_catalog.~) '[\x01-\x1f\x7f-\x9f\u2028\u2029]'
$$;

REVOKE ALL ON FUNCTION shardid_internal._unsafe_text(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._unsafe_text(text) IS
    'Whether a text holds a control character (C0, DEL, C1, or U+2028/U+2029): check_cluster() never puts such a text into a fix.';
