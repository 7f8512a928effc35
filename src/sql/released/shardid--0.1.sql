-- shardid install script, part 00: the layout and the decoders.
-- Every object is schema-qualified so a hostile search_path cannot hijack it.

\echo Use "CREATE EXTENSION shardid" to load this file. \quit

-- The layout of this database. Empty means Instagram's default layout; a row
-- is written by configure(). Dumped by pg_dump as extension configuration.
CREATE TABLE shardid.layout_config (
    singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    epoch_ms   bigint  NOT NULL,
    shard_bits integer NOT NULL,
    seq_bits   integer NOT NULL
);
SELECT pg_catalog.pg_extension_config_dump('shardid.layout_config', '');

-- Called (nextval) by the first next_id() of each backend: once it has a
-- value, IDs exist and the layout is frozen. Dumped so a restore stays frozen.
CREATE SEQUENCE shardid.ids_issued AS bigint;
SELECT pg_catalog.pg_extension_config_dump('shardid.ids_issued', '');
GRANT USAGE ON SEQUENCE shardid.ids_issued TO PUBLIC;

CREATE FUNCTION shardid._layout_changed() RETURNS trigger
    LANGUAGE c AS 'MODULE_PATHNAME', 'shardid_layout_changed';
CREATE TRIGGER layout_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON shardid.layout_config
    FOR EACH STATEMENT EXECUTE FUNCTION shardid._layout_changed();

CREATE FUNCTION shardid._check_layout(epoch timestamptz, shard_bits integer, seq_bits integer)
    RETURNS bigint
    LANGUAGE c IMMUTABLE STRICT AS 'MODULE_PATHNAME', 'shardid_check_layout';

CREATE TYPE shardid.layout_report AS (
    epoch          timestamptz,  -- time 0 of the IDs
    time_bits      integer,      -- 63 - shard_bits - seq_bits
    shard_bits     integer,
    seq_bits       integer,
    max_shard      integer,      -- 2^shard_bits - 1
    ids_per_ms     bigint,       -- per generator: 2^seq_bits
    ids_per_second bigint,       -- per generator, sustained
    last_time      timestamptz,  -- the last millisecond an ID can hold
    in_use         boolean       -- IDs have been issued: the layout is frozen
);

CREATE FUNCTION shardid.layout() RETURNS shardid.layout_report
    LANGUAGE c STABLE STRICT AS 'MODULE_PATHNAME', 'shardid_layout';

CREATE FUNCTION shardid.configure(epoch timestamptz, shard_bits integer DEFAULT 13,
                                  seq_bits integer DEFAULT 10)
    RETURNS shardid.layout_report
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    new_epoch_ms bigint;
BEGIN
    IF epoch IS NULL OR shard_bits IS NULL OR seq_bits IS NULL THEN
        RAISE EXCEPTION 'configure() arguments must not be NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    new_epoch_ms := shardid._check_layout(epoch, shard_bits, seq_bits);
    -- Serialise with other configure() calls and with the first next_id()
    -- of every backend, which reads this table after marking ids_issued.
    LOCK TABLE shardid.layout_config IN ACCESS EXCLUSIVE MODE;
    IF (SELECT s.is_called FROM shardid.ids_issued AS s) THEN
        RAISE EXCEPTION 'the layout cannot change: IDs have already been issued'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Changing the layout would make old and new IDs collide or decode wrongly.',
                  HINT = 'Configure the layout in a new database before the first next_id() call.';
    END IF;
    INSERT INTO shardid.layout_config AS c (singleton, epoch_ms, shard_bits, seq_bits)
        VALUES (true, new_epoch_ms, configure.shard_bits, configure.seq_bits)
        ON CONFLICT (singleton) DO UPDATE
        SET epoch_ms = excluded.epoch_ms, shard_bits = excluded.shard_bits,
            seq_bits = excluded.seq_bits;
    RETURN shardid.layout();
END
$$;
REVOKE ALL ON FUNCTION shardid.configure(timestamptz, integer, integer) FROM PUBLIC;

CREATE FUNCTION shardid.id_time(id bigint) RETURNS timestamptz
    LANGUAGE c STABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_id_time';
CREATE FUNCTION shardid.id_shard(id bigint) RETURNS integer
    LANGUAGE c STABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_id_shard';
CREATE FUNCTION shardid.id_seq(id bigint) RETURNS integer
    LANGUAGE c STABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_id_seq';
CREATE FUNCTION shardid.id_decode(id bigint, OUT ts timestamptz, OUT shard integer, OUT seq integer)
    LANGUAGE c STABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_id_decode';
CREATE FUNCTION shardid.make_id(ts timestamptz, shard integer, seq integer) RETURNS bigint
    LANGUAGE c STABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_make_id';
CREATE FUNCTION shardid.time_to_id(ts timestamptz) RETURNS bigint
    LANGUAGE c STABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_time_to_id';
CREATE FUNCTION shardid.to_shortcode(id bigint) RETURNS text
    LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_to_shortcode';
CREATE FUNCTION shardid.from_shortcode(code text) RETURNS bigint
    LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_from_shortcode';

GRANT USAGE ON SCHEMA shardid TO PUBLIC;

COMMENT ON TABLE shardid.layout_config IS
    'The ID layout of this database (empty: Instagram''s default). Change it with shardid.configure().';
COMMENT ON SEQUENCE shardid.ids_issued IS
    'Marker: called once IDs have been issued; from then on the layout is frozen.';
COMMENT ON FUNCTION shardid._layout_changed() IS
    'Trigger: tells every backend to reread shardid.layout_config.';
COMMENT ON FUNCTION shardid._check_layout(timestamptz, integer, integer) IS
    'Validates a layout and returns its epoch in Unix milliseconds; used by configure().';
COMMENT ON TYPE shardid.layout_report IS
    'What shardid.layout() and shardid.configure() report about a layout.';
COMMENT ON FUNCTION shardid.layout() IS
    'The ID layout of this database: epoch, bit widths, max shard, IDs per ms and per second per generator, last representable time, whether IDs have been issued.';
COMMENT ON FUNCTION shardid.configure(timestamptz, integer, integer) IS
    'Sets the ID layout of this database (epoch, shard_bits, seq_bits); refused once any generator has issued an ID.';
COMMENT ON FUNCTION shardid.id_time(bigint) IS
    'The time part of an ID: when it was generated, to the millisecond.';
COMMENT ON FUNCTION shardid.id_shard(bigint) IS
    'The logical shard of an ID, for routing.';
COMMENT ON FUNCTION shardid.id_seq(bigint) IS
    'The sequence part of an ID.';
COMMENT ON FUNCTION shardid.id_decode(bigint) IS
    'All three parts of an ID: (ts, shard, seq).';
COMMENT ON FUNCTION shardid.make_id(timestamptz, integer, integer) IS
    'Composes an ID from a time (truncated to the millisecond), a shard and a sequence value; for tests and backfills.';
COMMENT ON FUNCTION shardid.time_to_id(timestamptz) IS
    'The smallest ID of a time''s millisecond: WHERE id >= time_to_id(a) AND id < time_to_id(b) is a primary-key range scan.';
COMMENT ON FUNCTION shardid.to_shortcode(bigint) IS
    'The URL-safe short code of an ID: base 64 over A-Z a-z 0-9 - _, most significant digit first.';
COMMENT ON FUNCTION shardid.from_shortcode(text) IS
    'The ID of a short code; refuses characters outside the alphabet, leading zero digits and codes over 63 bits.';
-- shardid install script, part 10: the generator.

CREATE FUNCTION shardid.next_id(shard integer, seq regclass) RETURNS bigint
    LANGUAGE c VOLATILE STRICT PARALLEL UNSAFE AS 'MODULE_PATHNAME', 'shardid_next_id';

COMMENT ON FUNCTION shardid.next_id(integer, regclass) IS
    'The next ID of the generator kept in sequence seq, for logical shard shard: unique and strictly increasing per sequence, clock- and crash-safe. Use it as a column DEFAULT.';
-- shardid install script, part 20: logical shards as schemas.
--
-- A logical shard is a schema (shard_0005) holding one generator sequence
-- (shard_0005.id_seq) and a copy of every sharded table, whose id column
-- defaults to shardid.next_id(5, 'shard_0005.id_seq'). One generator per
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
    nsp   name := COALESCE(schema_name, shardid._shard_schema_name(shard));
    other shardid.shard_registry;
    seq   regclass;
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

-- The registered shards and the state of their generators.
CREATE VIEW shardid.shards AS
SELECT r.shard,
       r.schema_name AS schema,
       g.seq AS sequence,
       CASE WHEN st.state IS NOT NULL THEN
           ((st.state OPERATOR(pg_catalog.>>) l.seq_bits) OPERATOR(pg_catalog.<<) (l.shard_bits OPERATOR(pg_catalog.+) l.seq_bits))
           OPERATOR(pg_catalog.|) (r.shard::bigint OPERATOR(pg_catalog.<<) l.seq_bits)
           OPERATOR(pg_catalog.|) (st.state OPERATOR(pg_catalog.&) ((1::bigint OPERATOR(pg_catalog.<<) l.seq_bits) OPERATOR(pg_catalog.-) 1))
       END AS last_id,
       l.epoch OPERATOR(pg_catalog.+) pg_catalog.make_interval(secs => (st.state OPERATOR(pg_catalog.>>) l.seq_bits) OPERATOR(pg_catalog./) 1000.0) AS last_time,
       CASE WHEN st.state IS NOT NULL THEN
           GREATEST(l.epoch OPERATOR(pg_catalog.+) pg_catalog.make_interval(secs => (st.state OPERATOR(pg_catalog.>>) l.seq_bits) OPERATOR(pg_catalog./) 1000.0)
                    OPERATOR(pg_catalog.-) pg_catalog.clock_timestamp(),
                    '0'::interval)
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
                                 THEN pg_catalog.pg_sequence_last_value(g.seq) END AS state) AS st;
GRANT SELECT ON shardid.shards TO PUBLIC;


COMMENT ON TABLE shardid.shard_registry IS
    'Registered logical shards: shard number, its schema and its generator sequence. Written by create_shard(), attach_shard(), adopt(), detach_shard().';
COMMENT ON TABLE shardid.sharded_tables IS
    'Tables created in every shard by create_table(): name, template, id column, creation order.';
COMMENT ON VIEW shardid.shards IS
    'Registered shards with their generator state: last issued ID and time, and how far the generator runs ahead of the clock (drift). NULL state: no ID yet, or no SELECT/USAGE on the sequence.';
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
    'Registers an existing shard schema (e.g. restored with pg_dump -n) and creates the sharded tables it lacks; returns how many.';
COMMENT ON FUNCTION shardid.detach_shard(integer) IS
    'Unregisters a shard (after it moved to another server); leaves its schema alone. Returns the schema name.';
COMMENT ON FUNCTION shardid.adopt(regclass, integer, regclass, name) IS
    'Switches a table filled by Instagram''s PL/pgSQL next_id() to shardid.next_id(shard, seq): sets the generator above every existing ID, refuses IDs that do not decode to shard under this layout, registers the shard. Returns the largest existing ID.';
-- shardid install script, part 30: many servers, routed by PL/Proxy.
--
-- On a router, shardid.nodes names the data nodes and shardid.shard_placement
-- says which node holds each logical shard. From them, refresh_cluster()
-- keeps the PL/Proxy cluster 'shardid' as an SQL/MED server: one partition
-- per logical shard (partition number = shard number, max_shard + 1 of them,
-- a power of two as PL/Proxy requires), so proxy functions say
-- CLUSTER 'shardid'; RUN ON shardid.id_shard(i_id);  or  RUN ON i_shard;
--
-- Why SQL/MED and not plproxy.get_cluster_*() functions: the server is
-- created at run time by add_node()/place_shards(), so CREATE EXTENSION
-- shardid needs no PL/Proxy on data nodes; it does not take over the
-- plproxy schema other clusters may use; and PL/Proxy reloads an SQL/MED
-- cluster on the catalog invalidation of ALTER SERVER, so every router
-- backend sees a new placement at its next transaction, with no version
-- query per call.
--
-- Partitions that must not be used get a connect string that fails before
-- any network traffic with a message naming the shard: libpq reports
--   definition of service "shardid: shard 17 is not placed on any node" not found
-- A frozen shard (being moved) keeps its node, read-only: writes fail with
-- SQLSTATE 25006 and can be retried once the move is done; reads go on.
--
-- Locking: every function that changes the placement takes SHARE ROW
-- EXCLUSIVE on shardid.shard_placement, so placement changes and their
-- ALTER SERVER are serialised. All functions are for administrators
-- (EXECUTE revoked from PUBLIC); the tables are readable by everyone.

-- The data nodes: a name and a libpq key=value connect string.
CREATE TABLE shardid.nodes (
    node     text PRIMARY KEY
             CHECK (node OPERATOR(pg_catalog.~) '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,62}$'),
    connstr  text NOT NULL,
    added_at timestamptz NOT NULL DEFAULT pg_catalog.now()
);
SELECT pg_catalog.pg_extension_config_dump('shardid.nodes', '');
GRANT SELECT ON shardid.nodes TO PUBLIC;

-- Which node holds each placed shard; frozen while a move copies it.
CREATE TABLE shardid.shard_placement (
    shard     integer PRIMARY KEY CHECK (shard OPERATOR(pg_catalog.>=) 0),
    node      text NOT NULL REFERENCES shardid.nodes (node),
    frozen    boolean NOT NULL DEFAULT false,
    placed_at timestamptz NOT NULL DEFAULT pg_catalog.now()
);
CREATE INDEX shard_placement_node ON shardid.shard_placement (node);
SELECT pg_catalog.pg_extension_config_dump('shardid.shard_placement', '');
GRANT SELECT ON shardid.shard_placement TO PUBLIC;

-- The placement with each node's connect string.
CREATE VIEW shardid.placement AS
SELECT p.shard, p.node, n.connstr, p.frozen, p.placed_at
  FROM shardid.shard_placement AS p
  JOIN shardid.nodes AS n ON n.node OPERATOR(pg_catalog.=) p.node;
GRANT SELECT ON shardid.placement TO PUBLIC;

-- The connect string of every PL/Proxy partition, in partition order: the
-- node's for a placed shard, read-only for a frozen one, a failing one that
-- names the shard for the rest. Also usable from plproxy.get_cluster_partitions().
CREATE FUNCTION shardid.partition_connstrs(OUT shard integer, OUT connstr text)
    RETURNS SETOF record
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    l shardid.layout_report := shardid.layout();
BEGIN
    -- PL/Proxy allocates one slot per partition and SQL/MED keeps them all
    -- in one catalog row: 2^16 partitions is the most this supports.
    IF l.shard_bits OPERATOR(pg_catalog.>) 16 THEN
        RAISE EXCEPTION 'a PL/Proxy cluster cannot have one partition per shard with % shard bits', l.shard_bits
            USING ERRCODE = 'program_limit_exceeded',
                  DETAIL = pg_catalog.format('This layout has %s shards; the router supports at most 65536 (16 shard bits).',
                                             l.max_shard::bigint OPERATOR(pg_catalog.+) 1);
    END IF;
    RETURN QUERY
    SELECT g.s,
           CASE
               WHEN p.shard IS NULL THEN
                   pg_catalog.format('service=''shardid: shard %s is not placed on any node''', g.s)
               WHEN p.frozen THEN
                   n.connstr OPERATOR(pg_catalog.||) ' options=''-c default_transaction_read_only=on'''
               ELSE n.connstr
           END
      FROM pg_catalog.generate_series(0, l.max_shard) AS g(s)
      LEFT JOIN shardid.shard_placement AS p ON p.shard OPERATOR(pg_catalog.=) g.s
      LEFT JOIN shardid.nodes AS n ON n.node OPERATOR(pg_catalog.=) p.node
     ORDER BY g.s;
END
$$;

-- Rebuilds the SQL/MED server 'shardid' (the PL/Proxy cluster) from the
-- placement: creates it, or alters only the partitions that changed.
-- Returns the number of partitions changed.
CREATE FUNCTION shardid.refresh_cluster() RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    opts    text;
    changes integer;
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_foreign_data_wrapper AS w
                    WHERE w.fdwname OPERATOR(pg_catalog.=) 'plproxy') THEN
        RAISE EXCEPTION 'PL/Proxy is not installed in database %', pg_catalog.current_database()
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'The router serves the placement as the PL/Proxy cluster ''shardid'' (a foreign server of the plproxy wrapper).',
                  HINT = 'On the router: CREATE EXTENSION plproxy; (Debian package postgresql-15-plproxy). Data nodes need only shardid.';
    END IF;
    LOCK TABLE shardid.shard_placement IN SHARE ROW EXCLUSIVE MODE;

    IF NOT EXISTS (SELECT FROM pg_catalog.pg_foreign_server AS s
                    WHERE s.srvname OPERATOR(pg_catalog.=) 'shardid') THEN
        SELECT pg_catalog.string_agg(pg_catalog.format('p%s %L', c.shard, c.connstr), ', ' ORDER BY c.shard),
               pg_catalog.count(*)
          INTO opts, changes
          FROM shardid.partition_connstrs() AS c;
        EXECUTE pg_catalog.format('CREATE SERVER shardid FOREIGN DATA WRAPPER plproxy OPTIONS (%s)', opts);
        -- No user/password: PL/Proxy connects as the calling role.
        CREATE USER MAPPING FOR PUBLIC SERVER shardid;
        RETURN changes;
    END IF;

    -- Diff the partition options against the placement; other options
    -- (connection_lifetime, query_timeout, ...) are the administrator's.
    WITH cur AS (
        SELECT o.option_name AS k, o.option_value AS v
          FROM pg_catalog.pg_foreign_server AS s,
               pg_catalog.pg_options_to_table(s.srvoptions) AS o
         WHERE s.srvname OPERATOR(pg_catalog.=) 'shardid'
           AND o.option_name OPERATOR(pg_catalog.~) '^p[0-9]+$'
    ), want AS (
        SELECT 'p' OPERATOR(pg_catalog.||) c.shard AS k, c.connstr AS v, c.shard
          FROM shardid.partition_connstrs() AS c
    ), diff AS (
        SELECT CASE WHEN cur.k IS NULL THEN pg_catalog.format('ADD %s %L', want.k, want.v)
                    WHEN want.k IS NULL THEN pg_catalog.format('DROP %s', cur.k)
                    ELSE pg_catalog.format('SET %s %L', want.k, want.v) END AS op,
               COALESCE(want.shard, pg_catalog.substr(cur.k, 2)::integer) AS ord
          FROM want FULL JOIN cur ON cur.k OPERATOR(pg_catalog.=) want.k
         WHERE cur.v IS DISTINCT FROM want.v
    )
    SELECT pg_catalog.string_agg(d.op, ', ' ORDER BY d.ord), pg_catalog.count(*)
      INTO opts, changes
      FROM diff AS d;
    IF changes OPERATOR(pg_catalog.>) 0 THEN
        EXECUTE pg_catalog.format('ALTER SERVER shardid OPTIONS (%s)', opts);
    END IF;
    RETURN changes;
END
$$;

-- Registers a data node. connstr is libpq key=value form; it must not set
-- options (a frozen shard's connect string appends its own).
CREATE FUNCTION shardid.add_node(name text, connstr text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF name IS NULL OR connstr IS NULL THEN
        RAISE EXCEPTION 'add_node() arguments must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF name OPERATOR(pg_catalog.!~) '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,62}$' THEN
        RAISE EXCEPTION 'invalid node name "%"', name
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'A node name is 1 to 63 characters: letters, digits, "_", "." and "-", not starting with "." or "-".';
    END IF;
    IF connstr OPERATOR(pg_catalog.~) '^\s*$' OR connstr OPERATOR(pg_catalog.~*) '^\s*postgres(ql)?://' THEN
        RAISE EXCEPTION 'invalid connect string for node %: %', name, pg_catalog.quote_literal(connstr)
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give a libpq key=value connect string, e.g. ''host=10.0.0.5 port=5432 dbname=app''.';
    END IF;
    IF connstr OPERATOR(pg_catalog.~*) '(^|\s)options\s*=' THEN
        RAISE EXCEPTION 'the connect string of node % must not set options', name
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'Freezing a shard for a move appends options=''-c default_transaction_read_only=on'', which would replace them.',
                  HINT = 'Set per-database or per-role settings on the node instead (ALTER DATABASE/ROLE ... SET).';
    END IF;
    LOCK TABLE shardid.shard_placement IN SHARE ROW EXCLUSIVE MODE;
    IF EXISTS (SELECT FROM shardid.nodes AS n WHERE n.node OPERATOR(pg_catalog.=) add_node.name) THEN
        RAISE EXCEPTION 'node "%" already exists', name
            USING ERRCODE = 'duplicate_object',
                  DETAIL = pg_catalog.format('Its connect string is %s.',
                                             (SELECT pg_catalog.quote_literal(n.connstr) FROM shardid.nodes AS n
                                               WHERE n.node OPERATOR(pg_catalog.=) add_node.name));
    END IF;
    INSERT INTO shardid.nodes (node, connstr) VALUES (name, connstr);
    PERFORM shardid.refresh_cluster();
END
$$;

-- Unregisters a node that holds no shard.
CREATE FUNCTION shardid.remove_node(name text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    held integer;
BEGIN
    LOCK TABLE shardid.shard_placement IN SHARE ROW EXCLUSIVE MODE;
    IF NOT EXISTS (SELECT FROM shardid.nodes AS n WHERE n.node OPERATOR(pg_catalog.=) remove_node.name) THEN
        RAISE EXCEPTION 'node "%" does not exist', name USING ERRCODE = 'undefined_object';
    END IF;
    SELECT pg_catalog.count(*) INTO held FROM shardid.shard_placement AS p
     WHERE p.node OPERATOR(pg_catalog.=) remove_node.name;
    IF held OPERATOR(pg_catalog.>) 0 THEN
        RAISE EXCEPTION 'node "%" still holds shards (%)', name, held
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Move them to other nodes first (bin/shardid-move-shard).';
    END IF;
    DELETE FROM shardid.nodes AS n WHERE n.node OPERATOR(pg_catalog.=) remove_node.name;
END
$$;

-- Places shards first..last on a node: the node must already hold them
-- (created there with shardid.create_shards). A shard already on this node
-- is left alone; one placed on another node is refused (move it instead).
-- Returns the number of shards newly placed.
CREATE FUNCTION shardid.place_shards(node text, first integer, last integer) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    other shardid.shard_placement;
    added integer;
BEGIN
    IF node IS NULL OR first IS NULL OR last IS NULL THEN
        RAISE EXCEPTION 'place_shards() arguments must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF first OPERATOR(pg_catalog.>) last THEN
        RAISE EXCEPTION 'empty shard range % .. %', first, last
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give the first shard, then the last (inclusive).';
    END IF;
    PERFORM shardid._check_shard(first);
    PERFORM shardid._check_shard(last);
    LOCK TABLE shardid.shard_placement IN SHARE ROW EXCLUSIVE MODE;
    IF NOT EXISTS (SELECT FROM shardid.nodes AS n WHERE n.node OPERATOR(pg_catalog.=) place_shards.node) THEN
        RAISE EXCEPTION 'node "%" does not exist', node
            USING ERRCODE = 'undefined_object',
                  HINT = 'Register it first with shardid.add_node(name, connstr).';
    END IF;
    SELECT * INTO other FROM shardid.shard_placement AS p
     WHERE p.shard OPERATOR(pg_catalog.>=) first AND p.shard OPERATOR(pg_catalog.<=) last
       AND p.node OPERATOR(pg_catalog.<>) place_shards.node
     ORDER BY p.shard LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'shard % is already placed on node "%"', other.shard, other.node
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = pg_catalog.format('No shard of %s .. %s was placed.', first, last),
                  HINT = 'Move a placed shard with bin/shardid-move-shard, which copies its data.';
    END IF;
    INSERT INTO shardid.shard_placement (shard, node)
    SELECT g, place_shards.node FROM pg_catalog.generate_series(first, last) AS g
    ON CONFLICT (shard) DO NOTHING;
    GET DIAGNOSTICS added = ROW_COUNT;
    PERFORM shardid.refresh_cluster();
    RETURN added;
END
$$;

-- The placed shards, for fan-out: SPLIT i_shards; RUN ON i_shards; reaches
-- every node once with the shards it holds (RUN ON ALL would also try the
-- partitions of unplaced shards).
CREATE FUNCTION shardid.placed_shards() RETURNS integer[]
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT COALESCE(pg_catalog.array_agg(p.shard ORDER BY p.shard), '{}')
      FROM shardid.shard_placement AS p
$$;

-- First step of a move: the shard's partition turns read-only on its node,
-- so writers through the router fail with 25006 (retry) while it is copied.
-- Returns the node that holds it.
CREATE FUNCTION shardid.freeze_shard(shard integer) RETURNS text
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p shardid.shard_placement;
BEGIN
    LOCK TABLE shardid.shard_placement IN SHARE ROW EXCLUSIVE MODE;
    SELECT * INTO p FROM shardid.shard_placement AS x WHERE x.shard OPERATOR(pg_catalog.=) freeze_shard.shard;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'shard % is not placed on any node', shard USING ERRCODE = 'undefined_object';
    END IF;
    IF p.frozen THEN
        RAISE EXCEPTION 'shard % is already frozen', shard
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Another move of this shard is running, or one failed without cleaning up.',
                  HINT = pg_catalog.format('If no move is running, check node %s and run SELECT shardid.unfreeze_shard(%s);', p.node, shard);
    END IF;
    UPDATE shardid.shard_placement AS x SET frozen = true WHERE x.shard OPERATOR(pg_catalog.=) freeze_shard.shard;
    PERFORM shardid.refresh_cluster();
    RETURN p.node;
END
$$;

-- Undoes freeze_shard() after a failed or abandoned move.
CREATE FUNCTION shardid.unfreeze_shard(shard integer) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    LOCK TABLE shardid.shard_placement IN SHARE ROW EXCLUSIVE MODE;
    UPDATE shardid.shard_placement AS x SET frozen = false
     WHERE x.shard OPERATOR(pg_catalog.=) unfreeze_shard.shard;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'shard % is not placed on any node', shard USING ERRCODE = 'undefined_object';
    END IF;
    PERFORM shardid.refresh_cluster();
END
$$;

-- Last step of a move, once the new node holds a verified copy: the
-- partition points at the new node, writable again.
CREATE FUNCTION shardid.repoint_shard(shard integer, node text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p shardid.shard_placement;
BEGIN
    LOCK TABLE shardid.shard_placement IN SHARE ROW EXCLUSIVE MODE;
    SELECT * INTO p FROM shardid.shard_placement AS x WHERE x.shard OPERATOR(pg_catalog.=) repoint_shard.shard;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'shard % is not placed on any node', shard USING ERRCODE = 'undefined_object';
    END IF;
    IF NOT p.frozen THEN
        RAISE EXCEPTION 'shard % is not frozen', shard
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Repointing a shard that takes writes would lose the writes made during the copy.',
                  HINT = 'Use bin/shardid-move-shard, which freezes, copies, checks and repoints.';
    END IF;
    IF NOT EXISTS (SELECT FROM shardid.nodes AS n WHERE n.node OPERATOR(pg_catalog.=) repoint_shard.node) THEN
        RAISE EXCEPTION 'node "%" does not exist', node USING ERRCODE = 'undefined_object';
    END IF;
    UPDATE shardid.shard_placement AS x
       SET node = repoint_shard.node, frozen = false, placed_at = pg_catalog.now()
     WHERE x.shard OPERATOR(pg_catalog.=) repoint_shard.shard;
    PERFORM shardid.refresh_cluster();
END
$$;

-- On the old node after a move: any write that still reaches the retired
-- copy of a shard fails instead of being lost there.
CREATE FUNCTION shardid._refuse_retired_write() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION 'shard % moved to node %: %.% is its retired copy', TG_ARGV[0], TG_ARGV[1],
            pg_catalog.quote_ident(TG_TABLE_SCHEMA), pg_catalog.quote_ident(TG_TABLE_NAME)
        USING ERRCODE = 'read_only_sql_transaction',
              HINT = 'Retry through the router.';
END
$$;

REVOKE ALL ON FUNCTION shardid.refresh_cluster() FROM PUBLIC;
REVOKE ALL ON FUNCTION shardid.add_node(text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION shardid.remove_node(text) FROM PUBLIC;
REVOKE ALL ON FUNCTION shardid.place_shards(text, integer, integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION shardid.freeze_shard(integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION shardid.unfreeze_shard(integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION shardid.repoint_shard(integer, text) FROM PUBLIC;

COMMENT ON TABLE shardid.nodes IS
    'Router: the data nodes, by name, with a libpq key=value connect string. Written by add_node(), remove_node().';
COMMENT ON TABLE shardid.shard_placement IS
    'Router: the node holding each placed logical shard; frozen while bin/shardid-move-shard copies it.';
COMMENT ON VIEW shardid.placement IS
    'Router: each placed shard with its node, the node''s connect string, and whether it is frozen for a move.';
COMMENT ON FUNCTION shardid.partition_connstrs() IS
    'Router: the connect string of each PL/Proxy partition (= logical shard) of cluster ''shardid'', in order; unplaced shards get one that fails naming the shard, frozen ones a read-only one.';
COMMENT ON FUNCTION shardid.refresh_cluster() IS
    'Router: creates or updates the PL/Proxy cluster ''shardid'' (SQL/MED server) from the placement; returns the number of partitions changed. Needs CREATE EXTENSION plproxy.';
COMMENT ON FUNCTION shardid.add_node(text, text) IS
    'Router: registers a data node (name, libpq key=value connect string) and creates the PL/Proxy cluster ''shardid'' if needed.';
COMMENT ON FUNCTION shardid.remove_node(text) IS
    'Router: unregisters a data node that holds no shard.';
COMMENT ON FUNCTION shardid.place_shards(text, integer, integer) IS
    'Router: routes shards first..last to a node that already holds them; returns how many were newly placed. Refuses shards placed on another node.';
COMMENT ON FUNCTION shardid.placed_shards() IS
    'Router: the placed shard numbers, for fan-out with SPLIT i_shards; RUN ON i_shards;';
COMMENT ON FUNCTION shardid.freeze_shard(integer) IS
    'Router, move step 1: makes the shard''s partition read-only (writes fail with 25006); returns its node.';
COMMENT ON FUNCTION shardid.unfreeze_shard(integer) IS
    'Router: undoes freeze_shard() after a failed move.';
COMMENT ON FUNCTION shardid.repoint_shard(integer, text) IS
    'Router, last move step: points a frozen shard''s partition at its new node and unfreezes it.';
COMMENT ON FUNCTION shardid._refuse_retired_write() IS
    'Trigger on the retired copy of a moved shard: refuses writes (25006, retry through the router).';
