-- Router: a node's connect string as the router uses it, with the
-- search_path of the session pinned to pg_catalog, pg_temp from its first
-- statement (options, last so it wins; add_node() refuses node connect
-- strings that set options, or a dbname that is a connect string, so
-- nothing overrides it): no statement the router sends to a node can
-- reach a function or operator a role of that node put in a schema of its
-- default search_path (public, "$user").
CREATE OR REPLACE FUNCTION shardid_internal._pinned_connstr(connstr text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT connstr || ' options=''-c search_path=pg_catalog,pg_temp'''
$$;

REVOKE ALL ON FUNCTION shardid_internal._pinned_connstr(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._pinned_connstr(text) IS
    'Router: a node connect string with options=''-c search_path=pg_catalog,pg_temp'' appended, as every router session to a node uses it.';
