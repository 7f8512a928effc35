-- shardid install script, part 20: logical shards as schemas.
--
-- A logical shard is a schema (shard_0005) holding one generator sequence
-- (shard_0005.id_seq) and a copy of every sharded table, whose id column
-- defaults to shardid.next_id(5, 'shard_0005.id_seq'::regclass). One generator per
-- shard makes IDs unique across every table of the shard, and the shard
-- field makes them unique across shards.
--
-- The registry (shard_registry, sharded_tables) is made of extension
-- configuration tables, so pg_dump carries it. The functions are SECURITY
-- INVOKER: the schemas, sequences and tables belong to the caller, who needs
-- CREATE on the database and INSERT, UPDATE, DELETE on the registry (granted
-- by the extension's owner; see README "Logical shards"). Every function
-- pins search_path to pg_catalog, pg_temp and qualifies every name it builds.

-- The registered shards: one schema and one generator sequence each.
CREATE TABLE shardid.shard_registry (
    shard           integer PRIMARY KEY CHECK (shard OPERATOR(pg_catalog.>=) 0),
    schema_name     name    NOT NULL UNIQUE,
    sequence_schema name    NOT NULL,
    sequence_name   name    NOT NULL
);
SELECT pg_catalog.pg_extension_config_dump('shardid.shard_registry', '');
GRANT SELECT ON shardid.shard_registry TO PUBLIC;

-- The sharded tables: created in every shard, and in shards created later.
CREATE TABLE shardid.sharded_tables (
    table_name      name    PRIMARY KEY,
    template_schema name    NOT NULL,
    template_name   name    NOT NULL,
    id_column       name    NOT NULL,
    position        integer NOT NULL UNIQUE
);
SELECT pg_catalog.pg_extension_config_dump('shardid.sharded_tables', '');
GRANT SELECT ON shardid.sharded_tables TO PUBLIC;

-- The schema name of a shard number: shard_ and the number zero-padded to
-- 4 digits, or to the width of the layout's largest shard if that is wider.
CREATE FUNCTION shardid._shard_schema_name(shard integer) RETURNS name
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT pg_catalog.concat('shard_',
               pg_catalog.lpad($1::text,
                               GREATEST(4, pg_catalog.length(((shardid.layout()).max_shard)::text)),
                               '0'))::name
$$;

-- Refuses a shard number the layout cannot hold.
CREATE FUNCTION shardid._check_shard(shard integer) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    l shardid.layout_report := shardid.layout();
BEGIN
    IF shard IS NULL THEN
        RAISE EXCEPTION 'shard must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF shard OPERATOR(pg_catalog.<) 0 OR shard OPERATOR(pg_catalog.>) l.max_shard THEN
        RAISE EXCEPTION 'shard % is out of range', shard
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = pg_catalog.format('this layout has %s shard bits (0..%s)',
                                             l.shard_bits, l.max_shard);
    END IF;
END
$$;

-- Refuses a caller who may not change the registry, before anything is created.
CREATE FUNCTION shardid._check_registry_privileges(action text, need_create boolean) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF need_create AND NOT pg_catalog.has_database_privilege(pg_catalog.current_database(), 'CREATE') THEN
        RAISE EXCEPTION 'permission denied to %', action
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = pg_catalog.format('A shard is a schema: role %s needs CREATE on database %s.',
                                             pg_catalog.quote_ident(current_user::text),
                                             pg_catalog.quote_ident(pg_catalog.current_database()::text)),
                  HINT = pg_catalog.format('GRANT CREATE ON DATABASE %s TO %s;',
                                           pg_catalog.quote_ident(pg_catalog.current_database()::text),
                                           pg_catalog.quote_ident(current_user::text));
    END IF;
    IF NOT (pg_catalog.has_table_privilege('shardid.shard_registry', 'INSERT, UPDATE, DELETE')
            AND pg_catalog.has_table_privilege('shardid.sharded_tables', 'INSERT, UPDATE, DELETE')) THEN
        RAISE EXCEPTION 'permission denied to %', action
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = pg_catalog.format('Role %s may not change the shard registry.',
                                             pg_catalog.quote_ident(current_user::text)),
                  HINT = pg_catalog.format('GRANT INSERT, UPDATE, DELETE ON shardid.shard_registry, shardid.sharded_tables TO %s;',
                                           pg_catalog.quote_ident(current_user::text));
    END IF;
END
$$;

-- Refuses a sequence that next_id() would refuse, with the same SQLSTATEs.
CREATE FUNCTION shardid._check_generator(seq regclass) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c pg_catalog.pg_class;
BEGIN
    SELECT * INTO c FROM pg_catalog.pg_class WHERE oid OPERATOR(pg_catalog.=) seq;
    IF c.relkind IS DISTINCT FROM 'S' THEN
        RAISE EXCEPTION '"%" is not a sequence', seq
            USING ERRCODE = 'wrong_object_type',
                  HINT = 'next_id() keeps its state in a sequence: CREATE SEQUENCE ... AS bigint.';
    END IF;
    IF c.relpersistence OPERATOR(pg_catalog.<>) 'p' THEN
        RAISE EXCEPTION 'sequence "%" is %', seq,
                CASE c.relpersistence WHEN 't' THEN 'temporary' ELSE 'unlogged' END
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'A crash resets temporary and unlogged sequences, so IDs would repeat.';
    END IF;
END
$$;

-- Creates the sharded tables of one shard (all of them, or only those it
-- lacks). Callers have checked the shard, its schema and the templates.
CREATE FUNCTION shardid._create_shard_tables(shard integer, only_missing boolean DEFAULT false)
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

-- Refuses to go on if a sharded table's template has gone, before a shard
-- gets any table.
CREATE FUNCTION shardid._check_templates() RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t shardid.sharded_tables;
BEGIN
    FOR t IN SELECT * FROM shardid.sharded_tables ORDER BY position LOOP
        IF pg_catalog.to_regclass(pg_catalog.format('%I.%I', t.template_schema, t.template_name)) IS NULL THEN
            RAISE EXCEPTION 'template %.% of sharded table % no longer exists',
                    pg_catalog.quote_ident(t.template_schema), pg_catalog.quote_ident(t.template_name),
                    pg_catalog.quote_ident(t.table_name)
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'Recreate the template table, or remove the row from shardid.sharded_tables.';
        END IF;
    END LOOP;
END
$$;

CREATE FUNCTION shardid.create_shard(shard integer) RETURNS name
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nsp         name;
    other       shardid.shard_registry;
BEGIN
    PERFORM shardid._check_shard(shard);
    PERFORM shardid._check_registry_privileges('create shards', true);
    -- One registry writer at a time: two sessions cannot create one shard.
    LOCK TABLE shardid.shard_registry, shardid.sharded_tables IN SHARE ROW EXCLUSIVE MODE;
    nsp := shardid._shard_schema_name(shard);
    SELECT * INTO other FROM shardid.shard_registry AS s
        WHERE s.shard OPERATOR(pg_catalog.=) create_shard.shard;
    IF FOUND THEN
        RAISE EXCEPTION 'shard % is already registered', shard
            USING ERRCODE = 'duplicate_object',
                  DETAIL = pg_catalog.format('Its schema is %I.', other.schema_name);
    END IF;
    IF EXISTS (SELECT FROM pg_catalog.pg_namespace AS n
                WHERE n.nspname OPERATOR(pg_catalog.=) nsp) THEN
        RAISE EXCEPTION 'schema "%" already exists', nsp
            USING ERRCODE = 'duplicate_schema',
                  DETAIL = pg_catalog.format('Shard %s would be created in it.', shard),
                  HINT = pg_catalog.format('If it holds shard %s (restored from a dump), register it with shardid.attach_shard(%s).', shard, shard);
    END IF;
    PERFORM shardid._check_templates();

    EXECUTE pg_catalog.format('CREATE SCHEMA %I', nsp);
    EXECUTE pg_catalog.format('CREATE SEQUENCE %I.id_seq AS bigint', nsp);
    EXECUTE pg_catalog.format('COMMENT ON SEQUENCE %I.id_seq IS %L', nsp,
                              pg_catalog.format('Generator of shard %s: state = ms since the layout epoch << seq_bits | counter. Do not setval() it lower.', shard));
    INSERT INTO shardid.shard_registry (shard, schema_name, sequence_schema, sequence_name)
        VALUES (shard, nsp, nsp, 'id_seq');
    PERFORM shardid._create_shard_tables(shard);
    RETURN nsp;
END
$$;

CREATE FUNCTION shardid.create_shards(first integer, last integer) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    taken integer;
BEGIN
    IF first IS NULL OR last IS NULL THEN
        RAISE EXCEPTION 'create_shards() arguments must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF first OPERATOR(pg_catalog.>) last THEN
        RAISE EXCEPTION 'empty shard range % .. %', first, last
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give the first shard, then the last (inclusive).';
    END IF;
    PERFORM shardid._check_shard(first);
    PERFORM shardid._check_shard(last);
    PERFORM shardid._check_registry_privileges('create shards', true);
    LOCK TABLE shardid.shard_registry, shardid.sharded_tables IN SHARE ROW EXCLUSIVE MODE;
    -- Check the whole range before creating any shard.
    SELECT min(s.shard) INTO taken FROM shardid.shard_registry AS s
        WHERE s.shard OPERATOR(pg_catalog.>=) first AND s.shard OPERATOR(pg_catalog.<=) last;
    IF taken IS NOT NULL THEN
        RAISE EXCEPTION 'shard % is already registered', taken
            USING ERRCODE = 'duplicate_object',
                  DETAIL = pg_catalog.format('No shard of %s .. %s was created.', first, last);
    END IF;
    SELECT min(g) INTO taken FROM pg_catalog.generate_series(first, last) AS g
        WHERE EXISTS (SELECT FROM pg_catalog.pg_namespace AS n
                       WHERE n.nspname OPERATOR(pg_catalog.=) shardid._shard_schema_name(g));
    IF taken IS NOT NULL THEN
        RAISE EXCEPTION 'schema "%" already exists', shardid._shard_schema_name(taken)
            USING ERRCODE = 'duplicate_schema',
                  DETAIL = pg_catalog.format('No shard of %s .. %s was created.', first, last);
    END IF;
    PERFORM shardid.create_shard(g) FROM pg_catalog.generate_series(first, last) AS g ORDER BY g;
    RETURN last OPERATOR(pg_catalog.-) first OPERATOR(pg_catalog.+) 1;
END
$$;

CREATE FUNCTION shardid.shard_schema(shard integer) RETURNS name
    LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    result name;
BEGIN
    SELECT s.schema_name INTO result FROM shardid.shard_registry AS s
        WHERE s.shard OPERATOR(pg_catalog.=) shard_schema.shard;
    IF result IS NULL THEN
        RAISE EXCEPTION 'shard % is not registered in this database', shard
            USING ERRCODE = 'undefined_object',
                  HINT = pg_catalog.format('Create it with shardid.create_shard(%s), or register a restored schema with shardid.attach_shard(%s).', shard, shard);
    END IF;
    RETURN result;
END
$$;

CREATE FUNCTION shardid.create_table(template regclass, id_column name DEFAULT 'id') RETURNS integer
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

CREATE FUNCTION shardid.attach_shard(shard integer, schema_name name DEFAULT NULL) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nsp    name := COALESCE(schema_name, shardid._shard_schema_name(shard));
    other  shardid.shard_registry;
    seq    regclass;
    l      shardid.layout_report := shardid.layout();
    t      shardid.sharded_tables;
    state  bigint;
    max_id bigint;
    ahead  timestamptz := pg_catalog.clock_timestamp() OPERATOR(pg_catalog.+) '1 day'::interval;
    layout_text text;
BEGIN
    PERFORM shardid._check_shard(shard);
    PERFORM shardid._check_registry_privileges('attach shards', false);
    LOCK TABLE shardid.shard_registry, shardid.sharded_tables IN SHARE ROW EXCLUSIVE MODE;
    SELECT * INTO other FROM shardid.shard_registry AS s
        WHERE s.shard OPERATOR(pg_catalog.=) attach_shard.shard OR s.schema_name OPERATOR(pg_catalog.=) nsp;
    IF FOUND THEN
        RAISE EXCEPTION 'shard % (schema %) is already registered', other.shard, pg_catalog.quote_ident(other.schema_name)
            USING ERRCODE = 'duplicate_object';
    END IF;
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_namespace AS n WHERE n.nspname OPERATOR(pg_catalog.=) nsp) THEN
        RAISE EXCEPTION 'schema "%" does not exist', nsp USING ERRCODE = 'invalid_schema_name';
    END IF;
    seq := pg_catalog.to_regclass(pg_catalog.format('%I.id_seq', nsp));
    IF seq IS NULL THEN
        RAISE EXCEPTION 'schema "%" has no generator sequence id_seq', nsp
            USING ERRCODE = 'undefined_table';
    END IF;
    PERFORM shardid._check_generator(seq);
    PERFORM shardid._check_templates();

    -- A generator state or IDs made under another layout (a dump of a
    -- database with another epoch or other bit widths) would issue IDs here
    -- that collide or decode wrongly: refuse what shows it, a state or an ID
    -- past this layout's end, more than a day ahead of the clock, or an ID
    -- of another shard.
    layout_text := pg_catalog.format('This database''s layout: epoch %s, %s shard bits, %s seq bits.',
                                     l.epoch, l.shard_bits, l.seq_bits);
    EXECUTE pg_catalog.format('SELECT last_value FROM %s', seq) INTO state;
    IF state OPERATOR(pg_catalog.>) (9223372036854775807 OPERATOR(pg_catalog.>>) l.shard_bits) THEN
        RAISE EXCEPTION 'generator % holds state %, past the end of this database''s layout', seq, state
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = layout_text,
                  HINT = 'The shard was made under another layout: attach it in a database configured with that layout.';
    END IF;
    IF l.epoch OPERATOR(pg_catalog.+) pg_catalog.make_interval(secs => (state OPERATOR(pg_catalog.>>) l.seq_bits) OPERATOR(pg_catalog./) 1000.0)
            OPERATOR(pg_catalog.>) ahead THEN
        RAISE EXCEPTION 'generator % holds a state of %, more than a day ahead of the clock', seq,
                l.epoch OPERATOR(pg_catalog.+) pg_catalog.make_interval(secs => (state OPERATOR(pg_catalog.>>) l.seq_bits) OPERATOR(pg_catalog./) 1000.0)
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = layout_text,
                  HINT = 'The shard was made under another layout: attach it in a database configured with that layout.';
    END IF;
    FOR t IN SELECT * FROM shardid.sharded_tables ORDER BY position LOOP
        CONTINUE WHEN pg_catalog.to_regclass(pg_catalog.format('%I.%I', nsp, t.table_name)) IS NULL;
        EXECUTE pg_catalog.format('SELECT max(%I) FROM %I.%I', t.id_column, nsp, t.table_name) INTO max_id;
        CONTINUE WHEN max_id IS NULL;
        IF max_id OPERATOR(pg_catalog.<) 0 OR shardid.id_shard(max_id) OPERATOR(pg_catalog.<>) shard
           OR shardid.id_time(max_id) OPERATOR(pg_catalog.>) ahead THEN
            RAISE EXCEPTION 'table %.% holds ID %, not an ID of shard % under this database''s layout',
                    pg_catalog.quote_ident(nsp), pg_catalog.quote_ident(t.table_name), max_id, shard
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = CASE WHEN max_id OPERATOR(pg_catalog.<) 0 THEN 'It is negative. '
                                    ELSE pg_catalog.format('It decodes to shard %s at %s. ', shardid.id_shard(max_id), shardid.id_time(max_id))
                               END OPERATOR(pg_catalog.||) layout_text,
                      HINT = 'Attach the shard under its own number, in a database configured with the layout its IDs were made under.';
        END IF;
    END LOOP;

    INSERT INTO shardid.shard_registry (shard, schema_name, sequence_schema, sequence_name)
        VALUES (shard, nsp, nsp, 'id_seq');
    RETURN shardid._create_shard_tables(shard, true);
END
$$;

CREATE FUNCTION shardid.detach_shard(shard integer) RETURNS name
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nsp name;
BEGIN
    IF shard IS NULL THEN
        RAISE EXCEPTION 'shard must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    PERFORM shardid._check_registry_privileges('detach shards', false);
    DELETE FROM shardid.shard_registry AS s WHERE s.shard OPERATOR(pg_catalog.=) detach_shard.shard
        RETURNING s.schema_name INTO nsp;
    IF nsp IS NULL THEN
        RAISE EXCEPTION 'shard % is not registered in this database', shard USING ERRCODE = 'undefined_object';
    END IF;
    RETURN nsp;
END
$$;

CREATE FUNCTION shardid.adopt(tbl regclass, shard integer, seq regclass, id_column name DEFAULT 'id')
    RETURNS bigint
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    l          shardid.layout_report := shardid.layout();
    c          pg_catalog.pg_class;
    tblnsp     name;
    seqnsp     name;
    seqname    name;
    att        pg_catalog.pg_attribute;
    reg        shardid.shard_registry;
    negatives  bigint;
    foreign_n  bigint;
    example    bigint;
    max_id     bigint;
    target     bigint;
    cur_value  bigint;
    cur_called boolean;
    max_drift  bigint;
    seq_mask   bigint;
BEGIN
    IF tbl IS NULL OR seq IS NULL OR id_column IS NULL THEN
        RAISE EXCEPTION 'adopt() arguments must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    PERFORM shardid._check_shard(shard);
    SELECT * INTO c FROM pg_catalog.pg_class WHERE oid OPERATOR(pg_catalog.=) tbl;
    IF c.relkind NOT IN ('r', 'p') THEN
        RAISE EXCEPTION '"%" is not a table', tbl USING ERRCODE = 'wrong_object_type';
    END IF;
    SELECT n.nspname INTO tblnsp FROM pg_catalog.pg_namespace AS n WHERE n.oid OPERATOR(pg_catalog.=) c.relnamespace;
    PERFORM shardid._check_generator(seq);
    SELECT n.nspname, x.relname INTO seqnsp, seqname
        FROM pg_catalog.pg_class AS x JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) x.relnamespace
        WHERE x.oid OPERATOR(pg_catalog.=) seq;
    SELECT * INTO att FROM pg_catalog.pg_attribute AS a
        WHERE a.attrelid OPERATOR(pg_catalog.=) tbl AND a.attname OPERATOR(pg_catalog.=) id_column
          AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'column "%" of table "%" does not exist', id_column, tbl USING ERRCODE = 'undefined_column';
    END IF;
    IF att.atttypid OPERATOR(pg_catalog.<>) 'pg_catalog.int8'::regtype THEN
        RAISE EXCEPTION 'column "%" of table "%" is %, not bigint', id_column, tbl,
                pg_catalog.format_type(att.atttypid, att.atttypmod)
            USING ERRCODE = 'datatype_mismatch';
    END IF;
    IF att.attidentity OPERATOR(pg_catalog.<>) '' OR att.attgenerated OPERATOR(pg_catalog.<>) '' THEN
        RAISE EXCEPTION 'column "%" of table "%" is an identity or generated column', id_column, tbl
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'ALTER TABLE ... ALTER COLUMN ... DROP IDENTITY first.';
    END IF;
    IF NOT pg_catalog.pg_has_role(c.relowner, 'USAGE') THEN
        RAISE EXCEPTION 'must be owner of table %', tbl USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF NOT pg_catalog.pg_has_role((SELECT x.relowner FROM pg_catalog.pg_class AS x WHERE x.oid OPERATOR(pg_catalog.=) seq), 'USAGE') THEN
        RAISE EXCEPTION 'must be owner of sequence %', seq USING ERRCODE = 'insufficient_privilege';
    END IF;
    PERFORM shardid._check_registry_privileges('adopt tables', false);
    LOCK TABLE shardid.shard_registry, shardid.sharded_tables IN SHARE ROW EXCLUSIVE MODE;

    -- A shard has one generator, and a schema holds one shard.
    SELECT * INTO reg FROM shardid.shard_registry AS s WHERE s.shard OPERATOR(pg_catalog.=) adopt.shard;
    IF FOUND AND (reg.sequence_schema, reg.sequence_name) IS DISTINCT FROM (seqnsp, seqname) THEN
        RAISE EXCEPTION 'shard % already has generator %.%', shard,
                pg_catalog.quote_ident(reg.sequence_schema), pg_catalog.quote_ident(reg.sequence_name)
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Two generators for one shard could issue the same ID.',
                  HINT = 'Adopt the table with the shard''s registered sequence.';
    END IF;
    IF NOT FOUND AND EXISTS (SELECT FROM shardid.shard_registry AS s WHERE s.schema_name OPERATOR(pg_catalog.=) tblnsp) THEN
        RAISE EXCEPTION 'schema "%" already holds shard %', tblnsp,
                (SELECT s.shard FROM shardid.shard_registry AS s WHERE s.schema_name OPERATOR(pg_catalog.=) tblnsp)
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;

    -- No row may be inserted with the old DEFAULT from here on, and no
    -- next_id() may run on the sequence until this transaction ends: ALTER
    -- SEQUENCE takes a lock that conflicts with nextval() and next_id().
    EXECUTE pg_catalog.format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', tbl);
    EXECUTE pg_catalog.format('ALTER SEQUENCE %s AS bigint MAXVALUE 9223372036854775807', seq);

    seq_mask := (1::bigint OPERATOR(pg_catalog.<<) l.seq_bits) OPERATOR(pg_catalog.-) 1;
    EXECUTE pg_catalog.format(
        'SELECT count(*) FILTER (WHERE %1$I OPERATOR(pg_catalog.<) 0),
                count(*) FILTER (WHERE %1$I OPERATOR(pg_catalog.>=) 0 AND ((%1$I OPERATOR(pg_catalog.>>) $1) OPERATOR(pg_catalog.&) $2) OPERATOR(pg_catalog.<>) $3),
                min(%1$I) FILTER (WHERE %1$I OPERATOR(pg_catalog.<) 0 OR ((%1$I OPERATOR(pg_catalog.>>) $1) OPERATOR(pg_catalog.&) $2) OPERATOR(pg_catalog.<>) $3),
                max(%1$I)
           FROM %2$s', id_column, tbl)
        INTO negatives, foreign_n, example, max_id
        USING l.seq_bits, l.max_shard::bigint, shard::bigint;
    IF negatives OPERATOR(pg_catalog.>) 0 THEN
        RAISE EXCEPTION 'table "%" holds % negative IDs', tbl, negatives
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = pg_catalog.format('For example %s. IDs of this layout are positive 63-bit values.', example);
    END IF;
    IF foreign_n OPERATOR(pg_catalog.>) 0 THEN
        RAISE EXCEPTION 'table "%" holds % IDs that do not belong to shard %', tbl, foreign_n, shard
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = pg_catalog.format('For example %s decodes to shard %s under this layout (%s shard bits, %s seq bits).',
                                             example, shardid.id_shard(example), l.shard_bits, l.seq_bits),
                  HINT = 'Adopt the table with the shard its IDs were made for, or configure the layout they were made with.';
    END IF;
    SELECT COALESCE(pg_catalog.max(s.setting::bigint), 2000) INTO max_drift
        FROM pg_catalog.pg_settings AS s WHERE s.name OPERATOR(pg_catalog.=) 'shardid.max_drift';
    IF max_id IS NOT NULL AND shardid.id_time(max_id) OPERATOR(pg_catalog.>)
            (pg_catalog.clock_timestamp() OPERATOR(pg_catalog.+) pg_catalog.make_interval(secs => max_drift OPERATOR(pg_catalog./) 1000.0)) THEN
        RAISE EXCEPTION 'the IDs of table "%" lie in the future under this layout', tbl
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = pg_catalog.format('ID %s decodes to %s; the clock reads %s.', max_id,
                                             shardid.id_time(max_id), pg_catalog.clock_timestamp()),
                  HINT = 'The IDs were made with another epoch: configure this database''s layout to match (in a database that has issued no ID) before adopting.';
    END IF;

    -- The generator state whose ID on this shard is max_id; the next state
    -- is above it, so every new ID is above every existing one. A state the
    -- sequence already holds (an earlier adopt, or native IDs) is never lowered.
    IF max_id IS NOT NULL THEN
        target := ((max_id OPERATOR(pg_catalog.>>) (l.shard_bits OPERATOR(pg_catalog.+) l.seq_bits)) OPERATOR(pg_catalog.<<) l.seq_bits)
                  OPERATOR(pg_catalog.|) (max_id OPERATOR(pg_catalog.&) seq_mask);
        EXECUTE pg_catalog.format('SELECT last_value, is_called FROM %s', seq) INTO cur_value, cur_called;
        IF NOT cur_called OR cur_value OPERATOR(pg_catalog.<) target THEN
            PERFORM pg_catalog.setval(seq, target, true);
        END IF;
    END IF;

    EXECUTE pg_catalog.format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT shardid.next_id(%s, %L::regclass)',
                              tbl, id_column, shard, pg_catalog.format('%I.%I', seqnsp, seqname));
    IF reg.shard IS NULL THEN
        INSERT INTO shardid.shard_registry (shard, schema_name, sequence_schema, sequence_name)
            VALUES (shard, tblnsp, seqnsp, seqname);
    END IF;
    RETURN max_id;
END
$$;

-- The registered shards and the state of their generators. A state
-- outside the layout (negative, or past its last state: the sequence was
-- set there by hand or restored from another layout) is not decoded.
CREATE VIEW shardid.shards AS
SELECT r.shard,
       r.schema_name AS schema,
       g.seq AS sequence,
       ((st.state OPERATOR(pg_catalog.>>) l.seq_bits) OPERATOR(pg_catalog.<<) (l.shard_bits OPERATOR(pg_catalog.+) l.seq_bits))
       OPERATOR(pg_catalog.|) (r.shard::bigint OPERATOR(pg_catalog.<<) l.seq_bits)
       OPERATOR(pg_catalog.|) (st.state OPERATOR(pg_catalog.&) ((1::bigint OPERATOR(pg_catalog.<<) l.seq_bits) OPERATOR(pg_catalog.-) 1))
           AS last_id,
       st.time AS last_time,
       CASE WHEN st.time IS NOT NULL THEN
           GREATEST(st.time OPERATOR(pg_catalog.-) pg_catalog.clock_timestamp(), '0'::interval)
       END AS drift
  FROM shardid.shard_registry AS r
 CROSS JOIN shardid.layout() AS l
 -- from the catalog, not to_regclass(): a reader without USAGE on a shard
 -- schema still sees the registry
 CROSS JOIN LATERAL (SELECT (SELECT c.oid FROM pg_catalog.pg_class AS c
                               JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
                              WHERE n.nspname OPERATOR(pg_catalog.=) r.sequence_schema
                                AND c.relname OPERATOR(pg_catalog.=) r.sequence_name)::regclass AS seq) AS g
 CROSS JOIN LATERAL (SELECT CASE WHEN g.seq IS NOT NULL AND pg_catalog.has_sequence_privilege(g.seq, 'SELECT, USAGE')
                                 THEN pg_catalog.pg_sequence_last_value(g.seq) END AS raw_state) AS raw
 CROSS JOIN LATERAL (SELECT v.state,
                            l.epoch OPERATOR(pg_catalog.+) pg_catalog.make_interval(secs => (v.state OPERATOR(pg_catalog.>>) l.seq_bits) OPERATOR(pg_catalog./) 1000.0) AS time
                       FROM (SELECT CASE WHEN raw.raw_state OPERATOR(pg_catalog.>=) 0
                                          AND raw.raw_state OPERATOR(pg_catalog.<=) (9223372036854775807 OPERATOR(pg_catalog.>>) l.shard_bits)
                                         THEN raw.raw_state END AS state) AS v) AS st;
GRANT SELECT ON shardid.shards TO PUBLIC;


COMMENT ON TABLE shardid.shard_registry IS
    'Registered logical shards: shard number, its schema and its generator sequence. Written by create_shard(), attach_shard(), adopt(), detach_shard().';
COMMENT ON TABLE shardid.sharded_tables IS
    'Tables created in every shard by create_table(): name, template, id column, creation order.';
COMMENT ON VIEW shardid.shards IS
    'Registered shards with their generator state: last issued ID and time, and how far the generator runs ahead of the clock (drift). NULL state: no ID yet, no SELECT/USAGE on the sequence, or a state outside the layout (negative, or past its end).';
COMMENT ON FUNCTION shardid._shard_schema_name(integer) IS
    'The schema name create_shard() uses for a shard: shard_ and the number zero-padded to 4 digits (more if the layout has more shards).';
COMMENT ON FUNCTION shardid._check_shard(integer) IS
    'Raises 22023 if a shard number is outside the layout.';
COMMENT ON FUNCTION shardid._check_registry_privileges(text, boolean) IS
    'Raises 42501 unless the caller may write the shard registry (and, if asked, create schemas).';
COMMENT ON FUNCTION shardid._check_generator(regclass) IS
    'Raises 42809 or 55000 for a relation next_id() cannot keep its state in.';
COMMENT ON FUNCTION shardid._create_shard_tables(integer, boolean) IS
    'Creates the registered sharded tables (all, or only the missing ones) in one shard.';
COMMENT ON FUNCTION shardid._check_templates() IS
    'Raises 55000 if the template of a sharded table has been dropped.';
COMMENT ON FUNCTION shardid.create_shard(integer) IS
    'Creates logical shard N: schema shard_NNNN, its generator sequence shard_NNNN.id_seq and every sharded table; registers it; returns the schema.';
COMMENT ON FUNCTION shardid.create_shards(integer, integer) IS
    'Creates shards first..last (inclusive) in one transaction, after checking that none exists; returns how many.';
COMMENT ON FUNCTION shardid.shard_schema(integer) IS
    'The schema of a registered shard, for dynamic SQL and routing; raises 42704 for an unregistered shard.';
COMMENT ON FUNCTION shardid.create_table(regclass, name) IS
    'Creates <shard schema>.<template name> (LIKE template INCLUDING ALL) in every shard, id_column DEFAULT shardid.next_id(shard, shard''s id_seq); shards created later get it too. Returns the number of tables created.';
COMMENT ON FUNCTION shardid.attach_shard(integer, name) IS
    'Registers an existing shard schema (e.g. restored with pg_dump -n) and creates the sharded tables it lacks; returns how many. Refuses a generator state or IDs that do not fit this database''s layout.';
COMMENT ON FUNCTION shardid.detach_shard(integer) IS
    'Unregisters a shard (after it moved to another server); leaves its schema alone. Returns the schema name.';
COMMENT ON FUNCTION shardid.adopt(regclass, integer, regclass, name) IS
    'Switches a table filled by Instagram''s PL/pgSQL next_id() to shardid.next_id(shard, seq): sets the generator above every existing ID, refuses IDs that do not decode to shard under this layout, registers the shard. Returns the largest existing ID.';
