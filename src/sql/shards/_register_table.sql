-- Checks a template and registers the sharded table made from it, for
-- create_table() and create_table_proc(), before any shard gets a table.
-- With resume, a table already registered from the same template and id
-- column is accepted as it is: create_table_proc() re-run after an
-- interruption goes on with the shards that lack it. Returns the
-- registration; the caller holds the registry lock until it commits.
CREATE OR REPLACE FUNCTION shardid_internal._register_table(caller text, template regclass, id_column name, resume boolean)
    RETURNS shardid.sharded_tables
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c       pg_catalog.pg_class;
    nsp     name;
    att     pg_catalog.pg_attribute;
    clash   text;
    t       shardid.sharded_tables;
BEGIN
    SELECT * INTO c FROM pg_catalog.pg_class WHERE oid = template;
    SELECT n.nspname INTO nsp FROM pg_catalog.pg_namespace AS n WHERE n.oid = c.relnamespace;
    IF c.relkind IS DISTINCT FROM 'r' THEN
        RAISE EXCEPTION '"%" is not an ordinary table', template
            USING ERRCODE = 'wrong_object_type',
                  DETAIL = 'A sharded table is created LIKE a template, which must be an ordinary (not partitioned, foreign or view) table.';
    END IF;
    IF c.relpersistence = 't' THEN
        RAISE EXCEPTION 'template "%" is a temporary table', template
            USING ERRCODE = 'wrong_object_type',
                  DETAIL = 'The registry outlives the session; use a permanent template.';
    END IF;
    IF EXISTS (SELECT FROM shardid.shard_registry AS s WHERE s.schema_name = nsp) THEN
        RAISE EXCEPTION 'template "%" lies in the schema of a shard', template
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Keep templates outside shard schemas, e.g. in public.';
    END IF;
    SELECT * INTO att FROM pg_catalog.pg_attribute AS a
        WHERE a.attrelid = template AND a.attname = id_column
          AND a.attnum > 0 AND NOT a.attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'column "%" of template "%" does not exist', id_column, template
            USING ERRCODE = 'undefined_column';
    END IF;
    IF att.atttypid <> 'pg_catalog.int8'::regtype THEN
        RAISE EXCEPTION 'column "%" of template "%" is %, not bigint', id_column, template,
                pg_catalog.format_type(att.atttypid, att.atttypmod)
            USING ERRCODE = 'datatype_mismatch',
                  DETAIL = 'IDs are 64-bit.';
    END IF;
    IF att.attgenerated <> '' THEN
        RAISE EXCEPTION 'column "%" of template "%" is a generated column', id_column, template
            USING ERRCODE = 'invalid_column_definition';
    END IF;
    PERFORM shardid_internal._require_registry_privileges('create sharded tables', false);
    LOCK TABLE shardid.shard_registry, shardid.sharded_tables IN SHARE ROW EXCLUSIVE MODE;
    SELECT * INTO t FROM shardid.sharded_tables AS s WHERE s.table_name = c.relname;
    IF FOUND AND NOT (resume AND t.template_schema = nsp
                      AND t.template_name = c.relname
                      AND t.id_column = _register_table.id_column) THEN
        RAISE EXCEPTION 'sharded table "%" already exists', c.relname
            USING ERRCODE = 'duplicate_table',
                  DETAIL = pg_catalog.format('It was created from template %I.%I with id column %I.',
                                             t.template_schema, t.template_name, t.id_column);
    END IF;
    -- Every shard must be able to take the table before any gets it.
    SELECT pg_catalog.string_agg(pg_catalog.format('%I', s.schema_name), ', ' ORDER BY s.shard) INTO clash
        FROM shardid.shard_registry AS s
        WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_namespace AS n WHERE n.nspname = s.schema_name);
    IF clash IS NOT NULL THEN
        RAISE EXCEPTION 'registered shard schemas do not exist: %', clash
            USING ERRCODE = 'invalid_schema_name',
                  HINT = 'Unregister dropped shards with shardid.detach_shard().';
    END IF;
    IF t.table_name IS NULL THEN
        SELECT pg_catalog.string_agg(pg_catalog.format('%I.%I', s.schema_name, c.relname), ', ' ORDER BY s.shard) INTO clash
            FROM shardid.shard_registry AS s
            WHERE EXISTS (SELECT FROM pg_catalog.pg_class AS x JOIN pg_catalog.pg_namespace AS n ON n.oid = x.relnamespace
                           WHERE n.nspname = s.schema_name AND x.relname = c.relname);
        IF clash IS NOT NULL THEN
            RAISE EXCEPTION 'relations already exist: %', clash
                USING ERRCODE = 'duplicate_table',
                      DETAIL = 'No shard table was created.';
        END IF;
    END IF;
    -- Only the shards that will get the table (all of them, unless resuming).
    SELECT pg_catalog.string_agg(pg_catalog.format('%I', s.schema_name), ', ' ORDER BY s.shard) INTO clash
        FROM shardid.shard_registry AS s
        WHERE NOT pg_catalog.has_schema_privilege(s.schema_name, 'CREATE')
          AND NOT EXISTS (SELECT FROM pg_catalog.pg_class AS x JOIN pg_catalog.pg_namespace AS n ON n.oid = x.relnamespace
                           WHERE n.nspname = s.schema_name AND x.relname = c.relname);
    IF clash IS NOT NULL THEN
        RAISE EXCEPTION 'permission denied to create tables in shard schemas: %', clash
            USING ERRCODE = 'insufficient_privilege',
                  HINT = pg_catalog.format('Run %s as the role that created the shards, or grant it CREATE on them.', caller);
    END IF;

    IF t.table_name IS NULL THEN
        INSERT INTO shardid.sharded_tables AS s (table_name, template_schema, template_name, id_column, position)
            SELECT c.relname, nsp, c.relname, _register_table.id_column,
                   COALESCE(max(x.position), 0) + 1
              FROM shardid.sharded_tables AS x
            RETURNING s.* INTO t;
    END IF;
    RETURN t;
END
$$;

COMMENT ON FUNCTION shardid_internal._register_table(text, regclass, name, boolean) IS
    'Checks a template and registers its sharded table (or, resuming, accepts the same registration), before any shard gets the table.';
