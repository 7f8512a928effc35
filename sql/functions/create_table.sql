CREATE OR REPLACE FUNCTION shardid.create_table(template regclass, id_column name DEFAULT 'id') RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c       pg_catalog.pg_class;
    nsp     name;
    att     pg_catalog.pg_attribute;
    clash   text;
    made    integer := 0;
    r       shardid.shard_registry;
BEGIN
    IF template IS NULL OR id_column IS NULL THEN
        RAISE EXCEPTION 'create_table() arguments must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    SELECT * INTO c FROM pg_catalog.pg_class WHERE oid OPERATOR(pg_catalog.=) template;
    SELECT n.nspname INTO nsp FROM pg_catalog.pg_namespace AS n WHERE n.oid OPERATOR(pg_catalog.=) c.relnamespace;
    IF c.relkind IS DISTINCT FROM 'r' THEN
        RAISE EXCEPTION '"%" is not an ordinary table', template
            USING ERRCODE = 'wrong_object_type',
                  DETAIL = 'A sharded table is created LIKE a template, which must be an ordinary (not partitioned, foreign or view) table.';
    END IF;
    IF c.relpersistence OPERATOR(pg_catalog.=) 't' THEN
        RAISE EXCEPTION 'template "%" is a temporary table', template
            USING ERRCODE = 'wrong_object_type',
                  DETAIL = 'The registry outlives the session; use a permanent template.';
    END IF;
    IF EXISTS (SELECT FROM shardid.shard_registry AS s WHERE s.schema_name OPERATOR(pg_catalog.=) nsp) THEN
        RAISE EXCEPTION 'template "%" lies in the schema of a shard', template
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Keep templates outside shard schemas, e.g. in public.';
    END IF;
    SELECT * INTO att FROM pg_catalog.pg_attribute AS a
        WHERE a.attrelid OPERATOR(pg_catalog.=) template AND a.attname OPERATOR(pg_catalog.=) id_column
          AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'column "%" of template "%" does not exist', id_column, template
            USING ERRCODE = 'undefined_column';
    END IF;
    IF att.atttypid OPERATOR(pg_catalog.<>) 'pg_catalog.int8'::regtype THEN
        RAISE EXCEPTION 'column "%" of template "%" is %, not bigint', id_column, template,
                pg_catalog.format_type(att.atttypid, att.atttypmod)
            USING ERRCODE = 'datatype_mismatch',
                  DETAIL = 'IDs are 64-bit.';
    END IF;
    IF att.attgenerated OPERATOR(pg_catalog.<>) '' THEN
        RAISE EXCEPTION 'column "%" of template "%" is a generated column', id_column, template
            USING ERRCODE = 'invalid_column_definition';
    END IF;
    PERFORM shardid._check_registry_privileges('create sharded tables', false);
    LOCK TABLE shardid.shard_registry, shardid.sharded_tables IN SHARE ROW EXCLUSIVE MODE;
    IF EXISTS (SELECT FROM shardid.sharded_tables AS t WHERE t.table_name OPERATOR(pg_catalog.=) c.relname) THEN
        RAISE EXCEPTION 'sharded table "%" already exists', c.relname
            USING ERRCODE = 'duplicate_table',
                  DETAIL = (SELECT pg_catalog.format('It was created from template %I.%I.', t.template_schema, t.template_name)
                              FROM shardid.sharded_tables AS t WHERE t.table_name OPERATOR(pg_catalog.=) c.relname);
    END IF;
    -- Every shard must be able to take the table before any gets it.
    SELECT pg_catalog.string_agg(pg_catalog.format('%I', s.schema_name), ', ' ORDER BY s.shard) INTO clash
        FROM shardid.shard_registry AS s
        WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_namespace AS n WHERE n.nspname OPERATOR(pg_catalog.=) s.schema_name);
    IF clash IS NOT NULL THEN
        RAISE EXCEPTION 'registered shard schemas do not exist: %', clash
            USING ERRCODE = 'invalid_schema_name',
                  HINT = 'Unregister dropped shards with shardid.detach_shard().';
    END IF;
    SELECT pg_catalog.string_agg(pg_catalog.format('%I.%I', s.schema_name, c.relname), ', ' ORDER BY s.shard) INTO clash
        FROM shardid.shard_registry AS s
        WHERE EXISTS (SELECT FROM pg_catalog.pg_class AS x JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) x.relnamespace
                       WHERE n.nspname OPERATOR(pg_catalog.=) s.schema_name AND x.relname OPERATOR(pg_catalog.=) c.relname);
    IF clash IS NOT NULL THEN
        RAISE EXCEPTION 'relations already exist: %', clash
            USING ERRCODE = 'duplicate_table',
                  DETAIL = 'No shard table was created.';
    END IF;
    SELECT pg_catalog.string_agg(pg_catalog.format('%I', s.schema_name), ', ' ORDER BY s.shard) INTO clash
        FROM shardid.shard_registry AS s
        WHERE NOT pg_catalog.has_schema_privilege(s.schema_name, 'CREATE');
    IF clash IS NOT NULL THEN
        RAISE EXCEPTION 'permission denied to create tables in shard schemas: %', clash
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'Run create_table() as the role that created the shards, or grant it CREATE on them.';
    END IF;

    INSERT INTO shardid.sharded_tables (table_name, template_schema, template_name, id_column, position)
        SELECT c.relname, nsp, c.relname, create_table.id_column,
               COALESCE(max(t.position), 0) OPERATOR(pg_catalog.+) 1
          FROM shardid.sharded_tables AS t;
    FOR r IN SELECT * FROM shardid.shard_registry ORDER BY shard LOOP
        EXECUTE pg_catalog.format('CREATE TABLE %I.%I (LIKE %I.%I INCLUDING ALL)',
                                  r.schema_name, c.relname, nsp, c.relname);
        IF att.attidentity OPERATOR(pg_catalog.<>) '' THEN
            EXECUTE pg_catalog.format('ALTER TABLE %I.%I ALTER COLUMN %I DROP IDENTITY',
                                      r.schema_name, c.relname, id_column);
        END IF;
        EXECUTE pg_catalog.format('ALTER TABLE %I.%I ALTER COLUMN %I SET DEFAULT shardid.next_id(%s, %L::regclass)',
                                  r.schema_name, c.relname, id_column, r.shard,
                                  pg_catalog.format('%I.%I', r.sequence_schema, r.sequence_name));
        made := made OPERATOR(pg_catalog.+) 1;
    END LOOP;
    RETURN made;
END
$$;

COMMENT ON FUNCTION shardid.create_table(regclass, name) IS
    'Creates <shard schema>.<template name> (LIKE template INCLUDING ALL) in every shard, id_column DEFAULT shardid.next_id(shard, shard''s id_seq); shards created later get it too. Returns the number of tables created.';
