-- Node, offline move: the exact row count of every table of a schema, to
-- check that the copy made while the shard was frozen is complete.
CREATE OR REPLACE FUNCTION shardid._move_row_counts(schema_name name) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t   record;
    n   bigint;
    out jsonb := '{}';
BEGIN
    FOR t IN SELECT c.relname FROM pg_class AS c JOIN pg_namespace AS s ON s.oid = c.relnamespace
              WHERE s.nspname = schema_name AND c.relkind = 'r' ORDER BY c.relname LOOP
        EXECUTE format('SELECT count(*) FROM ONLY %I.%I', schema_name, t.relname) INTO n;
        out := out || jsonb_build_object(t.relname, n);
    END LOOP;
    RETURN out;
END
$$;

REVOKE ALL ON FUNCTION shardid._move_row_counts(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_row_counts(name) IS
    'Node, offline moves: exact row counts of the tables of a schema.';
