-- Raises an error from its parts (as GET STACKED DIAGNOSTICS gives them),
-- leaving out an empty detail or hint: RAISE refuses NULL options.
CREATE OR REPLACE FUNCTION shardid._raise(sqlstate text, message text, detail text DEFAULT NULL, hint text DEFAULT NULL)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF COALESCE(detail, '') <> '' AND COALESCE(hint, '') <> '' THEN
        RAISE EXCEPTION USING ERRCODE = sqlstate, MESSAGE = message, DETAIL = detail, HINT = hint;
    ELSIF COALESCE(detail, '') <> '' THEN
        RAISE EXCEPTION USING ERRCODE = sqlstate, MESSAGE = message, DETAIL = detail;
    ELSIF COALESCE(hint, '') <> '' THEN
        RAISE EXCEPTION USING ERRCODE = sqlstate, MESSAGE = message, HINT = hint;
    ELSE
        RAISE EXCEPTION USING ERRCODE = sqlstate, MESSAGE = message;
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid._raise(text, text, text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid._raise(text, text, text, text) IS
    'Internal: raises an error from SQLSTATE, message, detail and hint, leaving out empty ones.';
