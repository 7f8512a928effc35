-- Node, target of a move, when it has only the extension (no sharded table
-- registered): makes the source's templates here (templates: the source's
-- _template_ddl()) and registers them as create_table() would, at the
-- source's positions, so that the shard's copy can be made from them.
-- Everything is checked before anything is made: each template's schema
-- and owner exist here, and no relation has its name. The tables, then
-- their constraints and indexes, then the foreign keys between them are
-- made as the template's owner in a security-restricted operation
-- (_run_as_owner): a default or a domain the statements name runs with the
-- owner's rights, never the superuser's. The constraint and index
-- statements are read by the parser first (_ddl_command): one ALTER TABLE
-- or CREATE INDEX of that template each (foreign keys, which that parser
-- refuses for apply_ddl(), are not). Returns the number of templates
-- made. The caller's transaction undoes all of it if the move's copy fails.
CREATE OR REPLACE FUNCTION shardid_internal._create_templates(templates jsonb) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t       jsonb;
    s       text;
    part    text;
    chk     record;
    made    integer := 0;
BEGIN
    FOR t IN SELECT x FROM jsonb_array_elements(templates) AS x LOOP
        IF t ? 'unsupported' THEN
            RAISE EXCEPTION 'the template %.% of sharded table % is %: a move cannot make it on a node without templates',
                    quote_ident(t->>'schema'), quote_ident(t->>'name'), quote_ident(t->>'table_name'), t->>'unsupported'
                USING ERRCODE = 'feature_not_supported',
                      HINT = 'Make the templates on the target as on the source and register them there (SELECT shardid.create_table(...)), then move again.';
        END IF;
        IF NOT EXISTS (SELECT FROM pg_namespace AS n WHERE n.nspname = t->>'schema') THEN
            RAISE EXCEPTION 'schema % of the template of sharded table % does not exist here', quote_ident(t->>'schema'), quote_ident(t->>'table_name')
                USING ERRCODE = 'invalid_schema_name',
                      HINT = 'Create it here as on the source node: a move makes the templates of a node that has none, in their schemas.';
        END IF;
        IF NOT EXISTS (SELECT FROM pg_roles AS r WHERE r.rolname = t->>'owner') THEN
            RAISE EXCEPTION 'role %, owner of the template of sharded table %, does not exist here', quote_ident(t->>'owner'), quote_ident(t->>'table_name')
                USING ERRCODE = 'undefined_object',
                      HINT = 'Create it here first: a move makes the templates as their owners.';
        END IF;
        IF to_regclass(format('%I.%I', t->>'schema', t->>'name')) IS NOT NULL THEN
            RAISE EXCEPTION 'relation %.% exists here but is not the template of a sharded table', quote_ident(t->>'schema'), quote_ident(t->>'name')
                USING ERRCODE = 'duplicate_table',
                      HINT = format('If it is the template, register it here (SELECT shardid.create_table(%L, %L);), else rename it; then move again.',
                                    format('%I.%I', t->>'schema', t->>'name'), t->>'id_column');
        END IF;
    END LOOP;

    FOR t IN SELECT x FROM jsonb_array_elements(templates) AS x LOOP
        PERFORM shardid_internal._run_as_owner(quote_ident(t->>'owner')::regrole, t->>'create');
    END LOOP;
    FOREACH part IN ARRAY ARRAY['constraints', 'indexes', 'foreign_keys'] LOOP
        FOR t IN SELECT x FROM jsonb_array_elements(templates) AS x LOOP
            FOR s IN SELECT x FROM jsonb_array_elements_text(t->part) AS x LOOP
                -- apply_ddl()'s parser refuses foreign keys (shards have none)
                IF part <> 'foreign_keys' THEN
                    SELECT * INTO chk FROM shardid_internal._ddl_command(s, t->>'schema', t->>'name') AS d;
                END IF;
                IF part <> 'foreign_keys' AND (chk.kind NOT IN ('ALTER TABLE', 'CREATE INDEX') OR chk.concurrent) THEN
                    RAISE EXCEPTION 'statement of the template %.% is not an ALTER TABLE or CREATE INDEX: %',
                            quote_ident(t->>'schema'), quote_ident(t->>'name'), s
                        USING ERRCODE = 'invalid_parameter_value';
                END IF;
                PERFORM shardid_internal._run_as_owner(quote_ident(t->>'owner')::regrole, s);
            END LOOP;
        END LOOP;
    END LOOP;

    FOR t IN SELECT x FROM jsonb_array_elements(templates) AS x ORDER BY (x->>'position')::integer LOOP
        PERFORM shardid.create_table(format('%I.%I', t->>'schema', t->>'name')::regclass, (t->>'id_column')::name);
        made := made + 1;
    END LOOP;
    -- the source's positions (a dropped table leaves a gap there), the
    -- highest first: each moves up past every position still taken
    FOR t IN SELECT x FROM jsonb_array_elements(templates) AS x ORDER BY (x->>'position')::integer DESC LOOP
        UPDATE shardid.sharded_tables AS st SET position = (t->>'position')::integer
         WHERE st.table_name = t->>'table_name' AND st.position <> (t->>'position')::integer;
    END LOOP;
    RETURN made;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._create_templates(jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._create_templates(jsonb) IS
    'Node, target of a move: makes the source''s templates (its _template_ddl()) on a node that has none, as their owners, and registers them at the source''s positions; returns how many.';
