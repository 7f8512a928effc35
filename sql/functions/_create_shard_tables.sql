-- Creates the sharded tables of one shard (all of them, or only those it
-- lacks). Callers have checked the shard, its schema and the templates.
CREATE OR REPLACE FUNCTION shardid._create_shard_tables(shard integer, only_missing boolean DEFAULT false)
    RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r      shardid.shard_registry;
    t      shardid.sharded_tables;
    seqtxt text;
    made   integer := 0;
BEGIN
    SELECT * INTO STRICT r FROM shardid.shard_registry AS s
        WHERE s.shard OPERATOR(pg_catalog.=) _create_shard_tables.shard;
    seqtxt := pg_catalog.format('%I.%I', r.sequence_schema, r.sequence_name);
    FOR t IN SELECT * FROM shardid.sharded_tables ORDER BY position LOOP
        IF only_missing AND pg_catalog.to_regclass(pg_catalog.format('%I.%I', r.schema_name, t.table_name)) IS NOT NULL THEN
            CONTINUE;
        END IF;
        EXECUTE pg_catalog.format('CREATE TABLE %I.%I (LIKE %I.%I INCLUDING ALL)',
                                  r.schema_name, t.table_name, t.template_schema, t.template_name);
        -- LIKE copies an identity column; the generator replaces it.
        IF EXISTS (SELECT FROM pg_catalog.pg_attribute AS a
                    WHERE a.attrelid OPERATOR(pg_catalog.=)
                              pg_catalog.format('%I.%I', r.schema_name, t.table_name)::regclass
                      AND a.attname OPERATOR(pg_catalog.=) t.id_column
                      AND a.attidentity OPERATOR(pg_catalog.<>) '') THEN
            EXECUTE pg_catalog.format('ALTER TABLE %I.%I ALTER COLUMN %I DROP IDENTITY',
                                      r.schema_name, t.table_name, t.id_column);
        END IF;
        EXECUTE pg_catalog.format('ALTER TABLE %I.%I ALTER COLUMN %I SET DEFAULT shardid.next_id(%s, %L::regclass)',
                                  r.schema_name, t.table_name, t.id_column, r.shard, seqtxt);
        made := made OPERATOR(pg_catalog.+) 1;
    END LOOP;
    RETURN made;
END
$$;

COMMENT ON FUNCTION shardid._create_shard_tables(integer, boolean) IS
    'Creates the registered sharded tables (all, or only the missing ones) in one shard.';
