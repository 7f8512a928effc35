-- A connect string as libpq parses it (src/pg/connstr.cpp).
CREATE OR REPLACE FUNCTION shardid_internal._connstr_options(connstr text, OUT keyword text, OUT value text, OUT secret boolean)
    RETURNS SETOF record
    LANGUAGE c IMMUTABLE STRICT AS 'MODULE_PATHNAME', 'shardid_connstr_options';

REVOKE ALL ON FUNCTION shardid_internal._connstr_options(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._connstr_options(text) IS
    'Internal: the options a libpq connect string (key=value or URI) sets, as libpq''s PQconninfoParse() reads them; secret for those libpq hides (password, sslpassword, ...). 22023 if libpq cannot parse it.';
