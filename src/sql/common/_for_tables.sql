-- Node: runs one statement for each table of a schema whose relkind is in
-- kinds (any relation with kinds NULL) and, if trigger is given, that has
-- a trigger of that name, in name order; returns how many. The statement is
-- format(sql, schema, table, args[1], args[2], ...): names go in with %I,
-- values with %L, never pasted into the SQL text.
CREATE OR REPLACE FUNCTION shardid_internal._for_tables(schema_name name, kinds "char"[], sql text, args text[] DEFAULT '{}',
                                              trigger name DEFAULT NULL)
    RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t record;
    n integer := 0;
BEGIN
    FOR t IN SELECT c.relname FROM pg_class AS c JOIN pg_namespace AS s ON s.oid = c.relnamespace
              WHERE s.nspname = _for_tables.schema_name AND (kinds IS NULL OR c.relkind = ANY (kinds))
                AND (trigger IS NULL OR EXISTS (SELECT FROM pg_trigger AS g WHERE g.tgrelid = c.oid AND g.tgname = trigger))
              ORDER BY c.relname LOOP
        EXECUTE format(sql, VARIADIC ARRAY[schema_name, t.relname]::text[] || args);
        n := n + 1;
    END LOOP;
    RETURN n;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._for_tables(name, "char"[], text, text[], name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._for_tables(name, "char"[], text, text[], name) IS
    'Node: runs format(sql, schema, table, args[1], ...) for each table of a schema of the given relkinds (and with the given trigger), in name order; returns how many.';
