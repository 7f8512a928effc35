-- Node, target of a move: creates the shard the way create_shard() would,
-- from this node's templates (shardid.sharded_tables; on a node with only
-- the extension, first the source's, by _create_templates), under the source's
-- schema and generator names, registers it, and gives the schema, the
-- generator and the tables the owners, privileges and replica identities
-- (not templates' matters: set per shard) they have on the source (source: _move_source_facts() there),
-- and the source's index names and own indexes (_move_copy_indexes). Returns the copy's
-- definition, for the router to compare with the source's. dry_run makes
-- and measures it, then undoes it (the move's checks, before anything
-- changes). Called again once the copy exists, it returns its definition:
-- the copy is made in one transaction, so an existing registration of
-- this shard in this schema is the move's own. Holds the registry's lock
-- (SHARE ROW EXCLUSIVE on shard_registry and sharded_tables), as
-- attach_shard() and drop_retired_copies() on this node do.
CREATE OR REPLACE FUNCTION shardid_internal._create_shard_copy(shard integer, source jsonb, dry_run boolean) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nsp     name := source->>'schema_name';
    seq     jsonb := source->'sequence';
    own     jsonb := source->'ownership';
    r       shardid.shard_registry;
    missing text;
    def     jsonb;
    t       record;
    c       record;
    kind    text;
BEGIN
    LOCK TABLE shardid.shard_registry, shardid.sharded_tables IN SHARE ROW EXCLUSIVE MODE;
    SELECT * INTO r FROM shardid.shard_registry AS s WHERE s.shard = _create_shard_copy.shard;
    IF FOUND THEN
        IF r.schema_name = nsp AND NOT dry_run THEN
            RETURN shardid_internal._shard_definition(nsp);
        END IF;
        RAISE EXCEPTION 'shard % is already registered here (schema %)', shard, quote_ident(r.schema_name)
            USING ERRCODE = 'duplicate_object',
                  HINT = format('If that copy is stale: SELECT shardid.detach_shard(%s); and drop its schema there.', shard);
    END IF;
    IF EXISTS (SELECT FROM pg_namespace AS n WHERE n.nspname = nsp) THEN
        RAISE EXCEPTION 'schema % already exists here', quote_ident(nsp)
            USING ERRCODE = 'duplicate_schema',
                  HINT = 'Drop or rename it there first.';
    END IF;
    SELECT string_agg(quote_ident(x.x), ', ' ORDER BY x.x) INTO missing
      FROM jsonb_array_elements_text(source->'roles') AS x(x)
     WHERE NOT EXISTS (SELECT FROM pg_roles AS o WHERE o.rolname = x.x);
    IF missing IS NOT NULL THEN
        RAISE EXCEPTION 'roles that own shard % or hold privileges on it do not exist here: %', shard, missing
            USING ERRCODE = 'undefined_object',
                  HINT = 'Create them here first: the copy keeps the owners and privileges of the source.';
    END IF;
    PERFORM shardid_internal._require_templates();

    BEGIN
        -- a node with only the extension gets the source's templates first
        IF NOT EXISTS (SELECT FROM shardid.sharded_tables) AND jsonb_array_length(COALESCE(source->'templates', '[]')) > 0 THEN
            PERFORM shardid_internal._create_templates(source->'templates');
        END IF;
        EXECUTE format('CREATE SCHEMA %I', nsp);
        EXECUTE format('CREATE SEQUENCE %I.%I AS %s INCREMENT %s MINVALUE %s MAXVALUE %s START %s CACHE %s %s',
                       nsp, seq->>'name', (seq->>'type')::regtype, (seq->>'increment')::bigint,
                       (seq->>'min')::bigint, (seq->>'max')::bigint, (seq->>'start')::bigint,
                       (seq->>'cache')::bigint, CASE WHEN (seq->>'cycle')::boolean THEN 'CYCLE' ELSE 'NO CYCLE' END);
        EXECUTE format('COMMENT ON SEQUENCE %I.%I IS %L', nsp, seq->>'name',
                       format('Generator of shard %s: state = ms since the layout epoch << seq_bits | counter. Do not setval() it lower.', shard));
        INSERT INTO shardid.shard_registry (shard, schema_name, sequence_schema, sequence_name)
            VALUES (shard, nsp, nsp, seq->>'name');
        PERFORM shardid_internal._create_shard_tables(shard);

        EXECUTE format('ALTER SCHEMA %I OWNER TO %I', nsp, own->'schema'->>'owner');
        PERFORM shardid_internal._apply_acl('SCHEMA', format('%I', nsp), own->'schema'->>'owner', own->'schema'->'acl');
        FOR t IN SELECT e.key AS relname, e.value AS o FROM jsonb_each(own->'relations') AS e ORDER BY e.key LOOP
            -- what is missing here, or of another kind, the comparison reports
            CONTINUE WHEN NOT EXISTS (SELECT FROM pg_class AS x JOIN pg_namespace AS n ON n.oid = x.relnamespace
                                       WHERE n.nspname = nsp AND x.relname = t.relname AND x.relkind::text = t.o->>'kind');
            kind := CASE t.o->>'kind' WHEN 'S' THEN 'SEQUENCE' ELSE 'TABLE' END;
            EXECUTE format('ALTER %s %I.%I OWNER TO %I', kind, nsp, t.relname, t.o->>'owner');
            PERFORM shardid_internal._apply_acl(kind, format('%I.%I', nsp, t.relname), t.o->>'owner', t.o->'acl');
            IF kind = 'TABLE' AND (t.o->>'replident' IN ('f', 'n') OR t.o->>'replident' = 'i' AND to_regclass(format('%I.%I', nsp, t.o->>'replident_index')) IS NOT NULL) THEN
                EXECUTE format('ALTER TABLE %I.%I REPLICA IDENTITY %s', nsp, t.relname,
                               CASE t.o->>'replident' WHEN 'f' THEN 'FULL' WHEN 'n' THEN 'NOTHING'
                                                      ELSE format('USING INDEX %I', t.o->>'replident_index') END);
            END IF;
            FOR c IN SELECT e.key AS attname, e.value AS acl FROM jsonb_each(t.o->'columns') AS e ORDER BY e.key LOOP
                CONTINUE WHEN NOT EXISTS (SELECT FROM pg_attribute AS a
                                           WHERE a.attrelid = format('%I.%I', nsp, t.relname)::regclass
                                             AND a.attname = c.attname AND NOT a.attisdropped);
                PERFORM shardid_internal._apply_acl('TABLE', format('%I.%I', nsp, t.relname), t.o->>'owner', c.acl, c.attname);
            END LOOP;
        END LOOP;
        PERFORM shardid_internal._move_copy_indexes(nsp, source->'indexes', own->'relations');
        def := shardid_internal._shard_definition(nsp);
        IF dry_run THEN
            RAISE EXCEPTION 'dry run' USING ERRCODE = 'SIDRY';
        END IF;
    EXCEPTION WHEN SQLSTATE 'SIDRY' THEN
        NULL;   -- undone; def was taken before
    END;
    RETURN def;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._create_shard_copy(integer, jsonb, boolean) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._create_shard_copy(integer, jsonb, boolean) IS
    'Node, target of a move: creates and registers the shard from this node''s templates with the source''s owners and privileges (source: _move_source_facts()); returns its definition; dry_run undoes it.';
