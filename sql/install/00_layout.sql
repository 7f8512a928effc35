-- shardid install script, part 00: the layout and the decoders.
-- Every object is schema-qualified so a hostile search_path cannot hijack it.

\echo Use "CREATE EXTENSION shardid" to load this file. \quit

-- CREATE EXTENSION creates schema shardid (owned by the installing
-- superuser) unless it exists. A pre-existing one could belong to a role
-- that may add its own functions beside shardid's, e.g. an overload
-- next_id(integer, text) that a DEFAULT spelled with an untyped literal
-- would call: refuse it unless only superusers own it and may create in it.
DO $check_schema$
DECLARE
    owner_name name;
    creators   text;
BEGIN
    SELECT r.rolname INTO owner_name
      FROM pg_catalog.pg_namespace AS n
      JOIN pg_catalog.pg_roles AS r ON r.oid OPERATOR(pg_catalog.=) n.nspowner
     WHERE n.nspname OPERATOR(pg_catalog.=) 'shardid' AND NOT r.rolsuper;
    IF FOUND THEN
        RAISE EXCEPTION 'schema "shardid" already exists and is owned by role %, not by a superuser',
                pg_catalog.quote_ident(owner_name)
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'Its owner could add functions that shardid''s callers would run.',
                  HINT = 'Check what the schema holds, drop it (or have a superuser own it and everything in it), then run CREATE EXTENSION shardid again.';
    END IF;
    SELECT pg_catalog.string_agg(CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
                                      ELSE pg_catalog.quote_ident(r.rolname) END, ', ')
      INTO creators
      FROM pg_catalog.pg_namespace AS n,
           LATERAL pg_catalog.aclexplode(n.nspacl) AS a
      LEFT JOIN pg_catalog.pg_roles AS r ON r.oid OPERATOR(pg_catalog.=) a.grantee
     WHERE n.nspname OPERATOR(pg_catalog.=) 'shardid'
       AND a.privilege_type OPERATOR(pg_catalog.=) 'CREATE'
       AND NOT COALESCE(r.rolsuper, false);
    IF creators IS NOT NULL THEN
        RAISE EXCEPTION 'schema "shardid" already exists and roles other than superusers may create objects in it: %',
                creators
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'They could add functions that shardid''s callers would run.',
                  HINT = 'Check what the schema holds, REVOKE CREATE ON SCHEMA shardid from them (or drop the schema), then run CREATE EXTENSION shardid again.';
    END IF;
END
$check_schema$;

-- The layout of this database. Empty means Instagram's default layout; a row
-- is written by configure(). Dumped by pg_dump as extension configuration.
CREATE TABLE shardid.layout_config (
    singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    epoch_ms   bigint  NOT NULL,
    shard_bits integer NOT NULL,
    seq_bits   integer NOT NULL
);
SELECT pg_catalog.pg_extension_config_dump('shardid.layout_config', '');

-- Advanced by the first ID each backend issues (from C, bypassing
-- privileges): once it has a value, IDs exist and the layout is frozen.
-- Readable by everyone (layout() reports it), advanced by no ordinary role.
-- Dumped so a restore stays frozen.
CREATE SEQUENCE shardid.ids_issued AS bigint;
SELECT pg_catalog.pg_extension_config_dump('shardid.ids_issued', '');
GRANT SELECT ON SEQUENCE shardid.ids_issued TO PUBLIC;

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
                  HINT = 'Keep this layout (shardid.layout() shows it), or create a new database, run configure() there before its first next_id() call, and move the data.';
    END IF;
    PERFORM shardid._refuse_stored_decodes(new_epoch_ms, configure.shard_bits, configure.seq_bits);
    INSERT INTO shardid.layout_config AS c (singleton, epoch_ms, shard_bits, seq_bits)
        VALUES (true, new_epoch_ms, configure.shard_bits, configure.seq_bits)
        ON CONFLICT (singleton) DO UPDATE
        SET epoch_ms = excluded.epoch_ms, shard_bits = excluded.shard_bits,
            seq_bits = excluded.seq_bits;
    RETURN shardid.layout();
END
$$;
REVOKE ALL ON FUNCTION shardid.configure(timestamptz, integer, integer) FROM PUBLIC;

-- The decoders are IMMUTABLE so indexes, generated columns and constraints
-- can use them: the layout they read changes only while nothing stores
-- their results (configure() checks shardid.stored_decodes, 05_stored_decodes.sql).
CREATE FUNCTION shardid.id_time(id bigint) RETURNS timestamptz
    LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_id_time';
CREATE FUNCTION shardid.id_shard(id bigint) RETURNS integer
    LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_id_shard';
CREATE FUNCTION shardid.id_seq(id bigint) RETURNS integer
    LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_id_seq';
CREATE FUNCTION shardid.id_decode(id bigint, OUT ts timestamptz, OUT shard integer, OUT seq integer)
    LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_id_decode';
CREATE FUNCTION shardid.make_id(ts timestamptz, shard integer, seq integer) RETURNS bigint
    LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_make_id';
CREATE FUNCTION shardid.time_to_id(ts timestamptz) RETURNS bigint
    LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_time_to_id';
CREATE FUNCTION shardid.to_shortcode(id bigint) RETURNS text
    LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_to_shortcode';
CREATE FUNCTION shardid.from_shortcode(code text) RETURNS bigint
    LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_from_shortcode';

GRANT USAGE ON SCHEMA shardid TO PUBLIC;

COMMENT ON TABLE shardid.layout_config IS
    'The ID layout of this database (empty: Instagram''s default). Change it with shardid.configure().';
COMMENT ON SEQUENCE shardid.ids_issued IS
    'Marker: advanced by next_id() once an ID has been issued; from then on the layout is frozen. Readable by PUBLIC, advanced by no ordinary role.';
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
