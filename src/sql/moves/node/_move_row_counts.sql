-- Node, offline move: the exact row count of every table of a schema, to
-- check that the copy made while the shard was frozen is complete. Each
-- table is counted as its owner (_run_as_owner): reading a shard's rows is
-- the owner's business, never the superuser's.
CREATE OR REPLACE FUNCTION shardid_internal._move_row_counts(schema_name name) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t   record;
    out jsonb := '{}';
BEGIN
    FOR t IN SELECT c.relname, c.relowner FROM pg_class AS c JOIN pg_namespace AS s ON s.oid = c.relnamespace
              WHERE s.nspname = schema_name AND c.relkind = 'r' ORDER BY c.relname LOOP
        out := out || jsonb_build_object(t.relname, shardid_internal._run_as_owner(t.relowner::regrole,
                          format('SELECT count(*) FROM ONLY %I.%I', schema_name, t.relname))::bigint);
    END LOOP;
    RETURN out;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_row_counts(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_row_counts(name) IS
    'Node, offline moves: exact row counts of the tables of a schema, each counted as its owner.';
