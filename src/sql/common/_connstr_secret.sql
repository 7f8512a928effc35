-- The secret a node connect string holds, as libpq reads it, or NULL. A
-- dbname that libpq takes for a connect string of its own (a URI, or text
-- with "=") is searched as well; one that libpq cannot parse counts as a
-- secret, since its text would show wherever the connect string does. A
-- string libpq cannot parse at all raises 22023. Used by add_node() and by
-- the CHECK on shardid.nodes. Not PARALLEL SAFE: its exception block is a
-- subtransaction.
CREATE OR REPLACE FUNCTION shardid_internal._connstr_secret(connstr text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    o     record;
    found text;
BEGIN
    FOR o IN SELECT * FROM shardid_internal._connstr_options(connstr) LOOP
        IF o.secret THEN
            RETURN o.keyword;
        END IF;
        IF o.keyword = 'dbname'
           AND (o.value ~ '^postgres(ql)?://'
                OR pg_catalog.strpos(o.value, '=') > 0) THEN
            BEGIN
                found := shardid_internal._connstr_secret(o.value);
            EXCEPTION WHEN invalid_parameter_value THEN
                RETURN 'a dbname libpq cannot parse';
            END;
            IF found IS NOT NULL THEN
                RETURN found || ' in dbname';
            END IF;
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._connstr_secret(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._connstr_secret(text) IS
    'Internal: the secret a libpq connect string holds (password, sslpassword, ..., also in a dbname that is itself a connect string), NULL if none; 22023 if libpq cannot parse it. For add_node() and the CHECK on shardid.nodes.';
