-- Gives an object exactly the privileges of a list made by _acl_items()
-- on another node: everything is revoked (also from the owner), then each
-- item granted, by its grantor (grants the owner made first, so a grant
-- option exists before it is used): a grant of another grantor than the
-- owner runs as that role (_run_as_owner), since a superuser's own GRANT
-- is recorded as the owner's. Run by a superuser. column: the column's
-- privileges instead of the object's.
CREATE OR REPLACE FUNCTION shardid_internal._apply_acl(kind text, object text, owner name, items jsonb, column_name name DEFAULT NULL)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    i    jsonb;
    sql  text;
    cols text := CASE WHEN column_name IS NULL THEN '' ELSE format(' (%I)', column_name) END;
BEGIN
    IF kind NOT IN ('SCHEMA', 'SEQUENCE', 'TABLE') THEN
        RAISE EXCEPTION 'unexpected object kind %', kind USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF column_name IS NULL THEN
        EXECUTE format('REVOKE ALL ON %s %s FROM PUBLIC, %I', kind, object, owner);
    END IF;
    FOR i IN SELECT x FROM jsonb_array_elements(items) AS x
              ORDER BY x->>'grantor' IS DISTINCT FROM owner, x->>'grantor', x->>'grantee' LOOP
        IF i->>'privilege' !~ '^[A-Z ]+$' THEN
            RAISE EXCEPTION 'unexpected privilege %', i->>'privilege' USING ERRCODE = 'invalid_parameter_value';
        END IF;
        sql := format('GRANT %s%s ON %s %s TO %s%s', i->>'privilege', cols, kind, object,
                      COALESCE(quote_ident(i->>'grantee'), 'PUBLIC'),
                      CASE WHEN (i->>'grantable')::boolean THEN ' WITH GRANT OPTION' ELSE '' END);
        IF i->>'grantor' IS DISTINCT FROM owner THEN
            PERFORM shardid_internal._run_as_owner(quote_ident(i->>'grantor')::regrole, sql);
        ELSE
            EXECUTE sql;
        END IF;
    END LOOP;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._apply_acl(text, text, name, jsonb, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_acl(text, text, name, jsonb, name) IS
    'Internal, moves: gives a schema, sequence, table or column exactly the privileges listed by _acl_items() on another node.';
