-- Node: undoes freeze_shard_tables() (abort of a move). Returns the number
-- of triggers dropped.
CREATE OR REPLACE FUNCTION shardid.thaw_shard_tables(schema_name name) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t record;
    n integer := 0;
BEGIN
    FOR t IN SELECT c.relname FROM pg_catalog.pg_class AS c
               JOIN pg_catalog.pg_trigger AS g ON g.tgrelid OPERATOR(pg_catalog.=) c.oid
              WHERE c.relnamespace OPERATOR(pg_catalog.=)
                    (SELECT x.oid FROM pg_catalog.pg_namespace AS x WHERE x.nspname OPERATOR(pg_catalog.=) thaw_shard_tables.schema_name)
                AND g.tgname OPERATOR(pg_catalog.=) 'shardid_move_frozen' LOOP
        EXECUTE pg_catalog.format('DROP TRIGGER shardid_move_frozen ON %I.%I', schema_name, t.relname);
        n := n OPERATOR(pg_catalog.+) 1;
    END LOOP;
    RETURN n;
END
$$;

REVOKE ALL ON FUNCTION shardid.thaw_shard_tables(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid.thaw_shard_tables(name) IS
    'Node: drops the shardid_move_frozen triggers of a schema (abort of a move); returns how many.';
