-- Node, move cut-over: every table of the shard's schema gets the trigger
-- shardid_move_frozen, which refuses writes. Waits for writes in flight
-- (the caller sets lock_timeout). Returns the number of tables.
CREATE OR REPLACE FUNCTION shardid.freeze_shard_tables(schema_name name, shard integer, target text) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t record;
    n integer := 0;
BEGIN
    FOR t IN SELECT c.oid, c.relname FROM pg_catalog.pg_class AS c
              WHERE c.relnamespace OPERATOR(pg_catalog.=)
                    (SELECT x.oid FROM pg_catalog.pg_namespace AS x WHERE x.nspname OPERATOR(pg_catalog.=) freeze_shard_tables.schema_name)
                AND c.relkind OPERATOR(pg_catalog.=) ANY (ARRAY['r', 'p']::"char"[])
              ORDER BY c.relname LOOP
        n := n OPERATOR(pg_catalog.+) 1;
        CONTINUE WHEN EXISTS (SELECT FROM pg_catalog.pg_trigger AS g
                               WHERE g.tgrelid OPERATOR(pg_catalog.=) t.oid AND g.tgname OPERATOR(pg_catalog.=) 'shardid_move_frozen');
        EXECUTE pg_catalog.format('CREATE TRIGGER shardid_move_frozen BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON %I.%I
                                   FOR EACH STATEMENT EXECUTE FUNCTION shardid._refuse_frozen_write(%L, %L)',
                                  schema_name, t.relname, shard, target);
    END LOOP;
    RETURN n;
END
$$;

REVOKE ALL ON FUNCTION shardid.freeze_shard_tables(name, integer, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid.freeze_shard_tables(name, integer, text) IS
    'Node, move cut-over: puts trigger shardid_move_frozen on every table of the schema (writes fail with 25006); returns the number of tables.';
