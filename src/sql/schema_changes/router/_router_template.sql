-- The router side of apply_ddl() and run_on_shards() (fn names it in the
-- messages): refuses NULL arguments (22004), a caller who may not read
-- shardid.nodes (42501: both connect to every node as it says, so they
-- are for administrators; what names what the caller may not do), a
-- router without dblink (_dblink_schema) and a template name that is not
-- schema-qualified (22023: the router has no search_path of the nodes to
-- resolve it with). Returns the template's schema and name, as
-- parse_ident() reads them.
CREATE OR REPLACE FUNCTION shardid_internal._router_template(fn text, what text, template text, command text) RETURNS text[]
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    parts text[];
BEGIN
    IF template IS NULL OR command IS NULL THEN
        RAISE EXCEPTION '% arguments must not be NULL', fn USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF NOT has_table_privilege('shardid.nodes', 'SELECT') THEN
        RAISE EXCEPTION 'permission denied to % on the nodes', what
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = format('On a router, %s connects to every node as shardid.nodes says: it is for administrators.', fn);
    END IF;
    PERFORM shardid_internal._dblink_schema();
    parts := parse_ident(template);
    IF cardinality(parts) <> 2 THEN
        RAISE EXCEPTION 'template "%" must be schema-qualified on a router', template
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'The router has no search_path of the nodes to resolve it with.';
    END IF;
    RETURN parts;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._router_template(text, text, text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._router_template(text, text, text, text) IS
    'Router, apply_ddl() and run_on_shards(): refuses NULL arguments, a caller who may not read shardid.nodes, no dblink, and a template name that is not schema-qualified; returns the template''s schema and name.';
