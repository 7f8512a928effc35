-- An error message on one line, for a move's last_error and the errors it
-- raises: libpq puts one line per host it tried ("connection to server at
-- ... failed: ...") and indents its hints on lines of their own, so a
-- multi-host connect string (an HA pair) gave a message of many lines. The
-- indented lines join the line above with a space, the others with "; ".
CREATE OR REPLACE FUNCTION shardid_internal._one_line(msg text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT regexp_replace(regexp_replace(btrim(msg, E' \t\r\n'), E'[ \t\r]*\n[ \t]+', ' ', 'g'), E'[ \t\r]*\n+', '; ', 'g')
$$;

REVOKE ALL ON FUNCTION shardid_internal._one_line(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._one_line(text) IS
    'Internal: an error message on one line (libpq''s line per host joined by "; ", its indented hints by a space), for a move''s last_error and errors.';
