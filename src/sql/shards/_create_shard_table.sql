-- Creates one sharded table in one shard: LIKE its template, the id column
-- defaulting to the shard's generator. Callers have checked the shard, its
-- schema and the template, and hold the registry lock. Its indexes take the
-- template's names (LIKE lets PostgreSQL choose). The template carries
-- every change apply_ddl() has made to it, so the new table is recorded as
-- having each unfinished one (a re-CALL must not run it there again).
-- It gets its template's privileges, and the shard's schema and generator
-- the USAGE they need (_align_privileges(): the templates' ACLs are the
-- record of what grant_shards() and run_on_shards() granted).
CREATE OR REPLACE FUNCTION shardid_internal._create_shard_table(r shardid.shard_registry, t shardid.sharded_tables)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    EXECUTE pg_catalog.format('CREATE TABLE %I.%I (LIKE %I.%I INCLUDING ALL)',
                              r.schema_name, t.table_name, t.template_schema, t.template_name);
    -- LIKE copies an identity column; the generator replaces it.
    IF EXISTS (SELECT FROM pg_catalog.pg_attribute AS a
                WHERE a.attrelid =
                          pg_catalog.format('%I.%I', r.schema_name, t.table_name)::regclass
                  AND a.attname = t.id_column
                  AND a.attidentity <> '') THEN
        EXECUTE pg_catalog.format('ALTER TABLE %I.%I ALTER COLUMN %I DROP IDENTITY',
                                  r.schema_name, t.table_name, t.id_column);
    END IF;
    EXECUTE pg_catalog.format('ALTER TABLE %I.%I ALTER COLUMN %I SET DEFAULT shardid.next_id(%s, %L::regclass)',
                              r.schema_name, t.table_name, t.id_column, r.shard,
                              pg_catalog.format('%I.%I', r.sequence_schema, r.sequence_name));
    -- LIKE names the copies of the template's indexes; they keep its names
    PERFORM shardid_internal._name_indexes(pg_catalog.format('%I.%I', r.schema_name, t.table_name)::regclass,
                                  shardid_internal._index_list(pg_catalog.format('%I.%I', t.template_schema, t.template_name)::regclass));
    -- privileges follow the shards: the template's grants, and the USAGE
    -- on the schema and generator they need, as their owners (the fence);
    -- a template that grants nothing has nothing to give (8192 shards are
    -- made without a look at the others)
    IF EXISTS (SELECT FROM pg_catalog.pg_class AS c
                WHERE c.oid = pg_catalog.format('%I.%I', t.template_schema, t.template_name)::regclass AND c.relacl IS NOT NULL)
       OR EXISTS (SELECT FROM pg_catalog.pg_attribute AS a
                   WHERE a.attrelid = pg_catalog.format('%I.%I', t.template_schema, t.template_name)::regclass AND a.attacl IS NOT NULL) THEN
        PERFORM shardid_internal._align_privileges(ARRAY[r.shard], t.table_name, false, false);
    END IF;
    IF EXISTS (SELECT FROM shardid.ddl_changes AS c WHERE c.table_name = t.table_name AND c.finished_at IS NULL) THEN
        INSERT INTO shardid.ddl_applied (change_id, target, shard, done)
            SELECT c.change_id, r.schema_name, r.shard, true
              FROM shardid.ddl_changes AS c
              JOIN shardid.ddl_applied AS a ON a.change_id = c.change_id AND a.target = 'template' AND a.done
             WHERE c.table_name = t.table_name AND c.finished_at IS NULL AND NOT c.on_nodes
            ON CONFLICT (change_id, target) DO UPDATE SET done = true;
    END IF;
END
$$;

COMMENT ON FUNCTION shardid_internal._create_shard_table(shardid.shard_registry, shardid.sharded_tables) IS
    'Creates one sharded table in one shard, LIKE its template (its indexes under the template''s names), id column DEFAULT shardid.next_id(shard, shard''s generator).';
