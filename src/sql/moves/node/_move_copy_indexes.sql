-- Node, target of a move: the source's indexes on the copy (indexes: per
-- table, _index_list() on the source; relations: the source's owners). The
-- copy's indexes, made from the templates, take the source's names where
-- they are the same index (_name_indexes), and an index the shard has
-- beyond its templates (a DBA's CREATE INDEX on that shard) is made here:
-- only one named CREATE INDEX of that table (_ddl_command reads the
-- source's pg_get_indexdef, the schema and table given apart), run as the
-- table's owner in a security-restricted operation (_run_as_owner). Indexes of
-- constraints, and names taken here, are left to the comparison. Returns
-- the names of the indexes made.
CREATE OR REPLACE FUNCTION shardid_internal._move_copy_indexes(schema_name name, indexes jsonb, relations jsonb) RETURNS text[]
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t    record;
    e    jsonb;
    rel  regclass;
    chk  record;
    made text[] := '{}';
BEGIN
    FOR t IN SELECT x.key AS relname, x.value AS list FROM jsonb_each(COALESCE(indexes, '{}')) AS x ORDER BY x.key LOOP
        rel := to_regclass(format('%I.%I', schema_name, t.relname));
        CONTINUE WHEN rel IS NULL OR relations->t.relname->>'owner' IS NULL;
        PERFORM shardid_internal._name_indexes(rel, t.list);
        FOR e IN SELECT x FROM jsonb_array_elements(t.list) AS x LOOP
            CONTINUE WHEN (e->>'constraint')::boolean OR to_regclass(format('%I.%I', schema_name, e->>'name')) IS NOT NULL;
            SELECT * INTO chk FROM shardid_internal._ddl_command(e->>'def', schema_name, t.relname) AS d;
            IF chk.kind <> 'CREATE INDEX' OR chk.concurrent THEN
                RAISE EXCEPTION 'index % of shard schema % is not a CREATE INDEX: %', quote_ident(e->>'name'), quote_ident(schema_name), e->>'def'
                    USING ERRCODE = 'invalid_parameter_value';
            END IF;
            PERFORM shardid_internal._run_as_owner(quote_ident(relations->t.relname->>'owner')::regrole, e->>'def');
            made := made || (e->>'name');
        END LOOP;
    END LOOP;
    RETURN made;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_copy_indexes(name, jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_copy_indexes(name, jsonb, jsonb) IS
    'Node, target of a move: gives the copy''s indexes the source''s names and makes the indexes the source shard has beyond its templates, as the table''s owner; returns the names made.';
