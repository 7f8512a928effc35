-- The statement apply_ddl() runs on one table: the command with each %s
-- replaced by the table's schema-qualified name (%I.%I) and %% by %. A
-- command without %s, or with any other % sequence, is refused (22023).
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_statement(command text, schema_name name, table_name name)
    RETURNS text
    LANGUAGE plpgsql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    parts text[];
BEGIN
    SELECT array_agg(m[1] ORDER BY n) INTO parts
        FROM regexp_matches(command, '%%|%s|%|[^%]+', 'g') WITH ORDINALITY AS x(m, n);
    IF NOT '%s' = ANY (parts) THEN
        RAISE EXCEPTION 'apply_ddl() command has no %%s: %', command
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = '%s stands for each table''s schema-qualified name (the template, then each shard''s copy).',
                  HINT = 'For example: ALTER TABLE %s ADD COLUMN mood text';
    END IF;
    IF '%' = ANY (parts) THEN
        RAISE EXCEPTION 'apply_ddl() command has a %% that is neither %%s nor %%%%: %', command
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Write a literal % as %%.';
    END IF;
    RETURN array_to_string(ARRAY(SELECT CASE p WHEN '%s' THEN format('%I.%I', schema_name, table_name)
                                               WHEN '%%' THEN '%' ELSE p END
                                   FROM unnest(parts) WITH ORDINALITY AS u(p, n) ORDER BY n), '');
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_statement(text, name, name) IS
    'apply_ddl(): the command with each %s replaced by schema.table (quoted) and %% by %; 22023 without %s or with another % sequence.';
