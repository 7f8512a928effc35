-- shardid 0.1 -> 0.2: what CREATE OR REPLACE cannot do. The build appends
-- every function and view of sql/install/*.sql (sql/include.awk), so the
-- upgrade script sql/shardid--0.1--0.2.sql re-creates each of them from the
-- same source as the install script; test/e2e/update.sh checks that both
-- give the same objects.

\echo Use "ALTER EXTENSION shardid UPDATE TO '0.2'" to load this file. \quit

-- The install script's schema check, so a 0.1 installed into a schema that
-- a non-superuser owns or may create in is not updated either.
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
                  HINT = 'Check what the schema holds, drop it (or have a superuser own it and everything in it), then run CREATE EXTENSION shardid (or ALTER EXTENSION shardid UPDATE) again.';
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
                  HINT = 'Check what the schema holds, REVOKE CREATE ON SCHEMA shardid from them (or drop the schema), then run CREATE EXTENSION shardid (or ALTER EXTENSION shardid UPDATE) again.';
    END IF;
END
$check_schema$;

-- Owner and ACL are not enough: objects a squatter made before an
-- administrator fixed them stay, and an overload such as next_id(integer,
-- text) would still run instead of shardid's. So every object in the schema
-- must be the extension's: a member (none yet at CREATE EXTENSION, whose
-- schema must then be empty), or what PostgreSQL makes with a member (a
-- table's row type, index, constraints; an array type); shardid creates
-- nothing in its schema at run time (the PL/Proxy server and user mapping
-- belong to no schema). Each object is named once: what PostgreSQL made for
-- another one listed (a row type, an index, a statistics object of a table
-- listed) is not.
DO $check_members$
DECLARE
    nsp     oid := (SELECT n.oid FROM pg_catalog.pg_namespace AS n
                     WHERE n.nspname OPERATOR(pg_catalog.=) 'shardid');
    ext     oid := (SELECT e.oid FROM pg_catalog.pg_extension AS e
                     WHERE e.extname OPERATOR(pg_catalog.=) 'shardid');
    n       bigint;
    listed  text;
BEGIN
    WITH RECURSIVE ours (classid, objid) AS (
        SELECT d.classid, d.objid FROM pg_catalog.pg_depend AS d
         WHERE d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
           AND d.refobjid OPERATOR(pg_catalog.=) ext
           AND d.deptype OPERATOR(pg_catalog.=) 'e'
        UNION
        SELECT d.classid, d.objid FROM pg_catalog.pg_depend AS d
          JOIN ours AS o ON d.refclassid OPERATOR(pg_catalog.=) o.classid
                        AND d.refobjid OPERATOR(pg_catalog.=) o.objid
         WHERE d.deptype OPERATOR(pg_catalog.=) ANY (ARRAY['i', 'a']::"char"[])
    ), in_schema (classid, objid) AS (
        SELECT 'pg_catalog.pg_class'::pg_catalog.regclass, x.oid FROM pg_catalog.pg_class AS x
         WHERE x.relnamespace OPERATOR(pg_catalog.=) nsp
        UNION ALL
        SELECT 'pg_catalog.pg_proc'::pg_catalog.regclass, x.oid FROM pg_catalog.pg_proc AS x
         WHERE x.pronamespace OPERATOR(pg_catalog.=) nsp
        UNION ALL
        SELECT 'pg_catalog.pg_type'::pg_catalog.regclass, x.oid FROM pg_catalog.pg_type AS x
         WHERE x.typnamespace OPERATOR(pg_catalog.=) nsp
        UNION ALL
        SELECT 'pg_catalog.pg_operator'::pg_catalog.regclass, x.oid FROM pg_catalog.pg_operator AS x
         WHERE x.oprnamespace OPERATOR(pg_catalog.=) nsp
        UNION ALL
        SELECT 'pg_catalog.pg_opclass'::pg_catalog.regclass, x.oid FROM pg_catalog.pg_opclass AS x
         WHERE x.opcnamespace OPERATOR(pg_catalog.=) nsp
        UNION ALL
        SELECT 'pg_catalog.pg_opfamily'::pg_catalog.regclass, x.oid FROM pg_catalog.pg_opfamily AS x
         WHERE x.opfnamespace OPERATOR(pg_catalog.=) nsp
        UNION ALL
        SELECT 'pg_catalog.pg_collation'::pg_catalog.regclass, x.oid FROM pg_catalog.pg_collation AS x
         WHERE x.collnamespace OPERATOR(pg_catalog.=) nsp
        UNION ALL
        SELECT 'pg_catalog.pg_conversion'::pg_catalog.regclass, x.oid FROM pg_catalog.pg_conversion AS x
         WHERE x.connamespace OPERATOR(pg_catalog.=) nsp
        UNION ALL
        SELECT 'pg_catalog.pg_ts_config'::pg_catalog.regclass, x.oid FROM pg_catalog.pg_ts_config AS x
         WHERE x.cfgnamespace OPERATOR(pg_catalog.=) nsp
        UNION ALL
        SELECT 'pg_catalog.pg_ts_dict'::pg_catalog.regclass, x.oid FROM pg_catalog.pg_ts_dict AS x
         WHERE x.dictnamespace OPERATOR(pg_catalog.=) nsp
        UNION ALL
        SELECT 'pg_catalog.pg_ts_parser'::pg_catalog.regclass, x.oid FROM pg_catalog.pg_ts_parser AS x
         WHERE x.prsnamespace OPERATOR(pg_catalog.=) nsp
        UNION ALL
        SELECT 'pg_catalog.pg_ts_template'::pg_catalog.regclass, x.oid FROM pg_catalog.pg_ts_template AS x
         WHERE x.tmplnamespace OPERATOR(pg_catalog.=) nsp
        UNION ALL
        SELECT 'pg_catalog.pg_statistic_ext'::pg_catalog.regclass, x.oid FROM pg_catalog.pg_statistic_ext AS x
         WHERE x.stxnamespace OPERATOR(pg_catalog.=) nsp
        UNION ALL
        SELECT 'pg_catalog.pg_constraint'::pg_catalog.regclass, x.oid FROM pg_catalog.pg_constraint AS x
         WHERE x.connamespace OPERATOR(pg_catalog.=) nsp
        UNION ALL
        SELECT 'pg_catalog.pg_extension'::pg_catalog.regclass, x.oid FROM pg_catalog.pg_extension AS x
         WHERE x.extnamespace OPERATOR(pg_catalog.=) nsp AND x.oid OPERATOR(pg_catalog.<>) ext
    ), strangers AS (
        SELECT s.classid, s.objid FROM in_schema AS s
         WHERE NOT EXISTS (SELECT FROM ours AS o
                            WHERE o.classid OPERATOR(pg_catalog.=) s.classid
                              AND o.objid OPERATOR(pg_catalog.=) s.objid)
    )
    SELECT pg_catalog.count(*),
           pg_catalog.string_agg(pg_catalog.concat(i.type, ' ', i.identity), ', '
                                 ORDER BY i.type COLLATE pg_catalog."C", i.identity COLLATE pg_catalog."C")
      INTO n, listed
      FROM strangers AS s,
           LATERAL pg_catalog.pg_identify_object(s.classid, s.objid, 0) AS i
     WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_depend AS d
                         JOIN strangers AS o ON d.refclassid OPERATOR(pg_catalog.=) o.classid
                                            AND d.refobjid OPERATOR(pg_catalog.=) o.objid
                        WHERE d.classid OPERATOR(pg_catalog.=) s.classid
                          AND d.objid OPERATOR(pg_catalog.=) s.objid
                          AND d.deptype OPERATOR(pg_catalog.=) ANY (ARRAY['i', 'a']::"char"[])
                          AND (o.classid, o.objid) IS DISTINCT FROM (s.classid, s.objid));
    IF n OPERATOR(pg_catalog.>) 0 THEN
        RAISE EXCEPTION 'schema "shardid" holds objects that are not part of extension shardid: %', listed
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'shardid''s callers find functions, operators and types there by name: an object beside shardid''s, such as an overload of next_id(), could run instead of it.',
                  HINT = 'Drop them or move them to another schema (ALTER ... SET SCHEMA), then run CREATE EXTENSION shardid (or ALTER EXTENSION shardid UPDATE) again.';
    END IF;
END
$check_members$;

-- The layout marker is advanced only when an ID is issued, and by no
-- ordinary role.
REVOKE USAGE ON SEQUENCE shardid.ids_issued FROM PUBLIC;
GRANT SELECT ON SEQUENCE shardid.ids_issued TO PUBLIC;
COMMENT ON SEQUENCE shardid.ids_issued IS
    'Marker: advanced by next_id() once an ID has been issued; from then on the layout is frozen. Readable by PUBLIC, advanced by no ordinary role.';

-- The freeze record (written by next_id() from now on), started for a
-- database whose marker says IDs were issued under 0.1.
-- The freeze record: next_id() inserts a row (from C, bypassing privileges)
-- in the transaction of the first ID a backend issues, until a committed
-- row is there. Unlike the marker sequence shardid.ids_issued, nothing but
-- DROP EXTENSION removes a row: setval() cannot touch it, PostgreSQL 19's
-- sequence replication does not copy it, and its trigger refuses UPDATE,
-- DELETE and TRUNCATE from any session, replication's included. Not dumped:
-- a restored database is frozen by its restored sequences, and writes its
-- own record at its first ID.
CREATE TABLE shardid.layout_freeze (
    issued_at  timestamptz NOT NULL,
    epoch_ms   bigint      NOT NULL,
    shard_bits integer     NOT NULL,
    seq_bits   integer     NOT NULL
);

COMMENT ON TABLE shardid.layout_freeze IS
    'Freeze record: a row written by next_id() when it first issues IDs in this database (with the layout then); while any row exists the layout cannot change. Append-only.';
INSERT INTO shardid.layout_freeze (issued_at, epoch_ms, shard_bits, seq_bits)
SELECT pg_catalog.now(), coalesce(c.epoch_ms, 1314220021721), coalesce(c.shard_bits, 13), coalesce(c.seq_bits, 10)
  FROM (SELECT) AS one LEFT JOIN shardid.layout_config AS c ON true
 WHERE (SELECT s.is_called FROM shardid.ids_issued AS s);

-- Connect strings must not hold passwords: the PL/Proxy server's options and
-- shardid.nodes are readable by other roles and copied by pg_dump. libpq
-- parses each one (the functions are re-created below with the others).
-- A connect string as libpq parses it (src/pg/connstr.cpp).
CREATE OR REPLACE FUNCTION shardid._connstr_options(connstr text, OUT keyword text, OUT value text, OUT secret boolean)
    RETURNS SETOF record
    LANGUAGE c IMMUTABLE STRICT AS 'MODULE_PATHNAME', 'shardid_connstr_options';

REVOKE ALL ON FUNCTION shardid._connstr_options(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid._connstr_options(text) IS
    'Internal: the options a libpq connect string (key=value or URI) sets, as libpq''s PQconninfoParse() reads them; secret for those libpq hides (password, sslpassword, ...). 22023 if libpq cannot parse it.';
-- The secret a node connect string holds, as libpq reads it, or NULL. A
-- dbname that libpq takes for a connect string of its own (a URI, or text
-- with "=") is searched as well; one that libpq cannot parse counts as a
-- secret, since its text would show wherever the connect string does. A
-- string libpq cannot parse at all raises 22023. Used by add_node() and by
-- the CHECK on shardid.nodes. Not PARALLEL SAFE: its exception block is a
-- subtransaction.
CREATE OR REPLACE FUNCTION shardid._connstr_secret(connstr text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    o     record;
    found text;
BEGIN
    FOR o IN SELECT * FROM shardid._connstr_options(connstr) LOOP
        IF o.secret THEN
            RETURN o.keyword;
        END IF;
        IF o.keyword = 'dbname'
           AND (o.value ~ '^postgres(ql)?://'
                OR pg_catalog.strpos(o.value, '=') > 0) THEN
            BEGIN
                found := shardid._connstr_secret(o.value);
            EXCEPTION WHEN invalid_parameter_value THEN
                RETURN 'a dbname libpq cannot parse';
            END;
            IF found IS NOT NULL THEN
                RETURN found || ' in dbname';
            END IF;
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;

REVOKE ALL ON FUNCTION shardid._connstr_secret(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid._connstr_secret(text) IS
    'Internal: the secret a libpq connect string holds (password, sslpassword, ..., also in a dbname that is itself a connect string), NULL if none; 22023 if libpq cannot parse it. For add_node() and the CHECK on shardid.nodes.';
DO $$
DECLARE
    n     record;
    found text;
    bad   text[] := '{}';
BEGIN
    FOR n IN SELECT * FROM shardid.nodes AS x ORDER BY x.node LOOP
        BEGIN
            found := shardid._connstr_secret(n.connstr);
        EXCEPTION WHEN invalid_parameter_value THEN
            found := 'text libpq cannot parse';
        END;
        IF found IS NOT NULL THEN
            bad := bad OPERATOR(pg_catalog.||) pg_catalog.format('%s (%s)', n.node, found);
        END IF;
    END LOOP;
    IF pg_catalog.cardinality(bad) OPERATOR(pg_catalog.>) 0 THEN
        RAISE EXCEPTION 'shardid 0.2 refuses node connect strings that hold a password: %',
                pg_catalog.array_to_string(bad, ', ')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Put the passwords in ~/.pgpass of the router''s server user, remove them with UPDATE shardid.nodes SET connstr = ...; SELECT shardid.refresh_cluster(); then update again.';
    END IF;
END
$$;
ALTER TABLE shardid.nodes ADD CONSTRAINT nodes_connstr_no_password
    CHECK (shardid._connstr_secret(connstr) IS NULL);
REVOKE SELECT ON shardid.nodes FROM PUBLIC;
COMMENT ON TABLE shardid.nodes IS
    'Router: the data nodes, by name, with a libpq key=value connect string (never a password). Written by add_node(), remove_node(). Readable by administrators only.';
COMMENT ON TABLE shardid.shard_placement IS
    'Router: the node holding each placed logical shard; frozen (read-only through the router) by freeze_shard().';

-- Online shard moves: one row per move in progress.
-- Moves in progress, one row per shard, written by shardid.move_shard():
-- schema (the target's copy made from its templates) -> copy (publication,
-- slot, subscription: initial copy, then catch-up while the application
-- writes) -> frozen (writes refused on the source while the target
-- confirms source_lsn and gets the generators) -> caught_up (the source's
-- freeze made permanent) -> repointed (router switched; subscription,
-- slots and publication dropped, the old copy retired); the row is deleted
-- when the move is done or rolled back (phase aborting meanwhile).
-- move_id (ms since 1970 at the start) names the move's publication, slot,
-- subscription (shardid_move_<shard>_<move_id>) and retired schema; the
-- progress columns are refreshed while it copies (view move_progress).
-- Not dumped: a restored router has no move in progress.
CREATE TABLE shardid.shard_moves (
    shard          integer PRIMARY KEY REFERENCES shardid.shard_placement (shard),
    move_id        bigint NOT NULL
                   DEFAULT (pg_catalog.date_part('epoch', pg_catalog.clock_timestamp()) OPERATOR(pg_catalog.*) 1000)::bigint,
    source         text NOT NULL REFERENCES shardid.nodes (node),
    target         text NOT NULL REFERENCES shardid.nodes (node),
    schema_name    name NOT NULL,
    mode           text NOT NULL CHECK (mode OPERATOR(pg_catalog.=) ANY (ARRAY['online', 'offline'])),
    phase          text NOT NULL CHECK (phase OPERATOR(pg_catalog.=) ANY (ARRAY['schema', 'copy', 'frozen', 'caught_up', 'repointed', 'aborting'])),
    source_lsn     pg_lsn,
    subscription   oid,
    target_sysid   text,
    tables_ready   integer,
    tables_total   integer,
    bytes_copied   bigint,
    bytes_total    bigint,
    lag_bytes      bigint,
    last_error     text,
    started_at     timestamptz NOT NULL DEFAULT pg_catalog.now(),
    updated_at     timestamptz NOT NULL DEFAULT pg_catalog.now(),
    frozen_at      timestamptz,
    repointed_at   timestamptz,
    CHECK (source OPERATOR(pg_catalog.<>) target)
);

GRANT SELECT ON shardid.shard_moves TO PUBLIC;

COMMENT ON TABLE shardid.shard_moves IS
    'Router: moves in progress (shardid.move_shard()), one row per shard: source, target, phase (schema, copy, frozen, caught_up, repointed, or aborting), progress, last error. Deleted when the move is done or aborted.';

-- placement gains the move's target and phase (re-created below).
DROP VIEW shardid.placement;
-- Generated names (partitions, retired shards, publications, slots) must fit
-- PostgreSQL's 63 bytes: PostgreSQL would cut base || suffix at byte 63,
-- dropping the suffix (so two names collide) and possibly splitting a
-- multibyte character. This cuts the base instead, at a character boundary.
CREATE OR REPLACE FUNCTION shardid._fit_name(base text, suffix text) RETURNS name
    LANGUAGE plpgsql IMMUTABLE STRICT
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    keep integer := char_length(base);
BEGIN
    IF octet_length(suffix) > 63 THEN
        RAISE EXCEPTION 'name suffix "%" is longer than 63 bytes', suffix
            USING ERRCODE = 'name_too_long';
    END IF;
    WHILE octet_length(left(base, keep)) + octet_length(suffix) > 63 LOOP
        keep := keep - 1;
    END LOOP;
    RETURN left(base, keep) || suffix;
END
$$;

-- PUBLIC may execute it: create_time_partitions(), which table owners run,
-- names partitions with it; it only computes.
COMMENT ON FUNCTION shardid._fit_name(text, text) IS
    'Internal: base || suffix in at most 63 bytes, base cut at a character boundary so the suffix survives. Used by create_time_partitions().';
CREATE OR REPLACE FUNCTION shardid._layout_changed() RETURNS trigger
    LANGUAGE c AS 'MODULE_PATHNAME', 'shardid_layout_changed';

CREATE OR REPLACE TRIGGER layout_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON shardid.layout_config
    FOR EACH STATEMENT EXECUTE FUNCTION shardid._layout_changed();

-- Not for PUBLIC: attached to a table of one's own it would reset every
-- backend's cached layout and plans on each statement. A trigger function
-- needs EXECUTE only to be attached (CREATE TRIGGER checks it), not to fire.
REVOKE ALL ON FUNCTION shardid._layout_changed() FROM PUBLIC;

COMMENT ON FUNCTION shardid._layout_changed() IS
    'Trigger: tells every backend to reread shardid.layout_config.';
-- shardid.layout_freeze only grows: rows come from next_id() or from a
-- publisher's copy of the table. ENABLE ALWAYS, so a session with
-- session_replication_role = replica and logical replication's workers are
-- refused too.
CREATE OR REPLACE FUNCTION shardid._refuse_freeze_reset() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION 'shardid.layout_freeze cannot be changed: % refused', TG_OP
        USING ERRCODE = 'object_not_in_prerequisite_state',
              DETAIL = 'Its rows record that this database has issued IDs, which freezes the layout.',
              HINT = 'Only DROP EXTENSION shardid removes them.';
END
$$;

REVOKE ALL ON FUNCTION shardid._refuse_freeze_reset() FROM PUBLIC;

CREATE OR REPLACE TRIGGER layout_freeze_append_only
    BEFORE UPDATE OR DELETE ON shardid.layout_freeze
    FOR EACH ROW EXECUTE FUNCTION shardid._refuse_freeze_reset();

CREATE OR REPLACE TRIGGER layout_freeze_no_truncate
    BEFORE TRUNCATE ON shardid.layout_freeze
    FOR EACH STATEMENT EXECUTE FUNCTION shardid._refuse_freeze_reset();

ALTER TABLE shardid.layout_freeze ENABLE ALWAYS TRIGGER layout_freeze_append_only;
ALTER TABLE shardid.layout_freeze ENABLE ALWAYS TRIGGER layout_freeze_no_truncate;

COMMENT ON FUNCTION shardid._refuse_freeze_reset() IS
    'Trigger: refuses UPDATE, DELETE and TRUNCATE of shardid.layout_freeze (append-only).';
-- The layout freeze, in one place: configure() calls it before it writes a
-- layout, and the trigger layout_freeze before any other write that would
-- change shardid.layout_config. IDs have been issued, and the layout is
-- frozen, when any of these shows it:
--   - shardid.layout_freeze holds a row (next_id() writes one with its
--     first ID; nothing can remove it);
--   - the marker shardid.ids_issued is_called (pg_dump carries it);
--   - a generator holds a state: a permanent sequence named by a next_id()
--     column DEFAULT, or a registered shard's sequence, is_called.
-- setval() or PostgreSQL 19's sequence replication can reset the sequences,
-- not the table. The lock serialises with the first next_id() of every
-- backend, which marks, then reads the layout.
CREATE OR REPLACE FUNCTION shardid._refuse_issued_layout() RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    evidence text;
    gen      pg_catalog.regclass;
BEGIN
    LOCK TABLE shardid.layout_config IN ACCESS EXCLUSIVE MODE;
    IF EXISTS (SELECT FROM shardid.layout_freeze) THEN
        evidence := 'next_id() has issued IDs: shardid.layout_freeze records it';
    ELSIF (SELECT s.is_called FROM shardid.ids_issued AS s) THEN
        evidence := 'the marker shardid.ids_issued is set';
    ELSE
        FOR gen IN
            SELECT c.oid::pg_catalog.regclass
              FROM (SELECT nd.seq FROM shardid._next_id_defaults AS nd
                    UNION
                    SELECT pg_catalog.to_regclass(pg_catalog.format('%I.%I', r.sequence_schema, r.sequence_name))
                      FROM shardid.shard_registry AS r) AS g
              JOIN pg_catalog.pg_class AS c
                ON c.oid = g.seq AND c.relkind = 'S'
               AND c.relpersistence = 'p'
             ORDER BY c.oid::pg_catalog.regclass::text
        LOOP
            IF pg_catalog.pg_sequence_last_value(gen) IS NOT NULL THEN
                evidence := pg_catalog.format('generator %s holds a state', gen);
                EXIT;
            END IF;
        END LOOP;
    END IF;
    IF evidence IS NOT NULL THEN
        RAISE EXCEPTION 'the layout cannot change: IDs have already been issued'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = pg_catalog.format('Changing the layout would make old and new IDs collide or decode wrongly (%s).', evidence),
                  HINT = 'Keep this layout (shardid.layout() shows it), or create a new database, run configure() there before its first next_id() call, and move the data.';
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid._refuse_issued_layout() FROM PUBLIC;

COMMENT ON FUNCTION shardid._refuse_issued_layout() IS
    'Raises 55000 once IDs have been issued (a freeze record, the ids_issued marker, or a generator holding a state); called by configure() and by the trigger on layout_config.';
-- Writes to shardid.layout_config other than configure()'s (a superuser's
-- INSERT, a data-only restore, a publisher's copy of the table) meet the
-- same freeze: a write that changes the layout is refused once IDs have
-- been issued (_refuse_issued_layout()). A write that keeps the layout
-- passes, and an INSERT of the row already there is skipped rather than
-- refused as a duplicate, so a subscriber configured like its publisher can
-- receive the publisher's copy of the table. A full restore writes the
-- layout before any sequence state (pg_dump restores table data before
-- sequence values), so it is not refused. ENABLE ALWAYS: also under
-- session_replication_role = replica and in logical replication's workers.
CREATE OR REPLACE FUNCTION shardid._refuse_layout_rewrite() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    default_layout CONSTANT bigint[] := ARRAY[1314220021721, 13, 10];
    old_layout bigint[];
    new_layout bigint[];
    stored     boolean;
BEGIN
    SELECT ARRAY[c.epoch_ms, c.shard_bits, c.seq_bits] INTO old_layout FROM shardid.layout_config AS c;
    stored := FOUND;
    old_layout := coalesce(old_layout, default_layout);
    IF TG_OP = 'INSERT' THEN
        new_layout := ARRAY[NEW.epoch_ms, NEW.shard_bits, NEW.seq_bits];
    ELSIF TG_OP = 'UPDATE' THEN
        old_layout := ARRAY[OLD.epoch_ms, OLD.shard_bits, OLD.seq_bits];
        new_layout := ARRAY[NEW.epoch_ms, NEW.shard_bits, NEW.seq_bits];
    ELSIF TG_OP = 'DELETE' THEN
        old_layout := ARRAY[OLD.epoch_ms, OLD.shard_bits, OLD.seq_bits];
        new_layout := default_layout;
    ELSE
        new_layout := default_layout;
    END IF;
    IF new_layout IS DISTINCT FROM old_layout THEN
        PERFORM shardid._refuse_issued_layout();
    ELSIF TG_OP = 'INSERT' AND stored THEN
        RETURN NULL;
    END IF;
    RETURN CASE TG_OP WHEN 'DELETE' THEN OLD WHEN 'TRUNCATE' THEN NULL ELSE NEW END;
END
$$;

REVOKE ALL ON FUNCTION shardid._refuse_layout_rewrite() FROM PUBLIC;

CREATE OR REPLACE TRIGGER layout_freeze
    BEFORE INSERT OR UPDATE OR DELETE ON shardid.layout_config
    FOR EACH ROW EXECUTE FUNCTION shardid._refuse_layout_rewrite();

CREATE OR REPLACE TRIGGER layout_freeze_truncate
    BEFORE TRUNCATE ON shardid.layout_config
    FOR EACH STATEMENT EXECUTE FUNCTION shardid._refuse_layout_rewrite();

ALTER TABLE shardid.layout_config ENABLE ALWAYS TRIGGER layout_freeze;
ALTER TABLE shardid.layout_config ENABLE ALWAYS TRIGGER layout_freeze_truncate;

COMMENT ON FUNCTION shardid._refuse_layout_rewrite() IS
    'Trigger on shardid.layout_config: refuses a write that changes the layout once IDs have been issued (the rule of configure()); skips an INSERT of the row already there.';
CREATE OR REPLACE FUNCTION shardid._check_layout(epoch timestamptz, shard_bits integer, seq_bits integer)
    RETURNS bigint
    LANGUAGE c IMMUTABLE STRICT AS 'MODULE_PATHNAME', 'shardid_check_layout';

REVOKE ALL ON FUNCTION shardid._check_layout(timestamptz, integer, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid._check_layout(timestamptz, integer, integer) IS
    'Validates a layout and returns its epoch in Unix milliseconds; used by configure().';
CREATE OR REPLACE FUNCTION shardid.layout() RETURNS shardid.layout_report
    LANGUAGE c STABLE STRICT AS 'MODULE_PATHNAME', 'shardid_layout';

COMMENT ON FUNCTION shardid.layout() IS
    'The ID layout of this database: epoch, bit widths, max shard, IDs per ms and per second per generator, last representable time, whether IDs have been issued.';
CREATE OR REPLACE FUNCTION shardid.configure(epoch timestamptz, shard_bits integer DEFAULT 13,
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
    -- Refused once IDs have been issued, even with the layout in force
    -- (the rule, and the lock that serialises with the first next_id() of
    -- every backend, are in _refuse_issued_layout()).
    PERFORM shardid._refuse_issued_layout();
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

COMMENT ON FUNCTION shardid.configure(timestamptz, integer, integer) IS
    'Sets the ID layout of this database (epoch, shard_bits, seq_bits); refused once any generator has issued an ID, whatever setval() or replication did to the marker shardid.ids_issued.';
-- The decoders are IMMUTABLE so indexes, generated columns and constraints
-- can use them: the layout they read changes only while nothing stores
-- their results (configure() checks shardid.stored_decodes, 05_stored_decodes.sql).
CREATE OR REPLACE FUNCTION shardid.id_time(id bigint) RETURNS timestamptz
    LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_id_time';

COMMENT ON FUNCTION shardid.id_time(bigint) IS
    'The time part of an ID: when it was generated, to the millisecond.';
CREATE OR REPLACE FUNCTION shardid.id_shard(id bigint) RETURNS integer
    LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_id_shard';

COMMENT ON FUNCTION shardid.id_shard(bigint) IS
    'The logical shard of an ID, for routing.';
CREATE OR REPLACE FUNCTION shardid.id_seq(id bigint) RETURNS integer
    LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_id_seq';

COMMENT ON FUNCTION shardid.id_seq(bigint) IS
    'The sequence part of an ID.';
CREATE OR REPLACE FUNCTION shardid.id_decode(id bigint, OUT ts timestamptz, OUT shard integer, OUT seq integer)
    LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_id_decode';

COMMENT ON FUNCTION shardid.id_decode(bigint) IS
    'All three parts of an ID: (ts, shard, seq).';
CREATE OR REPLACE FUNCTION shardid.make_id(ts timestamptz, shard integer, seq integer) RETURNS bigint
    LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_make_id';

COMMENT ON FUNCTION shardid.make_id(timestamptz, integer, integer) IS
    'Composes an ID from a time (truncated to the millisecond), a shard and a sequence value; for tests and backfills.';
CREATE OR REPLACE FUNCTION shardid.time_to_id(ts timestamptz) RETURNS bigint
    LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_time_to_id';

COMMENT ON FUNCTION shardid.time_to_id(timestamptz) IS
    'The smallest ID of a time''s millisecond: WHERE id >= time_to_id(a) AND id < time_to_id(b) is a primary-key range scan.';
CREATE OR REPLACE FUNCTION shardid.to_shortcode(id bigint) RETURNS text
    LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_to_shortcode';

COMMENT ON FUNCTION shardid.to_shortcode(bigint) IS
    'The URL-safe short code of an ID: base 64 over A-Z a-z 0-9 - _, most significant digit first.';
CREATE OR REPLACE FUNCTION shardid.from_shortcode(code text) RETURNS bigint
    LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_from_shortcode';

COMMENT ON FUNCTION shardid.from_shortcode(text) IS
    'The ID of a short code; refuses characters outside the alphabet, leading zero digits and codes over 63 bits.';
CREATE OR REPLACE VIEW shardid.stored_decodes AS
WITH decoders AS (
    SELECT p.oid
      FROM pg_catalog.pg_proc AS p
     WHERE p.pronamespace OPERATOR(pg_catalog.=) 'shardid'::pg_catalog.regnamespace
       AND p.proname OPERATOR(pg_catalog.=) ANY (ARRAY['id_time', 'id_shard', 'id_seq', 'id_decode',
                                                        'make_id', 'time_to_id']::pg_catalog.name[])
), users AS (
    SELECT DISTINCT d.classid, d.objid, d.objsubid
      FROM pg_catalog.pg_depend AS d
     WHERE d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
       AND d.refobjid IN (SELECT oid FROM decoders)
       AND d.deptype OPERATOR(pg_catalog.=) 'n'
)
-- expression and partial indexes
SELECT 'index'::text AS kind,
       pg_catalog.pg_describe_object(u.classid, u.objid, u.objsubid) AS object,
       i.indrelid::pg_catalog.regclass AS relation
  FROM users AS u
  JOIN pg_catalog.pg_index AS i ON i.indexrelid OPERATOR(pg_catalog.=) u.objid
 WHERE u.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
UNION ALL
-- stored generated columns, and defaults whose values are stored by inserts
SELECT CASE WHEN a.attgenerated OPERATOR(pg_catalog.=) 's' THEN 'generated column'
            ELSE 'column default' END,
       pg_catalog.pg_describe_object(u.classid, u.objid, u.objsubid),
       ad.adrelid::pg_catalog.regclass
  FROM users AS u
  JOIN pg_catalog.pg_attrdef AS ad ON ad.oid OPERATOR(pg_catalog.=) u.objid
  JOIN pg_catalog.pg_attribute AS a
    ON a.attrelid OPERATOR(pg_catalog.=) ad.adrelid AND a.attnum OPERATOR(pg_catalog.=) ad.adnum
 WHERE u.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_attrdef'::pg_catalog.regclass
UNION ALL
-- CHECK constraints of tables and domains
SELECT 'constraint',
       pg_catalog.pg_describe_object(u.classid, u.objid, u.objsubid),
       NULLIF(c.conrelid, 0::pg_catalog.oid)::pg_catalog.regclass
  FROM users AS u
  JOIN pg_catalog.pg_constraint AS c ON c.oid OPERATOR(pg_catalog.=) u.objid
 WHERE u.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_constraint'::pg_catalog.regclass
UNION ALL
-- materialized views (plain views store nothing)
SELECT 'materialized view',
       pg_catalog.pg_describe_object('pg_catalog.pg_class'::pg_catalog.regclass, r.ev_class, 0),
       r.ev_class::pg_catalog.regclass
  FROM users AS u
  JOIN pg_catalog.pg_rewrite AS r ON r.oid OPERATOR(pg_catalog.=) u.objid
  JOIN pg_catalog.pg_class AS m ON m.oid OPERATOR(pg_catalog.=) r.ev_class
 WHERE u.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_rewrite'::pg_catalog.regclass
   AND m.relkind OPERATOR(pg_catalog.=) 'm'
UNION ALL
-- partition bounds are stored as constants, so pg_depend does not see
-- time_to_id() in them: count every partition of a table range-partitioned
-- on a column whose default is shardid.next_id()
SELECT 'partition bound',
       'partition bound of ' OPERATOR(pg_catalog.||)
           pg_catalog.pg_describe_object('pg_catalog.pg_class'::pg_catalog.regclass, inh.inhrelid, 0),
       inh.inhrelid::pg_catalog.regclass
  FROM pg_catalog.pg_partitioned_table AS pt
  JOIN pg_catalog.pg_attrdef AS ad
    ON ad.adrelid OPERATOR(pg_catalog.=) pt.partrelid
   AND ad.adnum OPERATOR(pg_catalog.=) pt.partattrs[0]
  JOIN pg_catalog.pg_inherits AS inh ON inh.inhparent OPERATOR(pg_catalog.=) pt.partrelid
 WHERE pt.partstrat OPERATOR(pg_catalog.=) 'r'
   AND pt.partnatts OPERATOR(pg_catalog.=) 1
   AND EXISTS (SELECT FROM pg_catalog.pg_depend AS d
                WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_attrdef'::pg_catalog.regclass
                  AND d.objid OPERATOR(pg_catalog.=) ad.oid
                  AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
                  AND d.refobjid IN (SELECT p.oid FROM pg_catalog.pg_proc AS p
                                      WHERE p.pronamespace OPERATOR(pg_catalog.=) 'shardid'::pg_catalog.regnamespace
                                        AND p.proname OPERATOR(pg_catalog.=) 'next_id'));

GRANT SELECT ON shardid.stored_decodes TO PUBLIC;

COMMENT ON VIEW shardid.stored_decodes IS
    'Objects that store values computed by shardid decoders (indexes, generated columns, defaults, constraints, materialized views, partition bounds of next_id keys): while any exists, configure() refuses to change the layout.';
-- Called by configure() with the layout it is about to write (a new layout
-- would make every stored decode stale; the same one changes nothing), and
-- by the trigger below without one (any change).
CREATE OR REPLACE FUNCTION shardid._refuse_stored_decodes(new_epoch_ms bigint DEFAULT NULL,
                                               new_shard_bits integer DEFAULT NULL,
                                               new_seq_bits integer DEFAULT NULL)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n bigint;
    first_object text;
BEGIN
    IF (new_epoch_ms, new_shard_bits, new_seq_bits) =
       (SELECT (extract(epoch FROM l.epoch) * 1000)::bigint, l.shard_bits, l.seq_bits
          FROM shardid.layout() AS l) THEN
        RETURN;
    END IF;
    SELECT count(*), min(s.object) INTO n, first_object FROM shardid.stored_decodes AS s;
    IF n > 0 THEN
        RAISE EXCEPTION 'the layout cannot change: % object(s) store values of shardid decoders, such as %',
                        n, first_object
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Their stored values were computed with the current layout and would go stale.',
                  HINT = 'SELECT * FROM shardid.stored_decodes lists them; drop them, configure the layout, then create them again.';
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid._refuse_stored_decodes(bigint, integer, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid._refuse_stored_decodes(bigint, integer, integer) IS
    'Raises 55000 if anything stores values of shardid decoders and the layout would change; called by configure().';
-- Triggers on layout_config. configure() has already refused if anything
-- stores decodes and the layout changes, so they act on other writers. A row
-- inserted is taken for a restore (pg_dump's COPY of the layout after the
-- tables whose generated columns and CHECK constraints were computed with
-- the default layout): after the statement, once layout_changed has made the
-- decoders read the new layout, those are recomputed and rechecked. Indexes
-- and materialized views made before it, and any other change that would
-- leave a stored decode stale, are refused.
CREATE OR REPLACE FUNCTION shardid._layout_stored_decodes() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rel regclass;
    col name;
BEGIN
    IF NOT EXISTS (SELECT FROM shardid.stored_decodes) THEN
        RETURN NULL;
    END IF;
    IF TG_OP = 'TRUNCATE'
       OR TG_OP = 'UPDATE' AND (NEW.epoch_ms, NEW.shard_bits, NEW.seq_bits) IS DISTINCT FROM
                               (OLD.epoch_ms, OLD.shard_bits, OLD.seq_bits)
       OR TG_OP = 'DELETE' AND (OLD.epoch_ms, OLD.shard_bits, OLD.seq_bits) IS DISTINCT FROM
                               (1314220021721::bigint, 13, 10) THEN
        PERFORM shardid._refuse_stored_decodes();
    END IF;
    IF TG_OP <> 'INSERT' THEN
        RETURN NULL;
    END IF;
    -- inserted_layout exists only in the INSERT trigger: query it only here
    IF NOT EXISTS (SELECT FROM inserted_layout AS c
                    WHERE (c.epoch_ms, c.shard_bits, c.seq_bits) IS DISTINCT FROM
                          (1314220021721::bigint, 13, 10)) THEN
        RETURN NULL;
    END IF;
    IF EXISTS (SELECT FROM shardid.stored_decodes AS s WHERE s.kind IN ('index', 'materialized view')) THEN
        PERFORM shardid._refuse_stored_decodes();
    END IF;
    FOR rel IN
        SELECT DISTINCT s.relation FROM shardid.stored_decodes AS s
          JOIN pg_class AS c ON c.oid = s.relation
         WHERE s.kind IN ('generated column', 'constraint') AND c.relkind = 'r'
    LOOP
        SELECT a.attname INTO col FROM pg_attribute AS a
         WHERE a.attrelid = rel AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
         ORDER BY a.attnum LIMIT 1;
        EXECUTE format('UPDATE ONLY %s SET %I = %I', rel, col, col);
    END LOOP;
    RETURN NULL;
END
$$;

-- after layout_changed (triggers fire in name order)
CREATE OR REPLACE TRIGGER layout_stored_decodes_insert
    AFTER INSERT ON shardid.layout_config REFERENCING NEW TABLE AS inserted_layout
    FOR EACH STATEMENT EXECUTE FUNCTION shardid._layout_stored_decodes();

CREATE OR REPLACE TRIGGER layout_stored_decodes_change
    AFTER UPDATE OR DELETE ON shardid.layout_config
    FOR EACH ROW EXECUTE FUNCTION shardid._layout_stored_decodes();

CREATE OR REPLACE TRIGGER layout_stored_decodes_truncate
    AFTER TRUNCATE ON shardid.layout_config
    FOR EACH STATEMENT EXECUTE FUNCTION shardid._layout_stored_decodes();

REVOKE ALL ON FUNCTION shardid._layout_stored_decodes() FROM PUBLIC;

COMMENT ON FUNCTION shardid._layout_stored_decodes() IS
    'Trigger: a layout row restored after the tables recomputes their generated columns; other changes under stored decodes are refused.';
CREATE OR REPLACE FUNCTION shardid.next_id(shard integer, seq regclass) RETURNS bigint
    LANGUAGE c VOLATILE STRICT PARALLEL UNSAFE AS 'MODULE_PATHNAME', 'shardid_next_id';

COMMENT ON FUNCTION shardid.next_id(integer, regclass) IS
    'The next ID of the generator kept in sequence seq, for logical shard shard: unique and strictly increasing per sequence, clock- and crash-safe. Use it as a column DEFAULT.';
-- Every column DEFAULT that calls shardid.next_id(), with the generator it
-- names, for _generator_states(), sync_generators() and
-- _refuse_issued_layout(): the catalog query that finds generators without
-- the shard registry, written once. A DEFAULT depends on the function and on
-- its sequence (a regclass constant); seq is every pg_class object the
-- DEFAULT depends on (its own table too), so readers keep the sequences
-- (relkind 'S'). The shard is read from the DEFAULT's text (NULL unless it
-- is a literal).
--
-- A view, not a function: the planner inlines it into each query, which
-- then plans as if the joins were written there (a SQL function with SET
-- search_path or SECURITY DEFINER would not be inlined). It shows only what
-- pg_catalog shows everyone (pg_attrdef, pg_depend, pg_get_expr()), so
-- PUBLIC may read it: sync_generators() runs as its caller.
CREATE OR REPLACE VIEW shardid._next_id_defaults AS
SELECT d.adrelid AS rel,
       d.adnum AS attnum,
       sdep.refobjid AS seq,
       pg_catalog.substring(pg_catalog.pg_get_expr(d.adbin, d.adrelid),
                            '^shardid\.next_id\((-?[0-9]+),')::integer AS shard
  FROM pg_catalog.pg_attrdef AS d
  JOIN pg_catalog.pg_depend AS fdep
    ON fdep.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_attrdef'::pg_catalog.regclass
   AND fdep.objid OPERATOR(pg_catalog.=) d.oid
   AND fdep.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
   AND fdep.refobjid OPERATOR(pg_catalog.=) 'shardid.next_id(integer, pg_catalog.regclass)'::pg_catalog.regprocedure
  JOIN pg_catalog.pg_depend AS sdep
    ON sdep.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_attrdef'::pg_catalog.regclass
   AND sdep.objid OPERATOR(pg_catalog.=) d.oid
   AND sdep.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass;

GRANT SELECT ON shardid._next_id_defaults TO PUBLIC;

COMMENT ON VIEW shardid._next_id_defaults IS
    'Internal (for _generator_states(), sync_generators() and _refuse_issued_layout()): every column DEFAULT that calls shardid.next_id(), its table, column, the pg_class objects it depends on (seq: keep relkind S) and its literal shard. Readable by PUBLIC: it shows only what pg_catalog shows everyone.';
-- A generator's state is time << seq_bits | counter (src/core/generator.hpp).
-- Views that report generators decode it here rather than re-derive the
-- formula in SQL. Plain arithmetic on a value the caller already holds;
-- executable by pg_monitor, who reads shardid.generators (a view's
-- functions run with its reader's privileges), not by PUBLIC (issue 19:
-- internal functions only for the roles that need them).
CREATE OR REPLACE FUNCTION shardid._state_decode(state bigint, OUT ts timestamptz, OUT seq integer)
    LANGUAGE c STABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_state_decode';

REVOKE ALL ON FUNCTION shardid._state_decode(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION shardid._state_decode(bigint) TO pg_monitor;

COMMENT ON FUNCTION shardid._state_decode(bigint) IS
    'Internal: the time and counter (seq) of a generator state under this database''s layout: the time and seq of the last ID it issued. NULL for a state outside the layout (negative, or past its end).';
-- Raises a generator to at least a state, never lower, as sync_generators()
-- needs it: under the sequence's buffer lock, holding only the lock writers
-- hold themselves (see src/pg/next_id.cpp).
CREATE OR REPLACE FUNCTION shardid._raise_generator(seq regclass, state bigint) RETURNS boolean
    LANGUAGE c VOLATILE STRICT PARALLEL UNSAFE AS 'MODULE_PATHNAME', 'shardid_raise_generator';

COMMENT ON FUNCTION shardid._raise_generator(regclass, bigint) IS
    'Internal: sets generator seq to at least state (never lowers it; WAL-logged like setval); true if it changed. Needs UPDATE on the sequence to raise it, as setval() does. Called by sync_generators().';
-- Raises every generator to at least the state of the largest ID that it
-- serves, after rows arrived without it (logical replication, a restore).
--
-- What it trusts. A DEFAULT names a generator by OID, and a numeric regclass
-- literal needs no privilege on the sequence, so anyone who may create a
-- table could name shard 5's generator and store the last ID of the layout.
-- A column's rows therefore raise a generator only when
--   - its table is a registered table of the generator's shard: in the
--     schema that shardid.shard_registry gives for that sequence (tables of
--     create_shard()/create_table(), adopt()ed ones), and the DEFAULT's
--     shard is the registered one; or
--   - its table's owner may UPDATE the sequence (could setval() it anyway).
-- Other DEFAULTs are returned as 'untrusted' and their tables never read (a
-- negative ID there would otherwise make every sync fail). Temporary tables
-- (another session's cannot be read; no replicated row lands in one) and
-- temporary or unlogged sequences (next_id() refuses them) are passed over;
-- a column that is not bigint is returned as 'skipped' (its type's ordering
-- could be its owner's code).
--
-- Reading runs as the caller, with row_security off: a policy that hid rows
-- would make the largest ID too low, so such a table raises 42501 instead.
--
-- Locking. Each generator is raised by _raise_generator() under the
-- sequence's buffer lock, holding RowExclusiveLock as next_id() and setval()
-- do: writers are neither blocked nor waited for, whatever order they use
-- generators in. Generators are visited in OID order; the tables are read
-- with AccessShareLock (only DDL waits for it).
CREATE OR REPLACE FUNCTION shardid.sync_generators()
    RETURNS TABLE (generator regclass, action text, table_name regclass, column_name name,
                   max_id bigint, detail text)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
    SET row_security = off
AS $$
DECLARE
    l          shardid.layout_report := shardid.layout();
    time_shift integer := l.shard_bits + l.seq_bits;
    seq_mask   bigint := (1::bigint << l.seq_bits) - 1;
    c          record;
    lo         bigint;
    hi         bigint;
    target     bigint;
    cur_seq    pg_catalog.regclass;
    wanted     bigint;
    wanted_tbl pg_catalog.regclass;
    wanted_col name;
    wanted_id  bigint;
BEGIN
    -- Every column DEFAULT that calls next_id(), by generator (found in
    -- the catalog, without the registry: shardid._next_id_defaults). A
    -- NULL row ends the last generator.
    FOR c IN
        SELECT x.* FROM (
            SELECT s.oid::pg_catalog.regclass AS seq, nd.rel::pg_catalog.regclass AS tbl, a.attname AS col,
                   nd.shard,
                   a.atttypid = 'pg_catalog.int8'::pg_catalog.regtype AS is_bigint,
                   pg_catalog.format_type(a.atttypid, a.atttypmod) AS col_type,
                   t.relowner AS owner,
                   tn.nspname AS tbl_schema, sn.nspname AS seq_schema, s.relname AS seq_name
              FROM shardid._next_id_defaults AS nd
              JOIN pg_catalog.pg_attribute AS a
                ON a.attrelid = nd.rel AND a.attnum = nd.attnum
              JOIN pg_catalog.pg_class AS t ON t.oid = nd.rel
              JOIN pg_catalog.pg_namespace AS tn ON tn.oid = t.relnamespace
              JOIN pg_catalog.pg_class AS s
                ON s.oid = nd.seq AND s.relkind = 'S'
              JOIN pg_catalog.pg_namespace AS sn ON sn.oid = s.relnamespace
             WHERE t.relkind = ANY (ARRAY['r', 'p']::"char"[])
               AND t.relpersistence <> 't'
               AND s.relpersistence = 'p'
               AND NOT a.attisdropped
            UNION ALL
            SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
        ) AS x
        ORDER BY x.seq::pg_catalog.oid NULLS LAST, x.tbl::pg_catalog.oid, x.col
    LOOP
        -- The previous generator is complete: raise it (its lock is the
        -- one writers hold, so no order of theirs can deadlock with this).
        IF cur_seq IS DISTINCT FROM c.seq AND wanted IS NOT NULL THEN
            IF shardid._raise_generator(cur_seq, wanted) THEN
                generator := cur_seq; action := 'raised'; table_name := wanted_tbl; column_name := wanted_col;
                max_id := wanted_id; detail := NULL;
                RETURN NEXT;
            END IF;
        END IF;
        IF cur_seq IS DISTINCT FROM c.seq THEN
            cur_seq := c.seq;
            wanted := NULL;
        END IF;
        EXIT WHEN c.seq IS NULL;

        IF NOT (pg_catalog.has_sequence_privilege(c.owner, c.seq::pg_catalog.oid, 'UPDATE')
                OR EXISTS (SELECT FROM shardid.shard_registry AS r
                            WHERE r.sequence_schema = c.seq_schema
                              AND r.sequence_name = c.seq_name
                              AND r.schema_name = c.tbl_schema
                              AND r.shard = c.shard)) THEN
            generator := c.seq; action := 'untrusted'; table_name := c.tbl; column_name := c.col;
            max_id := NULL;
            detail := pg_catalog.format('not a registered table of the shard of %s, and its owner %s may not UPDATE that sequence: not read',
                                        c.seq, pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(c.owner)::text));
            RETURN NEXT;
            CONTINUE;
        END IF;
        IF NOT c.is_bigint THEN
            generator := c.seq; action := 'skipped'; table_name := c.tbl; column_name := c.col;
            max_id := NULL;
            detail := pg_catalog.format('the column is %s, not bigint: not read', c.col_type);
            RETURN NEXT;
            CONTINUE;
        END IF;
        -- min() and max() of an indexed column are two index lookups
        EXECUTE pg_catalog.format('SELECT pg_catalog.min(%1$I), pg_catalog.max(%1$I) FROM %2$s', c.col, c.tbl)
            INTO lo, hi;
        CONTINUE WHEN hi IS NULL;
        IF lo < 0 THEN
            RAISE EXCEPTION 'column "%" of table "%" holds a negative ID', c.col, c.tbl
                USING ERRCODE = 'invalid_parameter_value',
                      DETAIL = pg_catalog.format('For example %s. IDs of this layout are positive 63-bit values.', lo);
        END IF;
        IF c.shard IS NOT NULL AND shardid.id_shard(hi) <> c.shard THEN
            RAISE EXCEPTION 'the largest ID of "%"."%" is not of shard %', c.tbl, c.col, c.shard
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = pg_catalog.format('ID %s decodes to shard %s under this layout (%s shard bits, %s seq bits); the column DEFAULT issues shard %s.',
                                                 hi, shardid.id_shard(hi), l.shard_bits, l.seq_bits, c.shard),
                      HINT = 'Configure this database with the layout the IDs were made with (shardid.layout() on their server).';
        END IF;
        -- The generator state whose ID is hi. Without a literal shard in the
        -- DEFAULT, the whole millisecond of hi is skipped: IDs of lower
        -- shards may hold higher counters.
        target := ((hi >> time_shift) << l.seq_bits)
                  |
                  CASE WHEN c.shard IS NULL THEN seq_mask
                       ELSE hi & seq_mask END;
        IF wanted IS NULL OR target > wanted THEN
            wanted := target; wanted_tbl := c.tbl; wanted_col := c.col; wanted_id := hi;
        END IF;
    END LOOP;
END
$$;

COMMENT ON FUNCTION shardid.sync_generators() IS
    'Raises each generator named in a column DEFAULT shardid.next_id(shard, seq) to at least the state of the largest ID in the columns it serves (after logical replication or a data restore); never lowers one, takes no lock writers wait for. Trusts only registered tables of the generator''s shard and tables whose owner may UPDATE the sequence; returns a row per generator raised and per DEFAULT it did not read (untrusted, skipped). The caller needs SELECT on the tables and UPDATE on the generators it raises: a superuser, or the owner of all of them.';
-- The schema name of a shard number: shard_ and the number zero-padded to
-- 4 digits, or to the width of the layout's largest shard if that is wider.
CREATE OR REPLACE FUNCTION shardid._shard_schema_name(shard integer) RETURNS name
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT pg_catalog.concat('shard_',
               pg_catalog.lpad($1::text,
                               GREATEST(4, pg_catalog.length(((shardid.layout()).max_shard)::text)),
                               '0'))::name
$$;

COMMENT ON FUNCTION shardid._shard_schema_name(integer) IS
    'The schema name create_shard() uses for a shard: shard_ and the number zero-padded to 4 digits (more if the layout has more shards).';
-- Refuses a shard number the layout cannot hold.
CREATE OR REPLACE FUNCTION shardid._check_shard(shard integer) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    l shardid.layout_report := shardid.layout();
BEGIN
    IF shard IS NULL THEN
        RAISE EXCEPTION 'shard must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF shard < 0 OR shard > l.max_shard THEN
        RAISE EXCEPTION 'shard % is out of range', shard
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = pg_catalog.format('this layout has %s shard bits (0..%s)',
                                             l.shard_bits, l.max_shard);
    END IF;
END
$$;

COMMENT ON FUNCTION shardid._check_shard(integer) IS
    'Raises 22023 if a shard number is outside the layout.';
-- Refuses a range of shards first..last that is empty or that the layout
-- cannot hold, for every function that takes one. Callers have refused
-- NULL arguments with their own name in the message.
CREATE OR REPLACE FUNCTION shardid._check_shard_range(first integer, last integer) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF first > last THEN
        RAISE EXCEPTION 'empty shard range % .. %', first, last
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give the first shard, then the last (inclusive).';
    END IF;
    PERFORM shardid._check_shard(first);
    PERFORM shardid._check_shard(last);
END
$$;

COMMENT ON FUNCTION shardid._check_shard_range(integer, integer) IS
    'Raises 22023 if the shard range first..last is empty or outside the layout.';
-- Refuses a caller who may not change the registry, before anything is created.
CREATE OR REPLACE FUNCTION shardid._check_registry_privileges(action text, need_create boolean) RETURNS void
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

COMMENT ON FUNCTION shardid._check_registry_privileges(text, boolean) IS
    'Raises 42501 unless the caller may write the shard registry (and, if asked, create schemas).';
-- Refuses a sequence that next_id() would refuse, with the same SQLSTATEs.
CREATE OR REPLACE FUNCTION shardid._check_generator(seq regclass) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c pg_catalog.pg_class;
BEGIN
    SELECT * INTO c FROM pg_catalog.pg_class WHERE oid = seq;
    IF c.relkind IS DISTINCT FROM 'S' THEN
        RAISE EXCEPTION '"%" is not a sequence', seq
            USING ERRCODE = 'wrong_object_type',
                  HINT = 'next_id() keeps its state in a sequence: CREATE SEQUENCE ... AS bigint.';
    END IF;
    IF c.relpersistence <> 'p' THEN
        RAISE EXCEPTION 'sequence "%" is %', seq,
                CASE c.relpersistence WHEN 't' THEN 'temporary' ELSE 'unlogged' END
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'A crash resets temporary and unlogged sequences, so IDs would repeat.';
    END IF;
END
$$;

COMMENT ON FUNCTION shardid._check_generator(regclass) IS
    'Raises 42809 or 55000 for a relation next_id() cannot keep its state in.';
-- Whether the procedure that calls it may COMMIT (see src/pg/procedures.cpp).
-- Called directly from a procedure's body: from inside another function it
-- would always answer false, since functions cannot commit.
CREATE OR REPLACE FUNCTION shardid._commit_allowed() RETURNS boolean
    LANGUAGE c VOLATILE PARALLEL UNSAFE AS 'MODULE_PATHNAME', 'shardid_commit_allowed';

COMMENT ON FUNCTION shardid._commit_allowed() IS
    'True when called from a procedure CALLed on its own, which may COMMIT; false inside a transaction block, a function or a subtransaction.';
-- Refuses a batch size of the *_proc procedures below 1, before their first
-- batch. Callers have refused NULL with their own name in the message.
CREATE OR REPLACE FUNCTION shardid._check_batch_size(batch_size integer) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF batch_size < 1 THEN
        RAISE EXCEPTION 'batch_size must be at least 1, not %', batch_size
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$$;

COMMENT ON FUNCTION shardid._check_batch_size(integer) IS
    'Raises 22023 if the batch size of create_shards_proc() or create_table_proc() is below 1.';
-- Creates one sharded table in one shard: LIKE its template, the id column
-- defaulting to the shard's generator. Callers have checked the shard, its
-- schema and the template, and hold the registry lock.
CREATE OR REPLACE FUNCTION shardid._create_shard_table(r shardid.shard_registry, t shardid.sharded_tables)
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
END
$$;

COMMENT ON FUNCTION shardid._create_shard_table(shardid.shard_registry, shardid.sharded_tables) IS
    'Creates one sharded table in one shard, LIKE its template, id column DEFAULT shardid.next_id(shard, shard''s generator).';
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
    made   integer := 0;
BEGIN
    SELECT * INTO STRICT r FROM shardid.shard_registry AS s
        WHERE s.shard = _create_shard_tables.shard;
    FOR t IN SELECT * FROM shardid.sharded_tables ORDER BY position LOOP
        IF only_missing AND pg_catalog.to_regclass(pg_catalog.format('%I.%I', r.schema_name, t.table_name)) IS NOT NULL THEN
            CONTINUE;
        END IF;
        PERFORM shardid._create_shard_table(r, t);
        made := made + 1;
    END LOOP;
    RETURN made;
END
$$;

COMMENT ON FUNCTION shardid._create_shard_tables(integer, boolean) IS
    'Creates the registered sharded tables (all, or only the missing ones) in one shard.';
-- Refuses to go on if the template of one sharded table has gone, before a
-- shard gets the table: for _check_templates() (every sharded table) and
-- each batch of create_table_proc() (its own).
CREATE OR REPLACE FUNCTION shardid._check_template(t shardid.sharded_tables) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF pg_catalog.to_regclass(pg_catalog.format('%I.%I', t.template_schema, t.template_name)) IS NULL THEN
        RAISE EXCEPTION 'template %.% of sharded table % no longer exists',
                pg_catalog.quote_ident(t.template_schema), pg_catalog.quote_ident(t.template_name),
                pg_catalog.quote_ident(t.table_name)
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Recreate the template table, or remove the row from shardid.sharded_tables.';
    END IF;
END
$$;

COMMENT ON FUNCTION shardid._check_template(shardid.sharded_tables) IS
    'Raises 55000 if the template of the given sharded table has been dropped.';
-- Refuses to go on if a sharded table's template has gone, before a shard
-- gets any table (_check_template() of each, in order).
CREATE OR REPLACE FUNCTION shardid._check_templates() RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t shardid.sharded_tables;
BEGIN
    FOR t IN SELECT * FROM shardid.sharded_tables ORDER BY position LOOP
        PERFORM shardid._check_template(t);
    END LOOP;
END
$$;

COMMENT ON FUNCTION shardid._check_templates() IS
    'Raises 55000 if the template of a sharded table has been dropped.';
CREATE OR REPLACE FUNCTION shardid.create_shard(shard integer) RETURNS name
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
        WHERE s.shard = create_shard.shard;
    IF FOUND THEN
        RAISE EXCEPTION 'shard % is already registered', shard
            USING ERRCODE = 'duplicate_object',
                  DETAIL = pg_catalog.format('Its schema is %I.', other.schema_name);
    END IF;
    IF EXISTS (SELECT FROM pg_catalog.pg_namespace AS n
                WHERE n.nspname = nsp) THEN
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

COMMENT ON FUNCTION shardid.create_shard(integer) IS
    'Creates logical shard N: schema shard_NNNN, its generator sequence shard_NNNN.id_seq and every sharded table; registers it; returns the schema.';
CREATE OR REPLACE FUNCTION shardid.create_shards(first integer, last integer) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    taken integer;
BEGIN
    IF first IS NULL OR last IS NULL THEN
        RAISE EXCEPTION 'create_shards() arguments must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    PERFORM shardid._check_shard_range(first, last);
    PERFORM shardid._check_registry_privileges('create shards', true);
    LOCK TABLE shardid.shard_registry, shardid.sharded_tables IN SHARE ROW EXCLUSIVE MODE;
    -- Check the whole range before creating any shard.
    SELECT min(s.shard) INTO taken FROM shardid.shard_registry AS s
        WHERE s.shard >= first AND s.shard <= last;
    IF taken IS NOT NULL THEN
        RAISE EXCEPTION 'shard % is already registered', taken
            USING ERRCODE = 'duplicate_object',
                  DETAIL = pg_catalog.format('No shard of %s .. %s was created.', first, last);
    END IF;
    SELECT min(g) INTO taken FROM pg_catalog.generate_series(first, last) AS g
        WHERE EXISTS (SELECT FROM pg_catalog.pg_namespace AS n
                       WHERE n.nspname = shardid._shard_schema_name(g));
    IF taken IS NOT NULL THEN
        RAISE EXCEPTION 'schema "%" already exists', shardid._shard_schema_name(taken)
            USING ERRCODE = 'duplicate_schema',
                  DETAIL = pg_catalog.format('No shard of %s .. %s was created.', first, last);
    END IF;
    -- Every shard of the range, in one batch (53200 names create_shards_proc()).
    RETURN shardid._create_shards_batch(first, last, NULL);
END
$$;

COMMENT ON FUNCTION shardid.create_shards(integer, integer) IS
    'Creates shards first..last (inclusive) in one transaction, after checking that none exists; returns how many. For more shards than one transaction can lock, CALL create_shards_proc().';
-- The checks create_shards_proc() makes before its first batch, the same as
-- create_shards() but that registered shards are skipped; returns how many
-- shards of first..last are missing.
CREATE OR REPLACE FUNCTION shardid._create_shards_start(first integer, last integer, batch_size integer)
    RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    taken    integer;
    missing  integer;
BEGIN
    IF first IS NULL OR last IS NULL OR batch_size IS NULL THEN
        RAISE EXCEPTION 'create_shards_proc() arguments must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    PERFORM shardid._check_batch_size(batch_size);
    PERFORM shardid._check_shard_range(first, last);
    PERFORM shardid._check_registry_privileges('create shards', true);
    PERFORM shardid._check_templates();
    -- A schema of the range that is not a registered shard stops the run
    -- before anything is created, as in create_shards().
    SELECT min(g) INTO taken FROM pg_catalog.generate_series(first, last) AS g
        WHERE NOT EXISTS (SELECT FROM shardid.shard_registry AS s WHERE s.shard = g)
          AND EXISTS (SELECT FROM pg_catalog.pg_namespace AS n
                       WHERE n.nspname = shardid._shard_schema_name(g));
    IF taken IS NOT NULL THEN
        RAISE EXCEPTION 'schema "%" already exists', shardid._shard_schema_name(taken)
            USING ERRCODE = 'duplicate_schema',
                  DETAIL = pg_catalog.format('Shard %s is not registered. No shard of %s .. %s was created.', taken, first, last),
                  HINT = pg_catalog.format('If it holds shard %s (restored from a dump), register it with shardid.attach_shard(%s).', taken, taken);
    END IF;
    SELECT count(*) INTO missing FROM pg_catalog.generate_series(first, last) AS g
        WHERE NOT EXISTS (SELECT FROM shardid.shard_registry AS s WHERE s.shard = g);
    RETURN missing;
END
$$;

COMMENT ON FUNCTION shardid._create_shards_start(integer, integer, integer) IS
    'The checks of create_shards_proc() before its first batch; returns how many shards of first..last are not registered.';
-- One batch of create_shards_proc(): creates the next batch_size shards of
-- first..last that are not registered yet, in order, and returns how many
-- (0: none is missing). The caller commits after each batch. With
-- batch_size NULL, create_shards(): all of them, in the caller's one
-- transaction, which has checked that none is registered.
CREATE OR REPLACE FUNCTION shardid._create_shards_batch(first integer, last integer, batch_size integer)
    RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    g     integer;
    made  integer := 0;
    hint  text;
BEGIN
    -- Waits for any other registry writer, then sees what it committed.
    LOCK TABLE shardid.shard_registry, shardid.sharded_tables IN SHARE ROW EXCLUSIVE MODE;
    BEGIN
        FOR g IN SELECT x FROM pg_catalog.generate_series(first, last) AS x
                  WHERE NOT EXISTS (SELECT FROM shardid.shard_registry AS s WHERE s.shard = x)
                  ORDER BY x LIMIT batch_size LOOP
            PERFORM shardid.create_shard(g);
            made := made + 1;
        END LOOP;
    EXCEPTION WHEN out_of_memory THEN
        -- 53200 "out of shared memory" from the lock table: every shard
        -- created holds its locks until the transaction ends.
        GET STACKED DIAGNOSTICS hint = PG_EXCEPTION_HINT;
        IF hint NOT LIKE '%max_locks_per_transaction%' THEN
            RAISE;
        END IF;
        IF batch_size IS NULL THEN
            RAISE EXCEPTION 'create_shards(%, %) needs more locks than one transaction can hold', first, last
                USING ERRCODE = 'out_of_memory',
                      DETAIL = pg_catalog.format('The server''s lock table ran out after %s shards (max_locks_per_transaction = %s): each shard created holds its locks, and those of its tables, until the transaction ends. No shard was created.',
                                                 made, pg_catalog.current_setting('max_locks_per_transaction')),
                      HINT = pg_catalog.format('CALL shardid.create_shards_proc(%s, %s); creates the shards in batches that commit.', first, last);
        END IF;
        RAISE EXCEPTION 'a batch of % shards needs more locks than the server''s lock table has free', batch_size
            USING ERRCODE = 'out_of_memory',
                  DETAIL = pg_catalog.format('It ran out after %s shards (max_locks_per_transaction = %s); they were rolled back. The shards of earlier batches are committed.',
                                             made, pg_catalog.current_setting('max_locks_per_transaction')),
                  HINT = pg_catalog.format('Go on with smaller batches: CALL shardid.create_shards_proc(%s, %s, %s);',
                                           first, last, GREATEST(1, batch_size / 4));
    END;
    RETURN made;
END
$$;

COMMENT ON FUNCTION shardid._create_shards_batch(integer, integer, integer) IS
    'One batch of create_shards_proc(): creates up to batch_size unregistered shards of first..last, in order; returns how many. With batch_size NULL, all of them, for create_shards().';
-- create_shards() in batches that commit, for ranges one transaction cannot
-- lock (8192 shards on a server with default settings), in pg_partman's
-- *_proc convention. A procedure that COMMITs may have no SET clause (it
-- would make it atomic), so its body schema-qualifies every name and leaves
-- the work to functions that pin search_path.
CREATE OR REPLACE PROCEDURE shardid.create_shards_proc(first integer, last integer, batch_size integer DEFAULT 256)
    LANGUAGE plpgsql
AS $$
DECLARE
    todo     integer;
    done     integer := 0;
    made     integer;
    batches  integer := 0;
BEGIN
    IF NOT shardid._commit_allowed() THEN
        RAISE EXCEPTION 'shardid.create_shards_proc() cannot run inside a transaction block'
            USING ERRCODE = 'active_sql_transaction',
                  DETAIL = 'It commits after every batch, which a CALL inside BEGIN ... COMMIT, a function, an EXCEPTION block or a multi-statement query string cannot do.',
                  HINT = 'CALL it on its own, or use shardid.create_shards() for a range that fits one transaction.';
    END IF;
    todo := shardid._create_shards_start(first, last, batch_size);
    RAISE NOTICE 'create_shards_proc: % shards of % .. % to create, in batches of %', todo, first, last, batch_size;
    LOOP
        -- Progress for pg_stat_activity; SET LOCAL, so it ends with the batch.
        PERFORM pg_catalog.set_config('application_name',
                                      pg_catalog.format('shardid create_shards_proc %s/%s', done, todo), true);
        made := shardid._create_shards_batch(first, last, batch_size);
        EXIT WHEN made OPERATOR(pg_catalog.=) 0;
        COMMIT;
        done := done OPERATOR(pg_catalog.+) made;
        batches := batches OPERATOR(pg_catalog.+) 1;
        RAISE NOTICE 'create_shards_proc: batch % committed: % of % shards done', batches, done, todo;
    END LOOP;
    RAISE NOTICE 'create_shards_proc: shards % .. %: % created, % existed already',
        first, last, done, (last OPERATOR(pg_catalog.-) first OPERATOR(pg_catalog.+) 1) OPERATOR(pg_catalog.-) done;
END
$$;

COMMENT ON PROCEDURE shardid.create_shards_proc(integer, integer, integer) IS
    'Creates the shards of first..last (inclusive) that do not exist yet, committing every batch_size shards; re-run it after an interruption to finish. Progress: NOTICEs, and application_name in pg_stat_activity. CALL it on its own, not in a transaction block.';
CREATE OR REPLACE FUNCTION shardid.shard_schema(shard integer) RETURNS name
    LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    result name;
BEGIN
    SELECT s.schema_name INTO result FROM shardid.shard_registry AS s
        WHERE s.shard = shard_schema.shard;
    IF result IS NULL THEN
        RAISE EXCEPTION 'shard % is not registered in this database', shard
            USING ERRCODE = 'undefined_object',
                  HINT = pg_catalog.format('Create it with shardid.create_shard(%s), or register a restored schema with shardid.attach_shard(%s).', shard, shard);
    END IF;
    RETURN result;
END
$$;

COMMENT ON FUNCTION shardid.shard_schema(integer) IS
    'The schema of a registered shard, for dynamic SQL and routing; raises 42704 for an unregistered shard.';
-- Checks a template and registers the sharded table made from it, for
-- create_table() and create_table_proc(), before any shard gets a table.
-- With resume, a table already registered from the same template and id
-- column is accepted as it is: create_table_proc() re-run after an
-- interruption goes on with the shards that lack it. Returns the
-- registration; the caller holds the registry lock until it commits.
CREATE OR REPLACE FUNCTION shardid._register_table(caller text, template regclass, id_column name, resume boolean)
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
    PERFORM shardid._check_registry_privileges('create sharded tables', false);
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

COMMENT ON FUNCTION shardid._register_table(text, regclass, name, boolean) IS
    'Checks a template and registers its sharded table (or, resuming, accepts the same registration), before any shard gets the table.';
CREATE OR REPLACE FUNCTION shardid.create_table(template regclass, id_column name DEFAULT 'id') RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t       shardid.sharded_tables;
BEGIN
    IF template IS NULL OR id_column IS NULL THEN
        RAISE EXCEPTION 'create_table() arguments must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    t := shardid._register_table('create_table()', template, id_column, false);
    -- Every shard, in one batch (53200 names create_table_proc()).
    RETURN shardid._create_table_batch(t.table_name, NULL);
END
$$;

COMMENT ON FUNCTION shardid.create_table(regclass, name) IS
    'Creates <shard schema>.<template name> (LIKE template INCLUDING ALL) in every shard, in one transaction, id_column DEFAULT shardid.next_id(shard, shard''s id_seq); shards created later get it too. Returns the number of tables created. For more shards than one transaction can lock, CALL create_table_proc().';
-- The first step of create_table_proc(): the checks of create_table(), then
-- the table's registration (or, re-run, the same registration found again).
-- Returns the table's name, how many shards lack it and how many there are.
CREATE OR REPLACE FUNCTION shardid._create_table_start(template regclass, id_column name, batch_size integer,
                                                       OUT table_name name, OUT todo integer, OUT shards integer)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t shardid.sharded_tables;
BEGIN
    IF template IS NULL OR id_column IS NULL OR batch_size IS NULL THEN
        RAISE EXCEPTION 'create_table_proc() arguments must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    PERFORM shardid._check_batch_size(batch_size);
    t := shardid._register_table('create_table_proc()', template, id_column, true);
    table_name := t.table_name;
    SELECT count(*),
           count(*) FILTER (WHERE pg_catalog.to_regclass(pg_catalog.format('%I.%I', s.schema_name, t.table_name)) IS NULL)
        INTO shards, todo
        FROM shardid.shard_registry AS s;
END
$$;

COMMENT ON FUNCTION shardid._create_table_start(regclass, name, integer) IS
    'The checks and registration of create_table_proc() before its first batch; returns the table name, how many shards lack it and how many shards there are.';
-- One batch of create_table_proc(): creates the registered sharded table in
-- the next batch_size shards that lack it, in shard order, and returns how
-- many (0: every shard has it). The caller commits after each batch. With
-- batch_size NULL, create_table(): every shard, in the caller's one
-- transaction, which has just registered the table.
CREATE OR REPLACE FUNCTION shardid._create_table_batch(table_name name, batch_size integer)
    RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t     shardid.sharded_tables;
    r     shardid.shard_registry;
    made  integer := 0;
    hint  text;
BEGIN
    -- Waits for any other registry writer, then sees what it committed.
    LOCK TABLE shardid.shard_registry, shardid.sharded_tables IN SHARE ROW EXCLUSIVE MODE;
    SELECT * INTO t FROM shardid.sharded_tables AS x WHERE x.table_name = _create_table_batch.table_name;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'sharded table "%" is no longer registered', table_name
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Its row of shardid.sharded_tables was deleted while create_table_proc() ran.';
    END IF;
    PERFORM shardid._check_template(t);
    BEGIN
        -- One catalog lookup per shard, in shard order, until the batch is
        -- full: a join with pg_class could be planned as a nested loop over
        -- every shard's copy, once per shard.
        FOR r IN SELECT s.* FROM shardid.shard_registry AS s
                  WHERE pg_catalog.to_regclass(pg_catalog.format('%I.%I', s.schema_name, t.table_name)) IS NULL
                  ORDER BY s.shard LIMIT batch_size LOOP
            PERFORM shardid._create_shard_table(r, t);
            made := made + 1;
        END LOOP;
    EXCEPTION WHEN out_of_memory THEN
        -- 53200 "out of shared memory" from the lock table: every table
        -- created holds its locks (table, indexes, TOAST, constraints)
        -- until the transaction ends.
        GET STACKED DIAGNOSTICS hint = PG_EXCEPTION_HINT;
        IF hint NOT LIKE '%max_locks_per_transaction%' THEN
            RAISE;
        END IF;
        IF batch_size IS NULL THEN
            RAISE EXCEPTION 'create_table() over % shards needs more locks than one transaction can hold',
                    (SELECT count(*) FROM shardid.shard_registry)
                USING ERRCODE = 'out_of_memory',
                      DETAIL = pg_catalog.format('The server''s lock table ran out after %s tables (max_locks_per_transaction = %s): each table created holds locks on itself, its indexes, TOAST table and constraints until the transaction ends. No table was created.',
                                                 made, pg_catalog.current_setting('max_locks_per_transaction')),
                      HINT = pg_catalog.format('CALL shardid.create_table_proc(%L, %L); creates the tables in batches that commit.',
                                               pg_catalog.to_regclass(pg_catalog.format('%I.%I', t.template_schema, t.template_name))::text,
                                               t.id_column);
        END IF;
        RAISE EXCEPTION 'a batch of % shard tables needs more locks than the server''s lock table has free', batch_size
            USING ERRCODE = 'out_of_memory',
                  DETAIL = pg_catalog.format('It ran out after %s tables (max_locks_per_transaction = %s); they were rolled back. The tables of earlier batches are committed.',
                                             made, pg_catalog.current_setting('max_locks_per_transaction')),
                  HINT = pg_catalog.format('Go on with smaller batches: CALL shardid.create_table_proc(%L, %L, %s);',
                                           pg_catalog.format('%I.%I', t.template_schema, t.template_name), t.id_column,
                                           GREATEST(1, batch_size / 4));
    END;
    RETURN made;
END
$$;

COMMENT ON FUNCTION shardid._create_table_batch(name, integer) IS
    'One batch of create_table_proc(): creates the sharded table in up to batch_size shards that lack it, in shard order; returns how many. With batch_size NULL, every shard, for create_table().';
-- create_table() in batches that commit, for more shards than one
-- transaction can lock (8192 on a server with default settings), in
-- pg_partman's *_proc convention. No SET clause (a procedure with one
-- cannot COMMIT): the body schema-qualifies every name and leaves the work
-- to functions that pin search_path.
CREATE OR REPLACE PROCEDURE shardid.create_table_proc(template regclass, id_column name DEFAULT 'id', batch_size integer DEFAULT 256)
    LANGUAGE plpgsql
AS $$
DECLARE
    tname    name;
    todo     integer;
    shards   integer;
    done     integer := 0;
    made     integer;
    batches  integer := 0;
BEGIN
    IF NOT shardid._commit_allowed() THEN
        RAISE EXCEPTION 'shardid.create_table_proc() cannot run inside a transaction block'
            USING ERRCODE = 'active_sql_transaction',
                  DETAIL = 'It commits after every batch, which a CALL inside BEGIN ... COMMIT, a function, an EXCEPTION block or a multi-statement query string cannot do.',
                  HINT = 'CALL it on its own, or use shardid.create_table() when every shard''s table fits one transaction.';
    END IF;
    SELECT s.table_name, s.todo, s.shards INTO tname, todo, shards
        FROM shardid._create_table_start(template, id_column, batch_size) AS s;
    RAISE NOTICE 'create_table_proc: % of % shards to get table %, in batches of %', todo, shards, tname, batch_size;
    LOOP
        -- Progress for pg_stat_activity; SET LOCAL, so it ends with the batch.
        PERFORM pg_catalog.set_config('application_name',
                                      pg_catalog.format('shardid create_table_proc %s %s/%s', tname, done, todo), true);
        made := shardid._create_table_batch(tname, batch_size);
        EXIT WHEN made OPERATOR(pg_catalog.=) 0;
        COMMIT;
        done := done OPERATOR(pg_catalog.+) made;
        batches := batches OPERATOR(pg_catalog.+) 1;
        RAISE NOTICE 'create_table_proc: batch % committed: % of % tables done', batches, done, todo;
    END LOOP;
    RAISE NOTICE 'create_table_proc: table %: % created, % of % shards had it already', tname, done, shards OPERATOR(pg_catalog.-) done, shards;
END
$$;

COMMENT ON PROCEDURE shardid.create_table_proc(regclass, name, integer) IS
    'create_table() in batches: registers the sharded table, then creates it in the shards that lack it, committing every batch_size tables; re-run it after an interruption to finish. Progress: NOTICEs, and application_name in pg_stat_activity. CALL it on its own, not in a transaction block.';
CREATE OR REPLACE FUNCTION shardid.attach_shard(shard integer, schema_name name DEFAULT NULL) RETURNS integer
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
    ahead  timestamptz := pg_catalog.clock_timestamp() + '1 day'::interval;
    layout_text text;
BEGIN
    PERFORM shardid._check_shard(shard);
    PERFORM shardid._check_registry_privileges('attach shards', false);
    LOCK TABLE shardid.shard_registry, shardid.sharded_tables IN SHARE ROW EXCLUSIVE MODE;
    SELECT * INTO other FROM shardid.shard_registry AS s
        WHERE s.shard = attach_shard.shard OR s.schema_name = nsp;
    IF FOUND THEN
        RAISE EXCEPTION 'shard % (schema %) is already registered', other.shard, pg_catalog.quote_ident(other.schema_name)
            USING ERRCODE = 'duplicate_object';
    END IF;
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_namespace AS n WHERE n.nspname = nsp) THEN
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
    IF state > (9223372036854775807 >> l.shard_bits) THEN
        RAISE EXCEPTION 'generator % holds state %, past the end of this database''s layout', seq, state
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = layout_text,
                  HINT = 'The shard was made under another layout: attach it in a database configured with that layout.';
    END IF;
    IF l.epoch + pg_catalog.make_interval(secs => (state >> l.seq_bits) / 1000.0)
            > ahead THEN
        RAISE EXCEPTION 'generator % holds a state of %, more than a day ahead of the clock', seq,
                l.epoch + pg_catalog.make_interval(secs => (state >> l.seq_bits) / 1000.0)
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = layout_text,
                  HINT = 'The shard was made under another layout: attach it in a database configured with that layout.';
    END IF;
    FOR t IN SELECT * FROM shardid.sharded_tables ORDER BY position LOOP
        CONTINUE WHEN pg_catalog.to_regclass(pg_catalog.format('%I.%I', nsp, t.table_name)) IS NULL;
        EXECUTE pg_catalog.format('SELECT max(%I) FROM %I.%I', t.id_column, nsp, t.table_name) INTO max_id;
        CONTINUE WHEN max_id IS NULL;
        IF max_id < 0 OR shardid.id_shard(max_id) <> shard
           OR shardid.id_time(max_id) > ahead THEN
            RAISE EXCEPTION 'table %.% holds ID %, not an ID of shard % under this database''s layout',
                    pg_catalog.quote_ident(nsp), pg_catalog.quote_ident(t.table_name), max_id, shard
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = CASE WHEN max_id < 0 THEN 'It is negative. '
                                    ELSE pg_catalog.format('It decodes to shard %s at %s. ', shardid.id_shard(max_id), shardid.id_time(max_id))
                               END || layout_text,
                      HINT = 'Attach the shard under its own number, in a database configured with the layout its IDs were made under.';
        END IF;
    END LOOP;

    INSERT INTO shardid.shard_registry (shard, schema_name, sequence_schema, sequence_name)
        VALUES (shard, nsp, nsp, 'id_seq');
    RETURN shardid._create_shard_tables(shard, true);
END
$$;

COMMENT ON FUNCTION shardid.attach_shard(integer, name) IS
    'Registers an existing shard schema (e.g. restored with pg_dump -n) and creates the sharded tables it lacks; returns how many. Refuses a generator state or IDs that do not fit this database''s layout.';
CREATE OR REPLACE FUNCTION shardid.detach_shard(shard integer) RETURNS name
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
    DELETE FROM shardid.shard_registry AS s WHERE s.shard = detach_shard.shard
        RETURNING s.schema_name INTO nsp;
    IF nsp IS NULL THEN
        RAISE EXCEPTION 'shard % is not registered in this database', shard USING ERRCODE = 'undefined_object';
    END IF;
    RETURN nsp;
END
$$;

COMMENT ON FUNCTION shardid.detach_shard(integer) IS
    'Unregisters a shard (after it moved to another server); leaves its schema alone. Returns the schema name.';
CREATE OR REPLACE FUNCTION shardid.adopt(tbl regclass, shard integer, seq regclass, id_column name DEFAULT 'id')
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
    SELECT * INTO c FROM pg_catalog.pg_class WHERE oid = tbl;
    IF c.relkind NOT IN ('r', 'p') THEN
        RAISE EXCEPTION '"%" is not a table', tbl USING ERRCODE = 'wrong_object_type';
    END IF;
    SELECT n.nspname INTO tblnsp FROM pg_catalog.pg_namespace AS n WHERE n.oid = c.relnamespace;
    PERFORM shardid._check_generator(seq);
    SELECT n.nspname, x.relname INTO seqnsp, seqname
        FROM pg_catalog.pg_class AS x JOIN pg_catalog.pg_namespace AS n ON n.oid = x.relnamespace
        WHERE x.oid = seq;
    SELECT * INTO att FROM pg_catalog.pg_attribute AS a
        WHERE a.attrelid = tbl AND a.attname = id_column
          AND a.attnum > 0 AND NOT a.attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'column "%" of table "%" does not exist', id_column, tbl USING ERRCODE = 'undefined_column';
    END IF;
    IF att.atttypid <> 'pg_catalog.int8'::regtype THEN
        RAISE EXCEPTION 'column "%" of table "%" is %, not bigint', id_column, tbl,
                pg_catalog.format_type(att.atttypid, att.atttypmod)
            USING ERRCODE = 'datatype_mismatch';
    END IF;
    IF att.attidentity <> '' OR att.attgenerated <> '' THEN
        RAISE EXCEPTION 'column "%" of table "%" is an identity or generated column', id_column, tbl
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'ALTER TABLE ... ALTER COLUMN ... DROP IDENTITY first.';
    END IF;
    IF NOT pg_catalog.pg_has_role(c.relowner, 'USAGE') THEN
        RAISE EXCEPTION 'must be owner of table %', tbl USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF NOT pg_catalog.pg_has_role((SELECT x.relowner FROM pg_catalog.pg_class AS x WHERE x.oid = seq), 'USAGE') THEN
        RAISE EXCEPTION 'must be owner of sequence %', seq USING ERRCODE = 'insufficient_privilege';
    END IF;
    PERFORM shardid._check_registry_privileges('adopt tables', false);
    LOCK TABLE shardid.shard_registry, shardid.sharded_tables IN SHARE ROW EXCLUSIVE MODE;

    -- A shard has one generator, and a schema holds one shard.
    SELECT * INTO reg FROM shardid.shard_registry AS s WHERE s.shard = adopt.shard;
    IF FOUND AND (reg.sequence_schema, reg.sequence_name) IS DISTINCT FROM (seqnsp, seqname) THEN
        RAISE EXCEPTION 'shard % already has generator %.%', shard,
                pg_catalog.quote_ident(reg.sequence_schema), pg_catalog.quote_ident(reg.sequence_name)
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Two generators for one shard could issue the same ID.',
                  HINT = 'Adopt the table with the shard''s registered sequence.';
    END IF;
    IF NOT FOUND AND EXISTS (SELECT FROM shardid.shard_registry AS s WHERE s.schema_name = tblnsp) THEN
        RAISE EXCEPTION 'schema "%" already holds shard %', tblnsp,
                (SELECT s.shard FROM shardid.shard_registry AS s WHERE s.schema_name = tblnsp)
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;

    -- No row may be inserted with the old DEFAULT from here on, and no
    -- next_id() may run on the sequence until this transaction ends: ALTER
    -- SEQUENCE takes a lock that conflicts with nextval() and next_id().
    EXECUTE pg_catalog.format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', tbl);
    EXECUTE pg_catalog.format('ALTER SEQUENCE %s AS bigint MAXVALUE 9223372036854775807', seq);

    seq_mask := (1::bigint << l.seq_bits) - 1;
    EXECUTE pg_catalog.format(
        'SELECT count(*) FILTER (WHERE %1$I < 0),
                count(*) FILTER (WHERE %1$I >= 0 AND ((%1$I >> $1) & $2) <> $3),
                min(%1$I) FILTER (WHERE %1$I < 0 OR ((%1$I >> $1) & $2) <> $3),
                max(%1$I)
           FROM %2$s', id_column, tbl)
        INTO negatives, foreign_n, example, max_id
        USING l.seq_bits, l.max_shard::bigint, shard::bigint;
    IF negatives > 0 THEN
        RAISE EXCEPTION 'table "%" holds % negative IDs', tbl, negatives
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = pg_catalog.format('For example %s. IDs of this layout are positive 63-bit values.', example);
    END IF;
    IF foreign_n > 0 THEN
        RAISE EXCEPTION 'table "%" holds % IDs that do not belong to shard %', tbl, foreign_n, shard
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = pg_catalog.format('For example %s decodes to shard %s under this layout (%s shard bits, %s seq bits).',
                                             example, shardid.id_shard(example), l.shard_bits, l.seq_bits),
                  HINT = 'Adopt the table with the shard its IDs were made for, or configure the layout they were made with.';
    END IF;
    SELECT COALESCE(pg_catalog.max(s.setting::bigint), 2000) INTO max_drift
        FROM pg_catalog.pg_settings AS s WHERE s.name = 'shardid.max_drift';
    IF max_id IS NOT NULL AND shardid.id_time(max_id) >
            (pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => max_drift / 1000.0)) THEN
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
        target := ((max_id >> (l.shard_bits + l.seq_bits)) << l.seq_bits)
                  | (max_id & seq_mask);
        EXECUTE pg_catalog.format('SELECT last_value, is_called FROM %s', seq) INTO cur_value, cur_called;
        IF NOT cur_called OR cur_value < target THEN
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

COMMENT ON FUNCTION shardid.adopt(regclass, integer, regclass, name) IS
    'Switches a table filled by Instagram''s PL/pgSQL next_id() to shardid.next_id(shard, seq): sets the generator above every existing ID, refuses IDs that do not decode to shard under this layout, registers the shard. Returns the largest existing ID.';
-- The registered shards and the state of their generators. A state
-- outside the layout (negative, or past its last state: the sequence was
-- set there by hand or restored from another layout) is not decoded.
CREATE OR REPLACE VIEW shardid.shards AS
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
 -- schema still sees the registry. The schema first, then pg_class by
 -- (relname, relnamespace): a join could be planned from pg_class by name
 -- alone, which visits every shard's id_seq for each shard (minutes with
 -- 8192 shards).
 CROSS JOIN LATERAL (SELECT (SELECT c.oid FROM pg_catalog.pg_class AS c
                              WHERE c.relname OPERATOR(pg_catalog.=) r.sequence_name
                                AND c.relnamespace OPERATOR(pg_catalog.=)
                                    (SELECT n.oid FROM pg_catalog.pg_namespace AS n
                                      WHERE n.nspname OPERATOR(pg_catalog.=) r.sequence_schema))::regclass AS seq) AS g
 CROSS JOIN LATERAL (SELECT CASE WHEN g.seq IS NOT NULL AND pg_catalog.has_sequence_privilege(g.seq, 'SELECT, USAGE')
                                 THEN pg_catalog.pg_sequence_last_value(g.seq) END AS raw_state) AS raw
 CROSS JOIN LATERAL (SELECT v.state,
                            l.epoch OPERATOR(pg_catalog.+) pg_catalog.make_interval(secs => (v.state OPERATOR(pg_catalog.>>) l.seq_bits) OPERATOR(pg_catalog./) 1000.0) AS time
                       FROM (SELECT CASE WHEN raw.raw_state OPERATOR(pg_catalog.>=) 0
                                          AND raw.raw_state OPERATOR(pg_catalog.<=) (9223372036854775807 OPERATOR(pg_catalog.>>) l.shard_bits)
                                         THEN raw.raw_state END AS state) AS v) AS st;

GRANT SELECT ON shardid.shards TO PUBLIC;

COMMENT ON VIEW shardid.shards IS
    'Registered shards with their generator state: last issued ID and time, and how far the generator runs ahead of the clock (drift). NULL state: no ID yet, no SELECT/USAGE on the sequence, or a state outside the layout (negative, or past its end).';
-- A connect string as libpq parses it (src/pg/connstr.cpp).
CREATE OR REPLACE FUNCTION shardid._connstr_options(connstr text, OUT keyword text, OUT value text, OUT secret boolean)
    RETURNS SETOF record
    LANGUAGE c IMMUTABLE STRICT AS 'MODULE_PATHNAME', 'shardid_connstr_options';

REVOKE ALL ON FUNCTION shardid._connstr_options(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid._connstr_options(text) IS
    'Internal: the options a libpq connect string (key=value or URI) sets, as libpq''s PQconninfoParse() reads them; secret for those libpq hides (password, sslpassword, ...). 22023 if libpq cannot parse it.';
-- The secret a node connect string holds, as libpq reads it, or NULL. A
-- dbname that libpq takes for a connect string of its own (a URI, or text
-- with "=") is searched as well; one that libpq cannot parse counts as a
-- secret, since its text would show wherever the connect string does. A
-- string libpq cannot parse at all raises 22023. Used by add_node() and by
-- the CHECK on shardid.nodes. Not PARALLEL SAFE: its exception block is a
-- subtransaction.
CREATE OR REPLACE FUNCTION shardid._connstr_secret(connstr text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    o     record;
    found text;
BEGIN
    FOR o IN SELECT * FROM shardid._connstr_options(connstr) LOOP
        IF o.secret THEN
            RETURN o.keyword;
        END IF;
        IF o.keyword = 'dbname'
           AND (o.value ~ '^postgres(ql)?://'
                OR pg_catalog.strpos(o.value, '=') > 0) THEN
            BEGIN
                found := shardid._connstr_secret(o.value);
            EXCEPTION WHEN invalid_parameter_value THEN
                RETURN 'a dbname libpq cannot parse';
            END;
            IF found IS NOT NULL THEN
                RETURN found || ' in dbname';
            END IF;
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;

REVOKE ALL ON FUNCTION shardid._connstr_secret(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid._connstr_secret(text) IS
    'Internal: the secret a libpq connect string holds (password, sslpassword, ..., also in a dbname that is itself a connect string), NULL if none; 22023 if libpq cannot parse it. For add_node() and the CHECK on shardid.nodes.';
-- The placement, with the move in progress if any; no connect strings
-- (shardid.nodes is for administrators).
CREATE OR REPLACE VIEW shardid.placement AS
SELECT p.shard, p.node, p.frozen, p.placed_at, m.target AS moving_to, m.phase AS move_phase
  FROM shardid.shard_placement AS p
  LEFT JOIN shardid.shard_moves AS m ON m.shard OPERATOR(pg_catalog.=) p.shard;

GRANT SELECT ON shardid.placement TO PUBLIC;

COMMENT ON VIEW shardid.placement IS
    'Router: each placed shard with its node, whether it is frozen on the router, and the target and phase of its move in progress.';
-- The connect string of every PL/Proxy partition, in partition order: the
-- node's for a placed shard, read-only for a frozen one, a failing one that
-- names the shard for the rest. Also usable from plproxy.get_cluster_partitions().
CREATE OR REPLACE FUNCTION shardid.partition_connstrs(OUT shard integer, OUT connstr text)
    RETURNS SETOF record
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    l shardid.layout_report := shardid.layout();
BEGIN
    -- PL/Proxy allocates one slot per partition and SQL/MED keeps them all
    -- in one catalog row: 2^16 partitions is the most this supports.
    IF l.shard_bits > 16 THEN
        RAISE EXCEPTION 'a PL/Proxy cluster cannot have one partition per shard with % shard bits', l.shard_bits
            USING ERRCODE = 'program_limit_exceeded',
                  DETAIL = pg_catalog.format('This layout has %s shards; the router supports at most 65536 (16 shard bits).',
                                             l.max_shard::bigint + 1);
    END IF;
    RETURN QUERY
    SELECT g.s,
           CASE
               WHEN p.shard IS NULL THEN
                   pg_catalog.format('service=''shardid: shard %s is not placed on any node''', g.s)
               WHEN p.frozen THEN
                   n.connstr || ' options=''-c default_transaction_read_only=on'''
               ELSE n.connstr
           END
      FROM pg_catalog.generate_series(0, l.max_shard) AS g(s)
      LEFT JOIN shardid.shard_placement AS p ON p.shard = g.s
      LEFT JOIN shardid.nodes AS n ON n.node = p.node
     ORDER BY g.s;
END
$$;

COMMENT ON FUNCTION shardid.partition_connstrs() IS
    'Router: the connect string of each PL/Proxy partition (= logical shard) of cluster ''shardid'', in order; unplaced shards get one that fails naming the shard, frozen ones a read-only one.';
-- Rebuilds the SQL/MED server 'shardid' (the PL/Proxy cluster) from the
-- placement: creates it, or alters only the partitions that changed.
-- Returns the number of partitions changed.
CREATE OR REPLACE FUNCTION shardid.refresh_cluster() RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    opts    text;
    changes integer;
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_foreign_data_wrapper AS w
                    WHERE w.fdwname = 'plproxy') THEN
        RAISE EXCEPTION 'PL/Proxy is not installed in database %', pg_catalog.current_database()
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'The router serves the placement as the PL/Proxy cluster ''shardid'' (a foreign server of the plproxy wrapper).',
                  HINT = 'On the router: CREATE EXTENSION plproxy; (Debian package postgresql-15-plproxy). Data nodes need only shardid.';
    END IF;
    LOCK TABLE shardid.shard_placement IN SHARE ROW EXCLUSIVE MODE;

    IF NOT EXISTS (SELECT FROM pg_catalog.pg_foreign_server AS s
                    WHERE s.srvname = 'shardid') THEN
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
         WHERE s.srvname = 'shardid'
           AND o.option_name ~ '^p[0-9]+$'
    ), want AS (
        SELECT 'p' || c.shard AS k, c.connstr AS v, c.shard
          FROM shardid.partition_connstrs() AS c
    ), diff AS (
        SELECT CASE WHEN cur.k IS NULL THEN pg_catalog.format('ADD %s %L', want.k, want.v)
                    WHEN want.k IS NULL THEN pg_catalog.format('DROP %s', cur.k)
                    ELSE pg_catalog.format('SET %s %L', want.k, want.v) END AS op,
               COALESCE(want.shard, pg_catalog.substr(cur.k, 2)::integer) AS ord
          FROM want FULL JOIN cur ON cur.k = want.k
         WHERE cur.v IS DISTINCT FROM want.v
    )
    SELECT pg_catalog.string_agg(d.op, ', ' ORDER BY d.ord), pg_catalog.count(*)
      INTO opts, changes
      FROM diff AS d;
    IF changes > 0 THEN
        EXECUTE pg_catalog.format('ALTER SERVER shardid OPTIONS (%s)', opts);
    END IF;
    RETURN changes;
END
$$;

REVOKE ALL ON FUNCTION shardid.refresh_cluster() FROM PUBLIC;

COMMENT ON FUNCTION shardid.refresh_cluster() IS
    'Router: creates or updates the PL/Proxy cluster ''shardid'' (SQL/MED server) from the placement; returns the number of partitions changed. Needs CREATE EXTENSION plproxy.';
-- Brings the partition of one shard in line with the placement: a single
-- ALTER SERVER ... OPTIONS (SET pN ...), instead of refresh_cluster()'s diff
-- of every partition (the whole cluster when the server or the option is
-- missing). Returns the number of partitions changed (0 or 1).
CREATE OR REPLACE FUNCTION shardid._refresh_partition(shard integer) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    cur  text;
    want text;
BEGIN
    SELECT o.option_value INTO cur
      FROM pg_catalog.pg_foreign_server AS s, pg_catalog.pg_options_to_table(s.srvoptions) AS o
     WHERE s.srvname = 'shardid'
       AND o.option_name = ('p' || _refresh_partition.shard);
    IF cur IS NULL THEN
        RETURN shardid.refresh_cluster();
    END IF;
    SELECT CASE WHEN p.shard IS NULL THEN
                    pg_catalog.format('service=''shardid: shard %s is not placed on any node''', g.s)
                WHEN p.frozen THEN
                    n.connstr || ' options=''-c default_transaction_read_only=on'''
                ELSE n.connstr END
      INTO want
      FROM (SELECT _refresh_partition.shard AS s) AS g
      LEFT JOIN shardid.shard_placement AS p ON p.shard = g.s
      LEFT JOIN shardid.nodes AS n ON n.node = p.node;
    IF want = cur THEN
        RETURN 0;
    END IF;
    EXECUTE pg_catalog.format('ALTER SERVER shardid OPTIONS (SET %I %L)', ('p' || shard), want);
    RETURN 1;
END
$$;

REVOKE ALL ON FUNCTION shardid._refresh_partition(integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid._refresh_partition(integer) IS
    'Router: updates the PL/Proxy partition of one shard from the placement (one ALTER SERVER option); returns 0 or 1.';
-- Registers a data node. connstr is libpq key=value form, as libpq parses
-- it; it must not hold a password (in any keyword libpq keeps secret, also
-- inside a dbname that libpq reads as a connect string), nor such a dbname,
-- nor set options (a frozen shard's connect string appends its own).
CREATE OR REPLACE FUNCTION shardid.add_node(name text, connstr text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    secret text;
BEGIN
    IF name IS NULL OR connstr IS NULL THEN
        RAISE EXCEPTION 'add_node() arguments must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF name !~ '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,62}$' THEN
        RAISE EXCEPTION 'invalid node name "%"', name
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'A node name is 1 to 63 characters: letters, digits, "_", "." and "-", not starting with "." or "-".';
    END IF;
    IF connstr ~ '^\s*$' THEN
        RAISE EXCEPTION 'invalid connect string for node %: it is empty', name
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give a libpq key=value connect string, e.g. ''host=10.0.0.5 port=5432 dbname=app''.';
    END IF;
    -- libpq parses the string (as PL/Proxy's connections will), so no
    -- spelling hides a keyword from the checks below. Errors never echo the
    -- string, which may hold a password; libpq's messages about a URI
    -- repeat it, so they are not passed on.
    BEGIN
        PERFORM FROM shardid._connstr_options(connstr);
    EXCEPTION WHEN invalid_parameter_value THEN
        RAISE EXCEPTION 'invalid connect string for node %: %', name,
                CASE WHEN connstr ~* '^\s*postgres(ql)?:' THEN 'a URI libpq cannot parse'
                     ELSE SQLERRM END
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give a libpq key=value connect string, e.g. ''host=10.0.0.5 port=5432 dbname=app''.';
    END;
    secret := shardid._connstr_secret(connstr);
    IF secret IS NOT NULL AND secret <> 'a dbname libpq cannot parse' THEN
        RAISE EXCEPTION 'the connect string of node % must not hold a password', name
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = pg_catalog.format('It sets %s. Connect strings are stored in the PL/Proxy cluster''s options, which every role can read, and in dumps.', secret),
                  HINT = 'Put the password in ~/.pgpass of the OS user that connects (the router''s and each node''s server user), or name a passfile= or service= in the connect string.';
    END IF;
    IF connstr ~ '^postgres(ql)?://' THEN
        RAISE EXCEPTION 'invalid connect string for node %: a URI', name
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'Freezing a shard for a move appends options=''-c default_transaction_read_only=on'' to it, which needs key=value form.',
                  HINT = 'Give a libpq key=value connect string, e.g. ''host=10.0.0.5 port=5432 dbname=app''.';
    END IF;
    IF EXISTS (SELECT FROM shardid._connstr_options(connstr) AS o
                WHERE o.keyword = 'dbname'
                  AND (o.value ~ '^postgres(ql)?://'
                       OR pg_catalog.strpos(o.value, '=') > 0)) THEN
        RAISE EXCEPTION 'the dbname in the connect string of node % is itself a connect string', name
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'libpq reads a dbname with "=" or a URI as a connect string of its own.',
                  HINT = 'Give its settings as keywords of the connect string itself.';
    END IF;
    IF EXISTS (SELECT FROM shardid._connstr_options(connstr) AS o WHERE o.keyword = 'options') THEN
        RAISE EXCEPTION 'the connect string of node % must not set options', name
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'Freezing a shard for a move appends options=''-c default_transaction_read_only=on'', which would replace them.',
                  HINT = 'Set per-database or per-role settings on the node instead (ALTER DATABASE/ROLE ... SET).';
    END IF;
    LOCK TABLE shardid.shard_placement IN SHARE ROW EXCLUSIVE MODE;
    IF EXISTS (SELECT FROM shardid.nodes AS n WHERE n.node = add_node.name) THEN
        RAISE EXCEPTION 'node "%" already exists', name
            USING ERRCODE = 'duplicate_object',
                  DETAIL = pg_catalog.format('Its connect string is %s.',
                                             (SELECT pg_catalog.quote_literal(n.connstr) FROM shardid.nodes AS n
                                               WHERE n.node = add_node.name));
    END IF;
    INSERT INTO shardid.nodes (node, connstr) VALUES (name, connstr);
    PERFORM shardid.refresh_cluster();
END
$$;

REVOKE ALL ON FUNCTION shardid.add_node(text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid.add_node(text, text) IS
    'Router: registers a data node (name, libpq key=value connect string) and creates the PL/Proxy cluster ''shardid'' if needed.';
-- Unregisters a node that holds no shard.
CREATE OR REPLACE FUNCTION shardid.remove_node(name text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    held integer;
BEGIN
    LOCK TABLE shardid.shard_placement IN SHARE ROW EXCLUSIVE MODE;
    IF NOT EXISTS (SELECT FROM shardid.nodes AS n WHERE n.node = remove_node.name) THEN
        RAISE EXCEPTION 'node "%" does not exist', name USING ERRCODE = 'undefined_object';
    END IF;
    SELECT pg_catalog.count(*) INTO held FROM shardid.shard_placement AS p
     WHERE p.node = remove_node.name;
    IF held > 0 THEN
        RAISE EXCEPTION 'node "%" still holds shards (%)', name, held
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Move them to other nodes first (CALL shardid.move_shard()).';
    END IF;
    DELETE FROM shardid.nodes AS n WHERE n.node = remove_node.name;
END
$$;

REVOKE ALL ON FUNCTION shardid.remove_node(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid.remove_node(text) IS
    'Router: unregisters a data node that holds no shard.';
-- Places shards first..last on a node: the node must already hold them
-- (created there with shardid.create_shards). A shard already on this node
-- is left alone; one placed on another node is refused (move it instead).
-- Returns the number of shards newly placed.
CREATE OR REPLACE FUNCTION shardid.place_shards(node text, first integer, last integer) RETURNS integer
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
    PERFORM shardid._check_shard_range(first, last);
    LOCK TABLE shardid.shard_placement IN SHARE ROW EXCLUSIVE MODE;
    IF NOT EXISTS (SELECT FROM shardid.nodes AS n WHERE n.node = place_shards.node) THEN
        RAISE EXCEPTION 'node "%" does not exist', node
            USING ERRCODE = 'undefined_object',
                  HINT = 'Register it first with shardid.add_node(name, connstr).';
    END IF;
    SELECT * INTO other FROM shardid.shard_placement AS p
     WHERE p.shard >= first AND p.shard <= last
       AND p.node <> place_shards.node
     ORDER BY p.shard LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'shard % is already placed on node "%"', other.shard, other.node
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = pg_catalog.format('No shard of %s .. %s was placed.', first, last),
                  HINT = 'Move a placed shard with CALL shardid.move_shard(), which copies its data.';
    END IF;
    INSERT INTO shardid.shard_placement (shard, node)
    SELECT g, place_shards.node FROM pg_catalog.generate_series(first, last) AS g
    ON CONFLICT (shard) DO NOTHING;
    GET DIAGNOSTICS added = ROW_COUNT;
    PERFORM shardid.refresh_cluster();
    RETURN added;
END
$$;

REVOKE ALL ON FUNCTION shardid.place_shards(text, integer, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid.place_shards(text, integer, integer) IS
    'Router: routes shards first..last to a node that already holds them; returns how many were newly placed. Refuses shards placed on another node.';
-- The placed shards, for fan-out: SPLIT i_shards; RUN ON i_shards; reaches
-- every node once with the shards it holds (RUN ON ALL would also try the
-- partitions of unplaced shards).
CREATE OR REPLACE FUNCTION shardid.placed_shards() RETURNS integer[]
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT COALESCE(pg_catalog.array_agg(p.shard ORDER BY p.shard), '{}')
      FROM shardid.shard_placement AS p
$$;

COMMENT ON FUNCTION shardid.placed_shards() IS
    'Router: the placed shard numbers, for fan-out with SPLIT i_shards; RUN ON i_shards;';
-- Freezes a shard on the router: its partition turns read-only on its node,
-- so writers through the router fail with 25006 (retry) and reads go on.
-- (bin/shardid-move-shard freezes on the source node instead, which leaves
-- the cluster alone.)
-- Returns the node that holds it.
CREATE OR REPLACE FUNCTION shardid.freeze_shard(shard integer) RETURNS text
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p shardid.shard_placement;
BEGIN
    LOCK TABLE shardid.shard_placement IN SHARE ROW EXCLUSIVE MODE;
    SELECT * INTO p FROM shardid.shard_placement AS x WHERE x.shard = freeze_shard.shard;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'shard % is not placed on any node', shard USING ERRCODE = 'undefined_object';
    END IF;
    IF p.frozen THEN
        RAISE EXCEPTION 'shard % is already frozen', shard
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Another move of this shard is running, or one failed without cleaning up.',
                  HINT = pg_catalog.format('If no move is running, check node %s and run SELECT shardid.unfreeze_shard(%s);', p.node, shard);
    END IF;
    UPDATE shardid.shard_placement AS x SET frozen = true WHERE x.shard = freeze_shard.shard;
    PERFORM shardid._refresh_partition(shard);
    RETURN p.node;
END
$$;

REVOKE ALL ON FUNCTION shardid.freeze_shard(integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid.freeze_shard(integer) IS
    'Router: makes the shard''s partition read-only (writes fail with 25006, reads go on); returns its node.';
-- Undoes freeze_shard().
CREATE OR REPLACE FUNCTION shardid.unfreeze_shard(shard integer) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    LOCK TABLE shardid.shard_placement IN SHARE ROW EXCLUSIVE MODE;
    UPDATE shardid.shard_placement AS x SET frozen = false
     WHERE x.shard = unfreeze_shard.shard;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'shard % is not placed on any node', shard USING ERRCODE = 'undefined_object';
    END IF;
    PERFORM shardid._refresh_partition(shard);
END
$$;

REVOKE ALL ON FUNCTION shardid.unfreeze_shard(integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid.unfreeze_shard(integer) IS
    'Router: undoes freeze_shard().';
-- Last step of a move, once the new node holds a verified copy: the
-- partition points at the new node, writable. The shard must be frozen on
-- the router, or have a move to this node in phase caught_up (frozen on its
-- node), which turns repointed in the same transaction.
CREATE OR REPLACE FUNCTION shardid.repoint_shard(shard integer, node text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p shardid.shard_placement;
    m shardid.shard_moves;
BEGIN
    LOCK TABLE shardid.shard_placement IN SHARE ROW EXCLUSIVE MODE;
    SELECT * INTO p FROM shardid.shard_placement AS x WHERE x.shard = repoint_shard.shard;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'shard % is not placed on any node', shard USING ERRCODE = 'undefined_object';
    END IF;
    IF NOT EXISTS (SELECT FROM shardid.nodes AS n WHERE n.node = repoint_shard.node) THEN
        RAISE EXCEPTION 'node "%" does not exist', node USING ERRCODE = 'undefined_object';
    END IF;
    SELECT * INTO m FROM shardid.shard_moves AS x WHERE x.shard = repoint_shard.shard FOR UPDATE;
    IF m.shard IS NOT NULL AND (m.phase <> 'caught_up' OR m.target <> repoint_shard.node) THEN
        RAISE EXCEPTION 'shard % is being moved to node "%" (phase %)', shard, m.target, m.phase
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Only a move that has caught up on its target may be repointed, to that target.',
                  HINT = pg_catalog.format('CALL shardid.move_shard(%s, %L); resumes it, CALL shardid.abort_move(%s); rolls it back.', shard, m.target, shard);
    END IF;
    IF m.shard IS NULL AND NOT p.frozen THEN
        RAISE EXCEPTION 'shard % is not frozen', shard
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Repointing a shard that takes writes would lose the writes made during the copy.',
                  HINT = 'Use CALL shardid.move_shard(), which freezes, copies, checks and repoints.';
    END IF;
    UPDATE shardid.shard_placement AS x
       SET node = repoint_shard.node, frozen = false, placed_at = pg_catalog.now()
     WHERE x.shard = repoint_shard.shard;
    UPDATE shardid.shard_moves AS x SET phase = 'repointed', updated_at = pg_catalog.now()
     WHERE x.shard = repoint_shard.shard;
    PERFORM shardid._refresh_partition(shard);
END
$$;

REVOKE ALL ON FUNCTION shardid.repoint_shard(integer, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid.repoint_shard(integer, text) IS
    'Router, last move step: points the partition of a frozen shard, or of a caught-up move to that node, at its new node, writable.';
-- On the old node after a move: any write that still reaches the retired
-- copy of a shard fails instead of being lost there.
CREATE OR REPLACE FUNCTION shardid._refuse_retired_write() RETURNS trigger
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

-- It fires for every role writing to a retired copy, EXECUTE or not; only
-- retire_shard() (administrators) attaches it.
REVOKE ALL ON FUNCTION shardid._refuse_retired_write() FROM PUBLIC;

COMMENT ON FUNCTION shardid._refuse_retired_write() IS
    'Trigger on the retired copy of a moved shard: refuses writes (25006, retry through the router).';
-- On the source node during a move's cut-over: writes to the shard fail
-- at once with 25006 (retry), instead of waiting behind a lock. A lease
-- freeze (third argument 'lease') lapses when the session that froze the
-- shard holds its advisory lock no more: the write goes through then (see
-- freeze_shard_tables).
CREATE OR REPLACE FUNCTION shardid._refuse_frozen_write() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF TG_NARGS >= 3 AND TG_ARGV[2] = 'lease'
       AND pg_try_advisory_xact_lock_shared(1936222564, TG_ARGV[0]::integer) THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION 'shard % is being moved to node %: %.% refuses writes for the cut-over', TG_ARGV[0], TG_ARGV[1],
            quote_ident(TG_TABLE_SCHEMA), quote_ident(TG_TABLE_NAME)
        USING ERRCODE = 'read_only_sql_transaction',
              HINT = 'Retry in a new transaction: the move finishes within seconds.';
END
$$;

-- It fires for every role writing to a frozen shard, EXECUTE or not; only
-- freeze_shard_tables() (administrators) attaches it.
REVOKE ALL ON FUNCTION shardid._refuse_frozen_write() FROM PUBLIC;

COMMENT ON FUNCTION shardid._refuse_frozen_write() IS
    'Trigger on the tables of a shard during a move''s cut-over: refuses writes at once (25006, retry); a lease freeze lapses with the session that froze the shard.';
-- Node: runs one statement for each table of a schema whose relkind is in
-- kinds (any relation with kinds NULL) and, if trigger is given, that has
-- a trigger of that name, in name order; returns how many. The statement is
-- format(sql, schema, table, args[1], args[2], ...): names go in with %I,
-- values with %L, never pasted into the SQL text.
CREATE OR REPLACE FUNCTION shardid._for_tables(schema_name name, kinds "char"[], sql text, args text[] DEFAULT '{}',
                                              trigger name DEFAULT NULL)
    RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t record;
    n integer := 0;
BEGIN
    FOR t IN SELECT c.relname FROM pg_class AS c JOIN pg_namespace AS s ON s.oid = c.relnamespace
              WHERE s.nspname = _for_tables.schema_name AND (kinds IS NULL OR c.relkind = ANY (kinds))
                AND (trigger IS NULL OR EXISTS (SELECT FROM pg_trigger AS g WHERE g.tgrelid = c.oid AND g.tgname = trigger))
              ORDER BY c.relname LOOP
        EXECUTE format(sql, VARIADIC ARRAY[schema_name, t.relname]::text[] || args);
        n := n + 1;
    END LOOP;
    RETURN n;
END
$$;

REVOKE ALL ON FUNCTION shardid._for_tables(name, "char"[], text, text[], name) FROM PUBLIC;

COMMENT ON FUNCTION shardid._for_tables(name, "char"[], text, text[], name) IS
    'Node: runs format(sql, schema, table, args[1], ...) for each table of a schema of the given relkinds (and with the given trigger), in name order; returns how many.';
-- Node, move cut-over: every table of the shard's schema gets the trigger
-- shardid_move_frozen, which refuses writes (25006, at once). Waits for
-- writes in flight (the caller sets lock_timeout). Returns the number of
-- tables.
--
-- lease: the freeze holds only while this session holds the advisory lock
-- (1936222564, shard), which it takes here (lock_not_available if writers
-- or another session hold it): if the session that froze the shard ends
-- (the mover was killed, the router or this node restarted) writes go
-- through again, since nothing is routed elsewhere before the freeze is
-- made permanent. Without lease (or called again without it) the freeze
-- is permanent until thaw_shard_tables(): what a move sets just before it
-- repoints the router, and what an offline move and a manual freeze use.
CREATE OR REPLACE FUNCTION shardid.freeze_shard_tables(schema_name name, shard integer, target text, lease boolean DEFAULT false)
    RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF lease AND NOT EXISTS (SELECT FROM pg_locks AS l
                              WHERE l.locktype = 'advisory' AND l.pid = pg_backend_pid() AND l.granted
                                AND l.classid = 1936222564::oid AND l.objid = shard::oid AND l.objsubid = 2
                                AND l.mode = 'ExclusiveLock') THEN
        -- waits (lock_timeout) for writers that passed a lapsed lease freeze
        PERFORM pg_advisory_lock(1936222564, shard);
    END IF;
    RETURN shardid._for_tables(schema_name, '{r,p}',
        'CREATE OR REPLACE TRIGGER shardid_move_frozen BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON %I.%I
         FOR EACH STATEMENT EXECUTE FUNCTION shardid._refuse_frozen_write(%L, %L, %L)',
        ARRAY[shard::text, target, CASE WHEN lease THEN 'lease' ELSE 'permanent' END]);
END
$$;

REVOKE ALL ON FUNCTION shardid.freeze_shard_tables(name, integer, text, boolean) FROM PUBLIC;

COMMENT ON FUNCTION shardid.freeze_shard_tables(name, integer, text, boolean) IS
    'Node, move cut-over: puts trigger shardid_move_frozen on every table of the schema (writes fail with 25006), held by this session''s advisory lock if lease, else permanent; returns the number of tables.';
-- Node: undoes freeze_shard_tables() (abort of a move), and releases a
-- freeze lease this session holds. Returns the number of triggers dropped.
CREATE OR REPLACE FUNCTION shardid.thaw_shard_tables(schema_name name) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n integer := shardid._for_tables(schema_name, NULL, 'DROP TRIGGER shardid_move_frozen ON %I.%I', trigger => 'shardid_move_frozen');
BEGIN
    PERFORM pg_advisory_unlock(1936222564, l.objid::integer)
       FROM pg_locks AS l
      WHERE l.locktype = 'advisory' AND l.pid = pg_backend_pid() AND l.granted
        AND l.classid = 1936222564::oid AND l.objsubid = 2 AND l.mode = 'ExclusiveLock';
    RETURN n;
END
$$;

REVOKE ALL ON FUNCTION shardid.thaw_shard_tables(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid.thaw_shard_tables(name) IS
    'Node: drops the shardid_move_frozen triggers of a schema (abort of a move) and releases this session''s freeze lease; returns how many triggers.';
-- Node, last move step on the source: unregisters the shard and retires
-- its schema: dropped, or kept under new_name with a trigger on every table
-- that refuses writes. Returns the schema's new name (NULL when dropped).
CREATE OR REPLACE FUNCTION shardid.retire_shard(shard integer, target text, new_name name) RETURNS name
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nsp name;
BEGIN
    nsp := shardid.detach_shard(shard);
    PERFORM shardid.thaw_shard_tables(nsp);
    IF new_name IS NULL THEN
        EXECUTE pg_catalog.format('DROP SCHEMA %I CASCADE', nsp);
        RETURN NULL;
    END IF;
    PERFORM shardid._for_tables(nsp, '{r,p}',
        'CREATE TRIGGER shardid_retired BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON %I.%I
         FOR EACH STATEMENT EXECUTE FUNCTION shardid._refuse_retired_write(%L, %L)',
        ARRAY[shard::text, target]);
    EXECUTE pg_catalog.format('ALTER SCHEMA %I RENAME TO %I', nsp, new_name);
    RETURN new_name;
END
$$;

REVOKE ALL ON FUNCTION shardid.retire_shard(integer, text, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid.retire_shard(integer, text, name) IS
    'Node, after a move: detaches the shard and drops its schema (new_name NULL) or renames it to new_name with triggers refusing writes.';
-- Raises an error from its parts (as GET STACKED DIAGNOSTICS gives them),
-- leaving out an empty detail or hint: RAISE refuses NULL options.
CREATE OR REPLACE FUNCTION shardid._raise(sqlstate text, message text, detail text DEFAULT NULL, hint text DEFAULT NULL)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF COALESCE(detail, '') <> '' AND COALESCE(hint, '') <> '' THEN
        RAISE EXCEPTION USING ERRCODE = sqlstate, MESSAGE = message, DETAIL = detail, HINT = hint;
    ELSIF COALESCE(detail, '') <> '' THEN
        RAISE EXCEPTION USING ERRCODE = sqlstate, MESSAGE = message, DETAIL = detail;
    ELSIF COALESCE(hint, '') <> '' THEN
        RAISE EXCEPTION USING ERRCODE = sqlstate, MESSAGE = message, HINT = hint;
    ELSE
        RAISE EXCEPTION USING ERRCODE = sqlstate, MESSAGE = message;
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid._raise(text, text, text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid._raise(text, text, text, text) IS
    'Internal: raises an error from SQLSTATE, message, detail and hint, leaving out empty ones.';
-- Privileges as one comparable string: sorted words grantee:PRIVILEGE[*]/grantor
-- ("*" for WITH GRANT OPTION, PUBLIC for grantee 0). A NULL ACL is the
-- default of its object kind (kind 'r', 's', 'n'; NULL for column ACLs,
-- whose default is none). ignore_role leaves out the grants to one role
-- (the 15 subscription role of a move, see _move_subscribe).
-- search_path is pinned: every name below resolves in pg_catalog.
CREATE OR REPLACE FUNCTION shardid._acl_words(acl aclitem[], kind "char", owner oid, ignore_role name DEFAULT NULL)
    RETURNS text
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT COALESCE(string_agg(x.w, ' ' ORDER BY x.w COLLATE "C"), '')
      FROM (SELECT format('%s:%s%s/%s',
                          CASE a.grantee WHEN 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(a.grantee)) END,
                          a.privilege_type,
                          CASE WHEN a.is_grantable THEN '*' ELSE '' END,
                          quote_ident(pg_get_userbyid(a.grantor))) AS w
              FROM aclexplode(CASE WHEN acl IS NULL AND kind IS NOT NULL THEN acldefault(kind, owner) ELSE acl END) AS a
             WHERE ignore_role IS NULL OR a.grantee = 0 OR pg_get_userbyid(a.grantee) <> ignore_role) AS x
$$;

REVOKE ALL ON FUNCTION shardid._acl_words(aclitem[], "char", oid, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid._acl_words(aclitem[], "char", oid, name) IS
    'Internal: an ACL (NULL: the kind''s default) as sorted words grantee:PRIVILEGE[*]/grantor, leaving out one role if given.';
-- An ACL (NULL: the kind's default; kind NULL for column ACLs) as a JSON
-- array of {grantee, privilege, grantable, grantor}, grantee null for
-- PUBLIC, for _apply_acl() on another node: role names, never OIDs.
CREATE OR REPLACE FUNCTION shardid._acl_items(acl aclitem[], kind "char", owner oid) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT COALESCE(jsonb_agg(jsonb_build_object(
               'grantee', CASE a.grantee WHEN 0 THEN NULL ELSE pg_get_userbyid(a.grantee) END,
               'privilege', a.privilege_type,
               'grantable', a.is_grantable,
               'grantor', pg_get_userbyid(a.grantor))
             ORDER BY pg_get_userbyid(a.grantee), a.privilege_type), '[]')
      FROM aclexplode(CASE WHEN acl IS NULL AND kind IS NOT NULL THEN acldefault(kind, owner) ELSE acl END) AS a
$$;

REVOKE ALL ON FUNCTION shardid._acl_items(aclitem[], "char", oid) FROM PUBLIC;

COMMENT ON FUNCTION shardid._acl_items(aclitem[], "char", oid) IS
    'Internal: an ACL as a JSON array of {grantee, privilege, grantable, grantor} (role names), for _apply_acl() on another node.';
-- Gives an object exactly the privileges of a list made by _acl_items()
-- on another node: everything is revoked (also from the owner), then each
-- item granted, by its grantor (grants the owner made first, so a grant
-- option exists before it is used). Run by a superuser; a GRANT runs no
-- user code. column: the column's privileges instead of the object's.
CREATE OR REPLACE FUNCTION shardid._apply_acl(kind text, object text, owner name, items jsonb, column_name name DEFAULT NULL)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    i    jsonb;
    cols text := CASE WHEN column_name IS NULL THEN '' ELSE format(' (%I)', column_name) END;
BEGIN
    IF kind NOT IN ('SCHEMA', 'SEQUENCE', 'TABLE') THEN
        RAISE EXCEPTION 'unexpected object kind %', kind USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF column_name IS NULL THEN
        EXECUTE format('REVOKE ALL ON %s %s FROM PUBLIC, %I', kind, object, owner);
    END IF;
    FOR i IN SELECT x FROM jsonb_array_elements(items) AS x
              ORDER BY x->>'grantor' IS DISTINCT FROM owner, x->>'grantor', x->>'grantee' LOOP
        IF i->>'privilege' !~ '^[A-Z ]+$' THEN
            RAISE EXCEPTION 'unexpected privilege %', i->>'privilege' USING ERRCODE = 'invalid_parameter_value';
        END IF;
        IF i->>'grantor' IS DISTINCT FROM owner THEN
            PERFORM set_config('role', i->>'grantor', true);
        END IF;
        EXECUTE format('GRANT %s%s ON %s %s TO %s%s', i->>'privilege', cols, kind, object,
                       COALESCE(quote_ident(i->>'grantee'), 'PUBLIC'),
                       CASE WHEN (i->>'grantable')::boolean THEN ' WITH GRANT OPTION' ELSE '' END);
        IF i->>'grantor' IS DISTINCT FROM owner THEN
            PERFORM set_config('role', 'none', true);
        END IF;
    END LOOP;
END
$$;

REVOKE ALL ON FUNCTION shardid._apply_acl(text, text, name, jsonb, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid._apply_acl(text, text, name, jsonb, name) IS
    'Internal, moves: gives a schema, sequence, table or column exactly the privileges listed by _acl_items() on another node.';
-- Node: the definition of a shard's schema as flat {what: definition}
-- pairs, so that two copies of a shard (the source and the target of a
-- move) compare key by key and a difference reads as a sentence:
--   "table posts: constraint posts_body_check" -> "CHECK ((length(body) > 0))"
-- It covers what decides which rows a table takes and who may use it: the
-- schema's owner and privileges; every relation with its kind, owner and
-- privileges; for tables the columns in order, each column's type, NOT
-- NULL, default, identity, generation, collation and privileges,
-- constraints, indexes, triggers (not shardid's own freeze triggers),
-- replica identity, row security and policies; for sequences their
-- parameters and owning column; and the schema's functions and types.
-- Not covered: comments, storage parameters, statistics targets.
-- Expressions print with search_path pinned, so equal definitions print
-- equal text on both nodes. ignore_role: see _acl_words().
CREATE OR REPLACE FUNCTION shardid._shard_definition(schema_name name, ignore_role name DEFAULT NULL)
    RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
WITH nsp AS (
    SELECT n.oid, n.nspowner, n.nspacl FROM pg_namespace AS n WHERE n.nspname = schema_name
), rel AS (
    SELECT c.oid, c.relname, c.relkind, c.relowner, c.relacl, c.relpersistence, c.relreplident,
           c.relrowsecurity, c.relforcerowsecurity,
           CASE c.relkind WHEN 'r' THEN 'table' WHEN 'p' THEN 'table' WHEN 'S' THEN 'sequence'
                          WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view'
                          WHEN 'f' THEN 'foreign table' ELSE 'composite type' END
               || ' ' || quote_ident(c.relname) AS what
      FROM pg_class AS c JOIN nsp ON c.relnamespace = nsp.oid
     WHERE c.relkind IN ('r', 'p', 'S', 'v', 'm', 'f', 'c')
), tab AS (
    SELECT * FROM rel WHERE relkind IN ('r', 'p')
), col AS (
    SELECT t.what, t.oid AS relid, a.*
      FROM tab AS t JOIN pg_attribute AS a ON a.attrelid = t.oid AND a.attnum > 0 AND NOT a.attisdropped
), kv(k, v) AS (
    SELECT 'schema: owner', quote_ident(pg_get_userbyid(nsp.nspowner)) FROM nsp
    UNION ALL
    SELECT 'schema: privileges', shardid._acl_words(nsp.nspacl, 'n', nsp.nspowner, ignore_role) FROM nsp
    UNION ALL
    SELECT r.what, CASE r.relpersistence WHEN 'u' THEN 'unlogged' WHEN 't' THEN 'temporary' ELSE 'permanent' END
                   || CASE WHEN r.relkind = 'p' THEN ', partitioned' ELSE '' END
      FROM rel AS r
    UNION ALL
    SELECT r.what || ': owner', quote_ident(pg_get_userbyid(r.relowner)) FROM rel AS r WHERE r.relkind <> 'c'
    UNION ALL
    SELECT r.what || ': privileges',
           shardid._acl_words(r.relacl, CASE r.relkind WHEN 'S' THEN 's' ELSE 'r' END::"char", r.relowner, ignore_role)
      FROM rel AS r WHERE r.relkind <> 'c'
    UNION ALL
    SELECT c.what || ': columns', string_agg(quote_ident(c.attname), ', ' ORDER BY c.attnum) FROM col AS c GROUP BY c.what
    UNION ALL
    SELECT c.what || ': column ' || quote_ident(c.attname),
           format_type(c.atttypid, c.atttypmod)
           || CASE WHEN c.attcollation <> ty.typcollation
                   THEN ' COLLATE ' || quote_ident(cn.nspname) || '.' || quote_ident(co.collname) ELSE '' END
           || CASE WHEN c.attnotnull THEN ' NOT NULL' ELSE '' END
           || CASE c.attidentity WHEN 'a' THEN ' GENERATED ALWAYS AS IDENTITY'
                                 WHEN 'd' THEN ' GENERATED BY DEFAULT AS IDENTITY' ELSE '' END
           || CASE WHEN c.attgenerated = 's' THEN ' GENERATED ALWAYS AS (' || pg_get_expr(d.adbin, d.adrelid) || ') STORED'
                   WHEN d.adbin IS NOT NULL THEN ' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid) ELSE '' END
      FROM col AS c
      JOIN pg_type AS ty ON ty.oid = c.atttypid
      LEFT JOIN pg_attrdef AS d ON d.adrelid = c.relid AND d.adnum = c.attnum
      LEFT JOIN pg_collation AS co ON co.oid = c.attcollation
      LEFT JOIN pg_namespace AS cn ON cn.oid = co.collnamespace
    UNION ALL
    SELECT c.what || ': column ' || quote_ident(c.attname) || ': privileges',
           shardid._acl_words(c.attacl, NULL, NULL, ignore_role)
      FROM col AS c WHERE c.attacl IS NOT NULL AND shardid._acl_words(c.attacl, NULL, NULL, ignore_role) <> ''
    UNION ALL
    -- NOT NULL is a column property above (18 also lists it here, as 'n')
    SELECT t.what || ': constraint ' || quote_ident(k.conname), pg_get_constraintdef(k.oid)
      FROM tab AS t JOIN pg_constraint AS k ON k.conrelid = t.oid WHERE k.contype <> 'n'
    UNION ALL
    SELECT t.what || ': index ' || quote_ident(i.relname), pg_get_indexdef(x.indexrelid)
      FROM tab AS t JOIN pg_index AS x ON x.indrelid = t.oid JOIN pg_class AS i ON i.oid = x.indexrelid
    UNION ALL
    SELECT t.what || ': trigger ' || quote_ident(g.tgname),
           pg_get_triggerdef(g.oid) || CASE g.tgenabled WHEN 'O' THEN '' WHEN 'D' THEN ' (disabled)'
                                                        WHEN 'R' THEN ' (enabled replica)' ELSE ' (enabled always)' END
      FROM tab AS t JOIN pg_trigger AS g ON g.tgrelid = t.oid
     WHERE NOT g.tgisinternal AND g.tgname NOT IN ('shardid_move_frozen', 'shardid_retired')
    UNION ALL
    SELECT t.what || ': replica identity',
           CASE t.relreplident WHEN 'd' THEN 'default' WHEN 'n' THEN 'nothing' WHEN 'f' THEN 'full'
                               ELSE 'index ' || COALESCE((SELECT quote_ident(i.relname) FROM pg_index AS x
                                                            JOIN pg_class AS i ON i.oid = x.indexrelid
                                                           WHERE x.indrelid = t.oid AND x.indisreplident), '?') END
      FROM tab AS t
    UNION ALL
    SELECT t.what || ': row security', CASE WHEN t.relforcerowsecurity THEN 'enabled, forced' ELSE 'enabled' END
      FROM tab AS t WHERE t.relrowsecurity
    UNION ALL
    SELECT t.what || ': policy ' || quote_ident(p.polname),
           format('FOR %s%s TO %s%s%s',
                  CASE p.polcmd WHEN 'r' THEN 'SELECT' WHEN 'a' THEN 'INSERT' WHEN 'w' THEN 'UPDATE' WHEN 'd' THEN 'DELETE' ELSE 'ALL' END,
                  CASE WHEN p.polpermissive THEN '' ELSE ' (restrictive)' END,
                  (SELECT string_agg(CASE WHEN r = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(r)) END, ', ' ORDER BY 1)
                     FROM unnest(p.polroles) AS r),
                  COALESCE(' USING (' || pg_get_expr(p.polqual, p.polrelid) || ')', ''),
                  COALESCE(' WITH CHECK (' || pg_get_expr(p.polwithcheck, p.polrelid) || ')', ''))
      FROM tab AS t JOIN pg_policy AS p ON p.polrelid = t.oid
    UNION ALL
    SELECT r.what || ': parameters',
           format('%s start %s increment %s minvalue %s maxvalue %s cache %s%s', format_type(s.seqtypid, NULL),
                  s.seqstart, s.seqincrement, s.seqmin, s.seqmax, s.seqcache, CASE WHEN s.seqcycle THEN ' cycle' ELSE '' END)
      FROM rel AS r JOIN pg_sequence AS s ON s.seqrelid = r.oid
    UNION ALL
    SELECT r.what || ': owned by', quote_ident(t.relname) || '.' || quote_ident(a.attname)
      FROM rel AS r
      JOIN pg_depend AS d ON d.classid = 'pg_class'::regclass AND d.objid = r.oid
                         AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')
      JOIN pg_class AS t ON t.oid = d.refobjid
      JOIN pg_attribute AS a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
     WHERE r.relkind = 'S'
    UNION ALL
    SELECT format('%s %s(%s)', CASE p.prokind WHEN 'p' THEN 'procedure' WHEN 'a' THEN 'aggregate' ELSE 'function' END,
                  quote_ident(p.proname), pg_get_function_identity_arguments(p.oid)), 'exists'
      FROM pg_proc AS p JOIN nsp ON p.pronamespace = nsp.oid
    UNION ALL
    SELECT 'type ' || quote_ident(ty.typname), 'exists'
      FROM pg_type AS ty JOIN nsp ON ty.typnamespace = nsp.oid
     WHERE ty.typrelid = 0 AND NOT EXISTS (SELECT FROM pg_type AS e WHERE e.typarray = ty.oid)
)
SELECT COALESCE(jsonb_object_agg(kv.k, kv.v), '{}') FROM kv WHERE kv.v IS NOT NULL
$$;

REVOKE ALL ON FUNCTION shardid._shard_definition(name, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid._shard_definition(name, name) IS
    'Node, moves: the definition of a shard''s schema (relations, columns, defaults, constraints, indexes, triggers, privileges, sequences, policies) as flat {what: definition} pairs for comparison.';
-- Node, source of a move: what the router needs to know before and while
-- it moves a shard away from here, in one round trip: the registry row,
-- the online prerequisites (wal_level, a free replication slot, replica
-- identities), the size, the owners and privileges the target must give
-- its copy, the generator's parameters, every role named, and the
-- definition to compare (_shard_definition). Changes nothing.
CREATE OR REPLACE FUNCTION shardid._move_source_facts(shard integer) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r      shardid.shard_registry;
    nspoid oid;
    out    jsonb;
BEGIN
    SELECT * INTO r FROM shardid.shard_registry AS s WHERE s.shard = _move_source_facts.shard;
    out := jsonb_build_object(
        'registered', FOUND,
        'schema_name', r.schema_name,
        'sequence_schema', r.sequence_schema,
        'sequence_name', r.sequence_name,
        'wal_level', current_setting('wal_level'),
        'free_slot', (SELECT count(*) FROM pg_replication_slots) < current_setting('max_replication_slots')::integer,
        'server_version_num', current_setting('server_version_num')::integer);
    SELECT n.oid INTO nspoid FROM pg_namespace AS n WHERE n.nspname = r.schema_name;
    IF nspoid IS NULL THEN
        RETURN out || jsonb_build_object('schema_exists', false);
    END IF;
    RETURN out || jsonb_build_object(
        'schema_exists', true,
        -- main forks of the tables and their TOAST tables (as _move_copy_progress counts them)
        'bytes', (SELECT COALESCE(sum(pg_relation_size(c.oid)
                                      + CASE WHEN c.reltoastrelid <> 0 THEN pg_relation_size(c.reltoastrelid) ELSE 0 END), 0)
                    FROM pg_class AS c WHERE c.relnamespace = nspoid AND c.relkind = 'r'),
        -- tables an online move cannot replicate UPDATE/DELETE of
        'no_identity', (SELECT string_agg(format('%I.%I', r.schema_name, c.relname), ', ' ORDER BY c.relname)
                          FROM pg_class AS c
                         WHERE c.relnamespace = nspoid AND c.relkind = 'r'
                           AND (c.relreplident = 'n' OR (c.relreplident = 'd' AND NOT EXISTS
                                (SELECT FROM pg_index AS i WHERE i.indrelid = c.oid AND i.indisprimary)))),
        'sequence', (SELECT jsonb_build_object('name', c.relname, 'type', format_type(s.seqtypid, NULL),
                                               'start', s.seqstart, 'increment', s.seqincrement, 'min', s.seqmin,
                                               'max', s.seqmax, 'cache', s.seqcache, 'cycle', s.seqcycle)
                       FROM pg_class AS c JOIN pg_sequence AS s ON s.seqrelid = c.oid
                      WHERE c.relnamespace = nspoid AND c.relname = r.sequence_name AND r.sequence_schema = r.schema_name),
        'ownership', jsonb_build_object(
            'schema', (SELECT jsonb_build_object('owner', pg_get_userbyid(n.nspowner),
                                                 'acl', shardid._acl_items(n.nspacl, 'n', n.nspowner))
                         FROM pg_namespace AS n WHERE n.oid = nspoid),
            'relations', (SELECT COALESCE(jsonb_object_agg(c.relname, jsonb_build_object(
                                      'kind', c.relkind,
                                      'owner', pg_get_userbyid(c.relowner),
                                      'replident', c.relreplident,
                                      'replident_index', (SELECT i.relname FROM pg_index AS x JOIN pg_class AS i ON i.oid = x.indexrelid
                                                           WHERE x.indrelid = c.oid AND x.indisreplident),
                                      'acl', shardid._acl_items(c.relacl, CASE c.relkind WHEN 'S' THEN 's' ELSE 'r' END::"char", c.relowner),
                                      'columns', (SELECT COALESCE(jsonb_object_agg(a.attname, shardid._acl_items(a.attacl, NULL, NULL)), '{}')
                                                    FROM pg_attribute AS a
                                                   WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
                                                     AND a.attacl IS NOT NULL))), '{}')
                            FROM pg_class AS c WHERE c.relnamespace = nspoid AND c.relkind IN ('r', 'p', 'S'))),
        'roles', (SELECT COALESCE(jsonb_agg(DISTINCT x.rolname), '[]')
                    FROM (SELECT pg_get_userbyid(n.nspowner) AS rolname FROM pg_namespace AS n WHERE n.oid = nspoid
                          UNION ALL
                          SELECT pg_get_userbyid(c.relowner) FROM pg_class AS c WHERE c.relnamespace = nspoid
                          UNION ALL
                          SELECT pg_get_userbyid(a.grantee) FROM pg_class AS c, aclexplode(c.relacl) AS a
                           WHERE c.relnamespace = nspoid AND a.grantee <> 0
                          UNION ALL
                          SELECT pg_get_userbyid(a.grantor) FROM pg_class AS c, aclexplode(c.relacl) AS a
                           WHERE c.relnamespace = nspoid
                          UNION ALL
                          SELECT pg_get_userbyid(a.grantee) FROM pg_namespace AS n, aclexplode(n.nspacl) AS a
                           WHERE n.oid = nspoid AND a.grantee <> 0
                          UNION ALL
                          SELECT pg_get_userbyid(x.grantee) FROM pg_attribute AS t
                            JOIN pg_class AS c ON c.oid = t.attrelid, aclexplode(t.attacl) AS x
                           WHERE c.relnamespace = nspoid AND x.grantee <> 0) AS x),
        'untrusted_code', shardid._move_untrusted_code(r.schema_name),
        'definition', shardid._shard_definition(r.schema_name));
END
$$;

REVOKE ALL ON FUNCTION shardid._move_source_facts(integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_source_facts(integer) IS
    'Node, moves: what the router needs about a shard before moving it away (registry, prerequisites, size, owners and privileges, definition); changes nothing.';
-- Node, target of a move: creates the shard the way create_shard() would,
-- from this node's templates (shardid.sharded_tables), under the source's
-- schema and generator names, registers it, and gives the schema, the
-- generator and the tables the owners, privileges and replica identities
-- (not templates' matters: set per shard) they have on the source (source: _move_source_facts() there). Returns the copy's
-- definition, for the router to compare with the source's. dry_run makes
-- and measures it, then undoes it (the move's checks, before anything
-- changes). Called again once the copy exists, it returns its definition:
-- the copy is made in one transaction, so an existing registration of
-- this shard in this schema is the move's own.
CREATE OR REPLACE FUNCTION shardid._create_shard_copy(shard integer, source jsonb, dry_run boolean) RETURNS jsonb
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
    SELECT * INTO r FROM shardid.shard_registry AS s WHERE s.shard = _create_shard_copy.shard;
    IF FOUND THEN
        IF r.schema_name = nsp AND NOT dry_run THEN
            RETURN shardid._shard_definition(nsp);
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
    PERFORM shardid._check_templates();

    BEGIN
        EXECUTE format('CREATE SCHEMA %I', nsp);
        EXECUTE format('CREATE SEQUENCE %I.%I AS %s INCREMENT %s MINVALUE %s MAXVALUE %s START %s CACHE %s %s',
                       nsp, seq->>'name', (seq->>'type')::regtype, (seq->>'increment')::bigint,
                       (seq->>'min')::bigint, (seq->>'max')::bigint, (seq->>'start')::bigint,
                       (seq->>'cache')::bigint, CASE WHEN (seq->>'cycle')::boolean THEN 'CYCLE' ELSE 'NO CYCLE' END);
        EXECUTE format('COMMENT ON SEQUENCE %I.%I IS %L', nsp, seq->>'name',
                       format('Generator of shard %s: state = ms since the layout epoch << seq_bits | counter. Do not setval() it lower.', shard));
        INSERT INTO shardid.shard_registry (shard, schema_name, sequence_schema, sequence_name)
            VALUES (shard, nsp, nsp, seq->>'name');
        PERFORM shardid._create_shard_tables(shard);

        EXECUTE format('ALTER SCHEMA %I OWNER TO %I', nsp, own->'schema'->>'owner');
        PERFORM shardid._apply_acl('SCHEMA', format('%I', nsp), own->'schema'->>'owner', own->'schema'->'acl');
        FOR t IN SELECT e.key AS relname, e.value AS o FROM jsonb_each(own->'relations') AS e ORDER BY e.key LOOP
            -- what is missing here, or of another kind, the comparison reports
            CONTINUE WHEN NOT EXISTS (SELECT FROM pg_class AS x JOIN pg_namespace AS n ON n.oid = x.relnamespace
                                       WHERE n.nspname = nsp AND x.relname = t.relname AND x.relkind::text = t.o->>'kind');
            kind := CASE t.o->>'kind' WHEN 'S' THEN 'SEQUENCE' ELSE 'TABLE' END;
            EXECUTE format('ALTER %s %I.%I OWNER TO %I', kind, nsp, t.relname, t.o->>'owner');
            PERFORM shardid._apply_acl(kind, format('%I.%I', nsp, t.relname), t.o->>'owner', t.o->'acl');
            IF kind = 'TABLE' AND (t.o->>'replident' IN ('f', 'n') OR t.o->>'replident' = 'i' AND to_regclass(format('%I.%I', nsp, t.o->>'replident_index')) IS NOT NULL) THEN
                EXECUTE format('ALTER TABLE %I.%I REPLICA IDENTITY %s', nsp, t.relname,
                               CASE t.o->>'replident' WHEN 'f' THEN 'FULL' WHEN 'n' THEN 'NOTHING'
                                                      ELSE format('USING INDEX %I', t.o->>'replident_index') END);
            END IF;
            FOR c IN SELECT e.key AS attname, e.value AS acl FROM jsonb_each(t.o->'columns') AS e ORDER BY e.key LOOP
                CONTINUE WHEN NOT EXISTS (SELECT FROM pg_attribute AS a
                                           WHERE a.attrelid = format('%I.%I', nsp, t.relname)::regclass
                                             AND a.attname = c.attname AND NOT a.attisdropped);
                PERFORM shardid._apply_acl('TABLE', format('%I.%I', nsp, t.relname), t.o->>'owner', c.acl, c.attname);
            END LOOP;
        END LOOP;
        def := shardid._shard_definition(nsp);
        IF dry_run THEN
            RAISE EXCEPTION 'dry run' USING ERRCODE = 'SIDRY';
        END IF;
    EXCEPTION WHEN SQLSTATE 'SIDRY' THEN
        NULL;   -- undone; def was taken before
    END;
    RETURN def;
END
$$;

REVOKE ALL ON FUNCTION shardid._create_shard_copy(integer, jsonb, boolean) FROM PUBLIC;

COMMENT ON FUNCTION shardid._create_shard_copy(integer, jsonb, boolean) IS
    'Node, target of a move: creates and registers the shard from this node''s templates with the source''s owners and privileges (source: _move_source_facts()); returns its definition; dry_run undoes it.';
-- Node, source of a move, start of the cut-over: freezes the shard
-- (freeze_shard_tables, lease or permanent, waiting at most lock_timeout_ms
-- for its tables) and returns, from the same transaction, the WAL insert
-- position and the state of every generator of the schema. Every write to
-- the shard committed before the freeze lies below that position (the
-- freeze waited for writes in flight), and the generators are final.
CREATE OR REPLACE FUNCTION shardid._move_freeze(schema_name name, shard integer, target text, lease boolean, lock_timeout_ms integer)
    RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n integer;
BEGIN
    PERFORM set_config('lock_timeout', lock_timeout_ms || 'ms', true);
    n := shardid.freeze_shard_tables(schema_name, shard, target, lease);
    RETURN jsonb_build_object(
        'tables', n,
        'lsn', pg_current_wal_insert_lsn()::text,
        'states', (SELECT COALESCE(jsonb_object_agg(x.relname, x.v) FILTER (WHERE x.v IS NOT NULL), '{}')
                     FROM (SELECT c.relname, pg_sequence_last_value(c.oid) AS v
                             FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
                            WHERE n.nspname = _move_freeze.schema_name AND c.relkind = 'S') AS x));
END
$$;

REVOKE ALL ON FUNCTION shardid._move_freeze(name, integer, text, boolean, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_freeze(name, integer, text, boolean, integer) IS
    'Node, move cut-over on the source: freezes the shard''s tables and returns the WAL insert position and its generators'' states.';
-- Node, source of a move, once the target has everything: makes the
-- freeze permanent, so it outlives this session (the router repoints
-- next), and returns the schema's definition for the last comparison.
CREATE OR REPLACE FUNCTION shardid._move_seal(schema_name name, shard integer, target text, lock_timeout_ms integer)
    RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM set_config('lock_timeout', lock_timeout_ms || 'ms', true);
    PERFORM shardid.freeze_shard_tables(schema_name, shard, target, false);
    RETURN shardid._shard_definition(schema_name);
END
$$;

REVOKE ALL ON FUNCTION shardid._move_seal(name, integer, text, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_seal(name, integer, text, integer) IS
    'Node, move cut-over on the source: makes the freeze permanent and returns the schema''s definition.';
-- Node, target of a move: raises the generators of the schema to at least
-- the states the frozen source reported ({sequence name: last_value});
-- logical replication never carries them. Never lowers one. Returns how
-- many it raised. Nothing calls them meanwhile: the router does not route
-- the shard here yet.
CREATE OR REPLACE FUNCTION shardid._move_raise_generators(schema_name name, states jsonb) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    x record;
    n integer := 0;
BEGIN
    FOR x IN SELECT c.oid, j.value::bigint AS want
               FROM jsonb_each_text(states) AS j
               JOIN pg_class AS c ON c.relname = j.key AND c.relkind = 'S'
               JOIN pg_namespace AS s ON s.oid = c.relnamespace AND s.nspname = schema_name
              ORDER BY c.relname LOOP
        IF pg_sequence_last_value(x.oid) IS NULL OR pg_sequence_last_value(x.oid) < x.want THEN
            PERFORM setval(x.oid, x.want, true);
            n := n + 1;
        END IF;
    END LOOP;
    RETURN n;
END
$$;

REVOKE ALL ON FUNCTION shardid._move_raise_generators(name, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_raise_generators(name, jsonb) IS
    'Node, move cut-over on the target: raises the schema''s generators to at least the source''s states; returns how many.';
-- Node, offline move: the exact row count of every table of a schema, to
-- check that the copy made while the shard was frozen is complete.
CREATE OR REPLACE FUNCTION shardid._move_row_counts(schema_name name) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t   record;
    n   bigint;
    out jsonb := '{}';
BEGIN
    FOR t IN SELECT c.relname FROM pg_class AS c JOIN pg_namespace AS s ON s.oid = c.relnamespace
              WHERE s.nspname = schema_name AND c.relkind = 'r' ORDER BY c.relname LOOP
        EXECUTE format('SELECT count(*) FROM ONLY %I.%I', schema_name, t.relname) INTO n;
        out := out || jsonb_build_object(t.relname, n);
    END LOOP;
    RETURN out;
END
$$;

REVOKE ALL ON FUNCTION shardid._move_row_counts(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_row_counts(name) IS
    'Node, offline moves: exact row counts of the tables of a schema.';
-- Node, offline moves: the functions not owned by a superuser whose code
-- runs when rows are written into the schema's tables by COPY: reached
-- from the tables and their indexes, constraints, defaults and generated
-- columns, through column types, domains and their constraints, operators
-- and other functions (pg_depend). An offline move replays the rows as a
-- superuser (pg_dump --data-only --disable-triggers: triggers are off, but
-- CHECK constraints, index expressions and domains are not), so such code
-- would run with a superuser's rights; online moves apply as the tables'
-- owners instead. Returns them as text, NULL when there are none.
CREATE OR REPLACE FUNCTION shardid._move_untrusted_code(schema_name name) RETURNS text
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
WITH RECURSIVE rels AS (
    SELECT c.oid FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
     WHERE n.nspname = schema_name AND c.relkind IN ('r', 'p', 'i', 'I')
), reached(classid, objid) AS (
    SELECT 'pg_class'::regclass::oid, r.oid FROM rels AS r
    UNION
    SELECT 'pg_constraint'::regclass::oid, k.oid FROM pg_constraint AS k WHERE k.conrelid IN (SELECT oid FROM rels)
    UNION
    SELECT 'pg_attrdef'::regclass::oid, d.oid FROM pg_attrdef AS d WHERE d.adrelid IN (SELECT oid FROM rels)
    UNION
    SELECT 'pg_type'::regclass::oid, a.atttypid FROM pg_attribute AS a
     WHERE a.attrelid IN (SELECT oid FROM rels) AND a.attnum > 0 AND NOT a.attisdropped
    UNION
    SELECT x.classid, x.objid
      FROM reached AS r
     CROSS JOIN LATERAL (SELECT d.refclassid AS classid, d.refobjid AS objid FROM pg_depend AS d
                          WHERE d.classid = r.classid AND d.objid = r.objid AND d.deptype IN ('n', 'a')
                            AND d.refclassid IN ('pg_proc'::regclass, 'pg_type'::regclass, 'pg_operator'::regclass)
                         UNION ALL
                         -- a domain's constraints
                         SELECT 'pg_constraint'::regclass::oid, k.oid FROM pg_constraint AS k
                          WHERE r.classid = 'pg_type'::regclass AND k.contypid = r.objid) AS x
     WHERE r.classid IN ('pg_type'::regclass, 'pg_operator'::regclass, 'pg_proc'::regclass, 'pg_constraint'::regclass)
        OR r.objid IN (SELECT oid FROM rels) OR r.classid = 'pg_attrdef'::regclass
)
SELECT string_agg(format('%s (owned by %s)', p.oid::regprocedure, quote_ident(pg_get_userbyid(p.proowner))), ', '
                  ORDER BY p.oid::regprocedure::text)
  FROM pg_proc AS p
 WHERE p.oid IN (SELECT r.objid FROM reached AS r WHERE r.classid = 'pg_proc'::regclass)
   AND NOT (SELECT o.rolsuper FROM pg_roles AS o WHERE o.oid = p.proowner)
$$;

REVOKE ALL ON FUNCTION shardid._move_untrusted_code(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_untrusted_code(name) IS
    'Node, offline moves: functions not owned by a superuser that writing rows into the schema''s tables would run (constraints, indexes, defaults, domains, operators); NULL if none.';
-- Node, target of an offline move, first statement of the transaction that
-- replays the rows (bin/shardid-move-shard --offline): locks the copy's
-- tables against any change until the replay commits, refuses if writing
-- rows into them would run code of a role that is not a superuser (see
-- _move_untrusted_code), and empties them (a repeated attempt replaces what
-- an earlier one left). Returns the number of tables.
CREATE OR REPLACE FUNCTION shardid._move_offline_load(schema_name name) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n    integer := shardid._for_tables(schema_name, '{r,p}', 'LOCK TABLE %I.%I IN ACCESS EXCLUSIVE MODE');
    code text;
BEGIN
    code := shardid._move_untrusted_code(schema_name);
    IF code IS NOT NULL THEN
        RAISE EXCEPTION 'the rows of schema % cannot be copied offline: writing them would run code of roles that are not superusers',
                quote_ident(schema_name)
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'Functions: ' || code || '.',
                  HINT = 'Move the shard online (the copy then runs as the tables'' owners), or have a superuser own those functions.';
    END IF;
    PERFORM shardid._for_tables(schema_name, '{r}', 'TRUNCATE %I.%I');
    RETURN n;
END
$$;

REVOKE ALL ON FUNCTION shardid._move_offline_load(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_offline_load(name) IS
    'Node, offline moves on the target: locks the copy''s tables, refuses code of non-superusers that the replay would run, empties them.';
-- Node, source of a move: the publication of the shard's schema and the
-- logical replication slot its subscription reads, each made unless it
-- exists. The slot is made here rather than by CREATE SUBSCRIPTION so the
-- router can wait for it (a new slot waits for running transactions) and
-- cancel the wait. Returns what it made.
CREATE OR REPLACE FUNCTION shardid._move_publish(name name, schema_name name) RETURNS text
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    made text := '';
BEGIN
    IF NOT EXISTS (SELECT FROM pg_publication AS p WHERE p.pubname = _move_publish.name) THEN
        EXECUTE format('CREATE PUBLICATION %I FOR TABLES IN SCHEMA %I', name, schema_name);
        made := 'publication';
    END IF;
    RETURN made;
END
$$;

REVOKE ALL ON FUNCTION shardid._move_publish(name, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_publish(name, name) IS
    'Node, move on the source: creates the publication FOR TABLES IN SCHEMA unless it exists.';
-- Node, source of a move: the logical replication slot (pgoutput) the
-- move's subscription reads, made unless it exists. Made here rather than
-- by CREATE SUBSCRIPTION so the router waits for it asynchronously (a new
-- slot waits for the transactions running on this node) and can cancel.
CREATE OR REPLACE FUNCTION shardid._move_create_slot(slot_name name) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF EXISTS (SELECT FROM pg_replication_slots AS s WHERE s.slot_name = _move_create_slot.slot_name) THEN
        RETURN false;
    END IF;
    PERFORM pg_create_logical_replication_slot(slot_name, 'pgoutput');
    RETURN true;
END
$$;

REVOKE ALL ON FUNCTION shardid._move_create_slot(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_create_slot(name) IS
    'Node, move on the source: creates the move''s logical replication slot (pgoutput) unless it exists.';
-- Node, source of a move: the move's slot: whether it exists and is in
-- use, how many bytes of WAL the target has yet to confirm, and whether it
-- has confirmed lsn (the cut-over's position; NULL: not asked).
CREATE OR REPLACE FUNCTION shardid._move_slot_status(slot_name name, lsn pg_lsn DEFAULT NULL) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT jsonb_build_object('exists', s.slot_name IS NOT NULL,
                              'active', COALESCE(s.active, false),
                              'lag', pg_wal_lsn_diff(pg_current_wal_lsn(), s.confirmed_flush_lsn)::bigint,
                              'confirmed', s.confirmed_flush_lsn >= lsn)
      FROM (SELECT 1) AS one
      LEFT JOIN pg_replication_slots AS s ON s.slot_name = _move_slot_status.slot_name
$$;

REVOKE ALL ON FUNCTION shardid._move_slot_status(name, pg_lsn) FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_slot_status(name, pg_lsn) IS
    'Node, move on the source: the move''s slot: exists, active, lag in bytes, and whether it confirmed lsn.';
-- Node, source of a move, when it ends: drops the move's replication
-- slots and its publication. The slots are the subscription's own and the
-- table-sync slots its workers made (pg_<subid>_sync_<relid>_<sysid>, for
-- the target's subscription OID and system identifier; subid NULL: none
-- was made); a walsender still holding one is terminated (the target's
-- subscription is gone, or unreachable). Waits up to wait_ms for them.
-- Returns the slots it could not drop ('' when none).
CREATE OR REPLACE FUNCTION shardid._move_unpublish(name name, subid oid, sysid text, wait_ms integer) RETURNS text
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
    SET client_min_messages = warning
AS $$
DECLARE
    deadline timestamptz := clock_timestamp() + make_interval(secs => wait_ms / 1000.0);
    s        record;
    remaining text;
BEGIN
    LOOP
        remaining := NULL;
        FOR s IN SELECT r.slot_name, r.active_pid FROM pg_replication_slots AS r
                  WHERE r.datoid = (SELECT d.oid FROM pg_database AS d WHERE d.datname = current_database())
                    AND (r.slot_name = _move_unpublish.name
                         OR (subid IS NOT NULL AND sysid IS NOT NULL
                             AND r.slot_name::text ~ ('^pg_' || subid || '_sync_[0-9]+_' || sysid || '$')))
                  ORDER BY r.slot_name LOOP
            BEGIN
                IF s.active_pid IS NOT NULL THEN
                    PERFORM pg_terminate_backend(s.active_pid);
                    remaining := concat_ws(', ', remaining, s.slot_name);
                ELSE
                    PERFORM pg_drop_replication_slot(s.slot_name);
                END IF;
            EXCEPTION WHEN object_in_use OR undefined_object THEN
                remaining := concat_ws(', ', remaining, s.slot_name);
            END;
        END LOOP;
        EXIT WHEN remaining IS NULL OR clock_timestamp() > deadline;
        PERFORM pg_sleep(0.05);
    END LOOP;
    EXECUTE format('DROP PUBLICATION IF EXISTS %I', name);
    RETURN COALESCE(remaining, '');
END
$$;

REVOKE ALL ON FUNCTION shardid._move_unpublish(name, oid, text, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_unpublish(name, oid, text, integer) IS
    'Node, move on the source: drops the move''s slot, its subscription''s table-sync slots and its publication; returns the slots left.';
-- Node, target of a move: the subscription that copies the shard, made
-- unless it exists, reading the slot the source already has (_move_publish)
-- with copy_data, and disabled at its first error (disable_on_error), so a
-- failing copy shows at once instead of retrying forever.
--
-- Who the copy runs as. Logical replication fires the table's ENABLE ALWAYS
-- and ENABLE REPLICA triggers, and evaluates its CHECK constraints, index
-- expressions and generated columns, so code written by the shard's owner
-- runs during the copy. It must not run as a superuser:
--   16 and later: the apply and table-sync workers switch to each table's
--     owner (run_as_owner = false, the default, said here explicitly);
--   15: they run as the subscription's owner, so the subscription belongs
--     to a role made for this move (named like the subscription, with no
--     password, no superuser, no membership in any role; LOGIN, which the
--     workers' connection needs) that holds just SELECT,
--     INSERT, UPDATE, DELETE and TRUNCATE on the shard's tables and USAGE
--     on its schema. 15 lets only a superuser own a subscription, so the
--     role is a superuser while it is given the subscription, and no longer
--     when the transaction that enables the subscription commits.
-- Returns the subscription's OID and this node's system identifier (the
-- names of the table-sync slots on the source) and the role (15), or NULL.
CREATE OR REPLACE FUNCTION shardid._move_subscribe(name name, conninfo text, schema_name name) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
    SET client_min_messages = warning
AS $$
DECLARE
    own_role boolean := current_setting('server_version_num')::integer < 160000;
BEGIN
    IF NOT EXISTS (SELECT FROM pg_subscription AS s WHERE s.subname = _move_subscribe.name) THEN
        IF own_role THEN
            IF NOT EXISTS (SELECT FROM pg_roles AS r WHERE r.rolname = _move_subscribe.name) THEN
                EXECUTE format('CREATE ROLE %I LOGIN NOINHERIT SUPERUSER PASSWORD NULL', name);
            ELSE
                EXECUTE format('ALTER ROLE %I LOGIN NOINHERIT SUPERUSER PASSWORD NULL', name);
            END IF;
            EXECUTE format('GRANT USAGE ON SCHEMA %I TO %I', schema_name, name);
            EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON ALL TABLES IN SCHEMA %I TO %I', schema_name, name);
            EXECUTE format('CREATE SUBSCRIPTION %I CONNECTION %L PUBLICATION %I
                            WITH (create_slot = false, slot_name = %I, copy_data = true, enabled = false, disable_on_error = true)',
                           name, conninfo, name, name);
            EXECUTE format('ALTER SUBSCRIPTION %I OWNER TO %I', name, name);
            EXECUTE format('ALTER ROLE %I NOSUPERUSER', name);
            EXECUTE format('ALTER SUBSCRIPTION %I ENABLE', name);
        ELSE
            EXECUTE format('CREATE SUBSCRIPTION %I CONNECTION %L PUBLICATION %I
                            WITH (create_slot = false, slot_name = %I, copy_data = true, disable_on_error = true, run_as_owner = false)',
                           name, conninfo, name, name);
        END IF;
    END IF;
    RETURN (SELECT jsonb_build_object('subid', s.oid, 'sysid', (pg_control_system()).system_identifier::text,
                                      'role', CASE WHEN own_role THEN pg_get_userbyid(s.subowner) END)
              FROM pg_subscription AS s WHERE s.subname = _move_subscribe.name);
END
$$;

REVOKE ALL ON FUNCTION shardid._move_subscribe(name, text, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_subscribe(name, text, name) IS
    'Node, move on the target: the subscription copying the shard (never applying as a superuser: as the table owners on 16+, as a role of this move with DML rights only on 15); returns its OID and the node''s system identifier.';
-- Node, target of a move: the progress of the move's subscription alone:
-- its tables and how many are ready, the bytes of those tables here (what
-- has been copied so far, in the copy's own transaction too), whether it
-- is enabled (disable_on_error stops it at its first error) and its error
-- counts.
CREATE OR REPLACE FUNCTION shardid._move_copy_progress(name name) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT jsonb_build_object(
               'exists', s.oid IS NOT NULL,
               'enabled', s.subenabled,
               'tables_total', (SELECT count(*) FROM pg_subscription_rel AS r WHERE r.srsubid = s.oid),
               'tables_ready', (SELECT count(*) FROM pg_subscription_rel AS r WHERE r.srsubid = s.oid AND r.srsubstate = 'r'),
               -- main forks of the tables and their TOAST tables: what COPY writes
               'bytes', (SELECT COALESCE(sum(pg_relation_size(c.oid)
                                             + CASE WHEN c.reltoastrelid <> 0 THEN pg_relation_size(c.reltoastrelid) ELSE 0 END), 0)
                           FROM pg_subscription_rel AS r JOIN pg_class AS c ON c.oid = r.srrelid WHERE r.srsubid = s.oid),
               'errors', (SELECT x.apply_error_count + x.sync_error_count FROM pg_stat_subscription_stats AS x WHERE x.subid = s.oid))
      FROM (SELECT 1) AS one
      LEFT JOIN pg_subscription AS s ON s.subname = _move_copy_progress.name
                                     AND s.subdbid = (SELECT d.oid FROM pg_database AS d WHERE d.datname = current_database())
$$;

REVOKE ALL ON FUNCTION shardid._move_copy_progress(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_copy_progress(name) IS
    'Node, move on the target: tables ready and total, bytes copied, enabled and error count of the move''s subscription.';
-- Node, target of a move, when it ends: drops the move's subscription
-- without touching the source: disabled, detached from its slot, pointed
-- at a connection that fails at once (DROP SUBSCRIPTION would otherwise
-- connect to drop the table-sync slots, and wait for a source that is
-- down), dropped; all in one transaction. The router drops the slots on
-- the source. Then the role a move makes on 15, with its privileges. Returns the subscription's OID and this node's system
-- identifier (for the table-sync slots on the source), NULL if there was
-- none.
CREATE OR REPLACE FUNCTION shardid._move_unsubscribe(name name) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
    SET client_min_messages = warning
AS $$
DECLARE
    had jsonb;
BEGIN
    SELECT jsonb_build_object('subid', s.oid, 'sysid', (pg_control_system()).system_identifier::text) INTO had
      FROM pg_subscription AS s WHERE s.subname = _move_unsubscribe.name;
    IF had IS NOT NULL THEN
        EXECUTE format('ALTER SUBSCRIPTION %I DISABLE', name);
        EXECUTE format('ALTER SUBSCRIPTION %I SET (slot_name = NONE)', name);
        EXECUTE format('ALTER SUBSCRIPTION %I CONNECTION %L', name, 'service=shardid_move_dropped');
        EXECUTE format('DROP SUBSCRIPTION %I', name);
    END IF;
    IF EXISTS (SELECT FROM pg_roles AS r WHERE r.rolname = _move_unsubscribe.name) THEN
        EXECUTE format('DROP OWNED BY %I', name);
        EXECUTE format('DROP ROLE %I', name);
    END IF;
    RETURN had;
END
$$;

REVOKE ALL ON FUNCTION shardid._move_unsubscribe(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_unsubscribe(name) IS
    'Node, move on the target: disables, detaches and drops the move''s subscription, and drops the role a move makes on 15; returns the subscription''s OID and the node''s system identifier.';
-- Node, either end of a move: whether this node registers the shard under
-- schema_name, i.e. still holds the copy the move made or is retiring (a
-- copy is made and registered in one transaction); anything else is left
-- alone.
CREATE OR REPLACE FUNCTION shardid._move_registered(shard integer, schema_name name) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT EXISTS (SELECT FROM shardid.shard_registry AS r
                    WHERE r.shard = _move_registered.shard AND r.schema_name = _move_registered.schema_name)
$$;

REVOKE ALL ON FUNCTION shardid._move_registered(integer, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_registered(integer, name) IS
    'Node, moves: whether this node registers the shard under that schema (the move''s own copy, not yet removed).';
-- Node, target of a move that is rolled back: unregisters the shard and
-- drops its copy, if this node registers the shard under that schema (the
-- copy is made and registered in one transaction, so that is the move's
-- own; anything else is left alone). Returns whether it dropped one.
CREATE OR REPLACE FUNCTION shardid._move_drop_copy(shard integer, schema_name name) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
    SET client_min_messages = warning
AS $$
BEGIN
    IF NOT shardid._move_registered(shard, schema_name) THEN
        RETURN false;
    END IF;
    PERFORM shardid.detach_shard(shard);
    EXECUTE format('DROP SCHEMA IF EXISTS %I CASCADE', schema_name);
    RETURN true;
END
$$;

REVOKE ALL ON FUNCTION shardid._move_drop_copy(integer, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_drop_copy(integer, name) IS
    'Node, move on the target, rollback: unregisters the shard and drops its copy if registered under that schema.';
-- Node, source of a move, after the router points at the target: retires
-- the old copy (retire_shard: unregistered, then dropped or renamed to
-- new_name with triggers refusing writes), trying to lock its tables for
-- lock_timeout_ms. Returns the new name, 'dropped', or 'already retired'
-- when this node no longer registers the shard under schema_name.
CREATE OR REPLACE FUNCTION shardid._move_retire(shard integer, schema_name name, target text, new_name name, lock_timeout_ms integer)
    RETURNS text
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
    SET client_min_messages = warning
AS $$
BEGIN
    IF NOT shardid._move_registered(shard, schema_name) THEN
        RETURN 'already retired';
    END IF;
    PERFORM set_config('lock_timeout', lock_timeout_ms || 'ms', true);
    RETURN COALESCE(quote_ident(shardid.retire_shard(shard, target, new_name)), 'dropped');
END
$$;

REVOKE ALL ON FUNCTION shardid._move_retire(integer, name, text, name, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_retire(integer, name, text, name, integer) IS
    'Node, move on the source after the repoint: retires the old copy (dropped or renamed, refusing writes); returns its new name, dropped, or already retired.';
-- The moves in progress as a DBA watches them: phase, tables ready, bytes
-- of this move's tables on the target and on the source, lag of its slot
-- in bytes, how long it has run, the last error, and the backend moving it
-- (NULL when no session holds the move: interrupted, CALL it again or
-- abort_move()). Figures are those of the last poll (updated_at).
CREATE OR REPLACE VIEW shardid.move_progress AS
SELECT m.shard, m.source, m.target, m.schema_name, m.mode, m.phase,
       m.tables_ready, m.tables_total, m.bytes_copied, m.bytes_total, m.lag_bytes,
       pg_catalog.now() OPERATOR(pg_catalog.-) m.started_at AS elapsed,
       m.frozen_at, m.repointed_at, m.updated_at, m.last_error,
       (SELECT l.pid FROM pg_catalog.pg_locks AS l
         WHERE l.locktype OPERATOR(pg_catalog.=) 'advisory' AND l.granted
           AND l.database OPERATOR(pg_catalog.=) (SELECT d.oid FROM pg_catalog.pg_database AS d
                                                  WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database())
           AND l.classid OPERATOR(pg_catalog.=) pg_catalog.hashtext('shardid-move-shard')::oid
           AND l.objid OPERATOR(pg_catalog.=) m.shard::oid AND l.objsubid OPERATOR(pg_catalog.=) 2
         LIMIT 1) AS moved_by
  FROM shardid.shard_moves AS m;

GRANT SELECT ON shardid.move_progress TO PUBLIC;

COMMENT ON VIEW shardid.move_progress IS
    'Router: moves in progress: phase, tables ready/total, bytes copied/total, lag in bytes, elapsed time, last error, and the backend running the move (NULL: interrupted).';
-- Router: the schema of the dblink extension, which moves drive the nodes
-- with; 55000 with a hint when it is missing. dblink is not a requirement
-- of the extension (shardid.control): data nodes and routers that never
-- move a shard need not have it, and it installs functions that let their
-- callers open connections; so only the move procedures ask for it.
CREATE OR REPLACE FUNCTION shardid._dblink_schema() RETURNS name
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    s name;
BEGIN
    SELECT n.nspname INTO s FROM pg_extension AS e JOIN pg_namespace AS n ON n.oid = e.extnamespace
     WHERE e.extname = 'dblink';
    IF s IS NULL THEN
        RAISE EXCEPTION 'moving a shard needs the dblink extension on the router'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'The router drives the source and target nodes over dblink connections.',
                  HINT = 'CREATE EXTENSION dblink; in this database (contrib, shipped with PostgreSQL).';
    END IF;
    RETURN s;
END
$$;

REVOKE ALL ON FUNCTION shardid._dblink_schema() FROM PUBLIC;

COMMENT ON FUNCTION shardid._dblink_schema() IS
    'Router, moves: the schema of the dblink extension; 55000 with a hint when it is not installed.';
-- Router, moves: whether this session has the dblink connection conn open
-- (no round trip to its node; _node_alive asks the node too).
CREATE OR REPLACE FUNCTION shardid._node_open(conn text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    open boolean;
BEGIN
    EXECUTE format('SELECT $1 = ANY (COALESCE(%I.dblink_get_connections(), ''{}''))', shardid._dblink_schema())
        INTO open USING conn;
    RETURN open;
END
$$;

REVOKE ALL ON FUNCTION shardid._node_open(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid._node_open(text) IS
    'Router, moves: whether this session has a named dblink connection open (no round trip).';
-- Router, moves: closes the dblink connection conn if it is open, first
-- cancelling a statement it runs (a remote statement would otherwise run
-- on, holding its locks, until it next talks to the router). Never fails.
CREATE OR REPLACE FUNCTION shardid._node_close(conn text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    dbl name := shardid._dblink_schema();
BEGIN
    IF NOT shardid._node_open(conn) THEN
        RETURN;
    END IF;
    BEGIN
        EXECUTE format('SELECT %I.dblink_cancel_query($1) FROM (SELECT) AS x WHERE %I.dblink_is_busy($1) = 1', dbl, dbl)
            USING conn;
    EXCEPTION WHEN OTHERS THEN
        NULL;
    END;
    EXECUTE format('SELECT %I.dblink_disconnect($1)', dbl) USING conn;
END
$$;

REVOKE ALL ON FUNCTION shardid._node_close(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid._node_close(text) IS
    'Router, moves: cancels what a named dblink connection runs and closes it, if it is open.';
-- Router, moves: opens the dblink connection conn to a node (its connect
-- string from shardid.nodes; passwords come from the router's server
-- user's ~/.pgpass), closing an earlier one of that name. A node that
-- cannot be reached fails with 08001 naming the node.
CREATE OR REPLACE FUNCTION shardid._node_connect(conn text, node text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    dbl name := shardid._dblink_schema();
    cs  text;
    msg text;
    det text;
BEGIN
    SELECT n.connstr INTO cs FROM shardid.nodes AS n WHERE n.node = _node_connect.node;
    IF cs IS NULL THEN
        RAISE EXCEPTION 'node "%" does not exist', node USING ERRCODE = 'undefined_object';
    END IF;
    PERFORM shardid._node_close(conn);
    BEGIN
        -- the node's own settings come last and win
        EXECUTE format('SELECT %I.dblink_connect($1, $2)', dbl)
            USING conn, 'connect_timeout=10 application_name=shardid_move ' || cs;
    EXCEPTION WHEN sqlclient_unable_to_establish_sqlconnection OR connection_exception THEN
        GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
        RAISE EXCEPTION 'node "%" is unreachable: %', node, COALESCE(NULLIF(rtrim(det, E'\n'), ''), msg)
            USING ERRCODE = 'sqlclient_unable_to_establish_sqlconnection';
    END;
END
$$;

REVOKE ALL ON FUNCTION shardid._node_connect(text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid._node_connect(text, text) IS
    'Router, moves: opens a named dblink connection to a node; 08001 naming the node when it cannot be reached.';
-- Router, moves: the dblink connection conn to node, opened unless it is.
CREATE OR REPLACE FUNCTION shardid._node_ensure(conn text, node text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT shardid._node_open(conn) THEN
        PERFORM shardid._node_connect(conn, node);
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid._node_ensure(text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid._node_ensure(text, text) IS
    'Router, moves: opens a named dblink connection to a node unless it is open.';
-- Router, moves: sends one statement on the dblink connection conn without
-- waiting (_node_wait() collects its single value), so the router can
-- drive two nodes at once and a cancel of the router's backend interrupts
-- the wait (15's dblink() cannot be interrupted while it waits).
CREATE OR REPLACE FUNCTION shardid._node_send(conn text, sql text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    dbl  name := shardid._dblink_schema();
    sent integer;
    msg  text;
BEGIN
    EXECUTE format('SELECT %I.dblink_send_query($1, $2)', dbl) INTO sent USING conn, sql;
    IF sent IS DISTINCT FROM 1 THEN
        EXECUTE format('SELECT %I.dblink_error_message($1)', dbl) INTO msg USING conn;
        RAISE EXCEPTION 'could not send a statement on connection %: %', conn, rtrim(msg, E'\n')
            USING ERRCODE = 'connection_failure';
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid._node_send(text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid._node_send(text, text) IS
    'Router, moves: sends a statement on a named dblink connection without waiting for it.';
-- Router, moves: waits (interruptibly, 1 ms at a time) for the statement
-- sent on conn and returns the first column of its first row as text; the
-- node's error is raised with its SQLSTATE, detail and hint, the message
-- prefixed with node "NAME": when node is given; a lost connection as 08006.
CREATE OR REPLACE FUNCTION shardid._node_wait(conn text, node text DEFAULT NULL) RETURNS text
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    dbl  name := shardid._dblink_schema();
    busy integer;
    r    text;
    st   text;
    msg  text;
    det  text;
    hnt  text;
BEGIN
    LOOP
        EXECUTE format('SELECT %I.dblink_is_busy($1)', dbl) INTO busy USING conn;
        EXIT WHEN busy = 0;
        PERFORM pg_sleep(0.001);
    END LOOP;
    BEGIN
        EXECUTE format('SELECT t.x FROM %I.dblink_get_result($1) AS t(x text) LIMIT 1', dbl) INTO r USING conn;
    EXCEPTION WHEN OTHERS THEN
        -- read what is left of it, so the connection can be used again
        GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
        BEGIN
            EXECUTE format('SELECT count(*) FROM %I.dblink_get_result($1, false) AS t(x text)', dbl) USING conn;
        EXCEPTION WHEN OTHERS THEN
            NULL;
        END;
        IF node IS NULL THEN
            RAISE;
        END IF;
        PERFORM shardid._raise(st, format('node "%s": %s', node, msg), det, hnt);
    END;
    -- the end of the results
    EXECUTE format('SELECT count(*) FROM %I.dblink_get_result($1) AS t(x text)', dbl) USING conn;
    RETURN r;
END
$$;

REVOKE ALL ON FUNCTION shardid._node_wait(text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid._node_wait(text, text) IS
    'Router, moves: waits interruptibly for the statement sent on a named dblink connection; returns its first value as text.';
-- Router, moves: runs one statement on the dblink connection conn and
-- returns its first value as text (_node_send, then _node_wait; node names
-- the node in its errors).
CREATE OR REPLACE FUNCTION shardid._node(conn text, sql text, node text DEFAULT NULL) RETURNS text
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM shardid._node_send(conn, sql);
    RETURN shardid._node_wait(conn, node);
END
$$;

REVOKE ALL ON FUNCTION shardid._node(text, text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid._node(text, text, text) IS
    'Router, moves: runs a statement on a named dblink connection and returns its first value as text.';
-- Router, moves: whether the dblink connection conn is open and answers.
CREATE OR REPLACE FUNCTION shardid._node_alive(conn text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT shardid._node_open(conn) THEN
        RETURN false;
    END IF;
    PERFORM shardid._node(conn, 'SELECT 1');
    RETURN true;
EXCEPTION WHEN OTHERS THEN
    RETURN false;
END
$$;

REVOKE ALL ON FUNCTION shardid._node_alive(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid._node_alive(text) IS
    'Router, moves: whether a named dblink connection is open and answers.';
-- Router, moves: whether an error's SQLSTATE says the node could not be
-- talked to (connection errors, a node shutting down or starting up)
-- rather than that it refused something.
CREATE OR REPLACE FUNCTION shardid._node_unreachable(sqlstate text) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT sqlstate LIKE '08%' OR sqlstate IN ('57P01', '57P02', '57P03')
$$;

REVOKE ALL ON FUNCTION shardid._node_unreachable(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid._node_unreachable(text) IS
    'Router, moves: true for SQLSTATEs of a node that cannot be reached (class 08, 57P01-57P03).';
-- Router, moves: the differences between two definitions made by
-- _shard_definition() (a on a_name, b on b_name), one sentence each, in
-- order; empty when they are equal.
CREATE OR REPLACE FUNCTION shardid._definition_diff(a jsonb, b jsonb, a_name text, b_name text) RETURNS text[]
    LANGUAGE sql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT COALESCE(array_agg(d.line ORDER BY d.k COLLATE "C"), '{}')
      FROM (SELECT COALESCE(x.key, y.key) AS k,
                   CASE WHEN y.key IS NULL THEN format('%s: %s on %s only', x.key, x.value, a_name)
                        WHEN x.key IS NULL THEN format('%s: %s on %s only', y.key, y.value, b_name)
                        ELSE format('%s: %s on %s, %s on %s', x.key, x.value, a_name, y.value, b_name) END AS line
              FROM jsonb_each_text(a) AS x
              FULL JOIN jsonb_each_text(b) AS y ON y.key = x.key
             WHERE x.value IS DISTINCT FROM y.value) AS d
$$;

REVOKE ALL ON FUNCTION shardid._definition_diff(jsonb, jsonb, text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid._definition_diff(jsonb, jsonb, text, text) IS
    'Router, moves: the differences between two shard definitions (_shard_definition()), one sentence each.';
-- Router, moves: the name of a move's publication, replication slot and
-- subscription (and, on 15, of the role its subscription runs as):
-- shardid_move_<shard>_<move_id>, unique per move (move_id is the start
-- in ms), plain ASCII as slot names must be, within 63 bytes.
CREATE OR REPLACE FUNCTION shardid._move_name(shard integer, move_id bigint) RETURNS name
    LANGUAGE sql IMMUTABLE STRICT
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT shardid._fit_name('shardid_move_' || shard, '_' || move_id)
$$;

REVOKE ALL ON FUNCTION shardid._move_name(integer, bigint) FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_name(integer, bigint) IS
    'Router, moves: shardid_move_<shard>_<move_id>, the name of a move''s publication, slot and subscription.';
-- Router, moves: a pause point for tests. When the session running a move
-- sets shardid_test.move_pause to the phase it reaches, it waits there
-- while another session holds the advisory lock
-- (hashtext('shardid_test.move_pause'), shard), so a test can cancel or
-- terminate it in that phase. Without the setting it does nothing.
CREATE OR REPLACE FUNCTION shardid._move_pause(shard integer, phase text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF current_setting('shardid_test.move_pause', true) IS NOT DISTINCT FROM phase THEN
        PERFORM pg_advisory_lock_shared(hashtext('shardid_test.move_pause'), shard);
        PERFORM pg_advisory_unlock_shared(hashtext('shardid_test.move_pause'), shard);
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid._move_pause(integer, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_pause(integer, text) IS
    'Router, moves: test hook; waits in a phase named by shardid_test.move_pause while another session holds its advisory lock.';
-- Router, moves: a cancel request reaches a backend twice (the postmaster
-- signals the backend and its process group), so a procedure that catches
-- the first to roll a move back would see its rollback cancelled by the
-- second. This waits a moment and swallows a cancel that arrives meanwhile.
CREATE OR REPLACE FUNCTION shardid._absorb_cancel() RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM pg_sleep(0.05);
EXCEPTION WHEN query_canceled THEN
    NULL;
END
$$;

REVOKE ALL ON FUNCTION shardid._absorb_cancel() FROM PUBLIC;

COMMENT ON FUNCTION shardid._absorb_cancel() IS
    'Router, moves: swallows the second signal of a cancel request (sent to the backend and to its process group) before a rollback.';
-- Router, moves: closes the move's node connections, cancelling what they
-- run (which also ends the source's freeze lease). Never fails.
CREATE OR REPLACE FUNCTION shardid._move_disconnect() RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM shardid._node_close('shardid_move_source');
    PERFORM shardid._node_close('shardid_move_target');
    PERFORM shardid._node_close('shardid_move_check');
EXCEPTION WHEN OTHERS THEN
    NULL;
END
$$;

REVOKE ALL ON FUNCTION shardid._move_disconnect() FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_disconnect() IS
    'Router, moves: cancels and closes the move''s dblink connections.';
-- Router, moves: one session at a time works on a shard's move. Takes the
-- session-level advisory lock (hashtext('shardid-move-shard'), shard),
-- which PostgreSQL releases if the session ends, however it ends; 55006
-- naming the backend that holds it otherwise. Also refuses what a move
-- cannot run in: a transaction block (a move commits once per phase), a
-- NULL shard, a router without dblink.
CREATE OR REPLACE FUNCTION shardid._move_lock(shard integer, what text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    holder integer;
BEGIN
    IF shard IS NULL THEN
        RAISE EXCEPTION 'shard must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    -- a transaction that began before this statement: BEGIN; CALL ...
    IF transaction_timestamp() < statement_timestamp() THEN
        RAISE EXCEPTION '% cannot run inside a transaction block', what
            USING ERRCODE = 'active_sql_transaction',
                  DETAIL = 'It commits once per phase, so that an interruption resumes or rolls back from there.',
                  HINT = 'CALL it on its own (autocommit).';
    END IF;
    PERFORM shardid._dblink_schema();
    IF NOT pg_try_advisory_lock(hashtext('shardid-move-shard'), shard) THEN
        SELECT l.pid INTO holder FROM pg_locks AS l
         WHERE l.locktype = 'advisory' AND l.granted
           AND l.database = (SELECT d.oid FROM pg_database AS d WHERE d.datname = current_database())
           AND l.classid = hashtext('shardid-move-shard')::oid AND l.objid = shard::oid AND l.objsubid = 2;
        RAISE EXCEPTION 'shard % is being moved by another session (backend %)', shard, holder
            USING ERRCODE = 'object_in_use',
                  HINT = format('Wait for it, or stop it: SELECT pg_cancel_backend(%s); rolls the move back, pg_terminate_backend(%s) leaves it to be resumed or aborted.', holder, holder);
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid._move_lock(integer, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_lock(integer, text) IS
    'Router, moves: takes the session advisory lock of a shard''s move (55006 naming its holder), refusing a transaction block.';
-- Router, moves: the end of a session's work on a shard's move: closes
-- its node connections and releases the shard's advisory lock (as often
-- as this session holds it). Never fails.
CREATE OR REPLACE FUNCTION shardid._move_unlock(shard integer) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM shardid._move_disconnect();
    FOR i IN 1 .. 1000 LOOP
        EXIT WHEN NOT EXISTS (SELECT FROM pg_locks AS l
                               WHERE l.locktype = 'advisory' AND l.granted AND l.pid = pg_backend_pid()
                                 AND l.classid = hashtext('shardid-move-shard')::oid
                                 AND l.objid = shard::oid AND l.objsubid = 2);
        PERFORM pg_advisory_unlock(hashtext('shardid-move-shard'), shard);
    END LOOP;
END
$$;

REVOKE ALL ON FUNCTION shardid._move_unlock(integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_unlock(integer) IS
    'Router, moves: closes the move''s node connections and releases the shard''s advisory lock held by this session.';
-- Router, moves: runs on the source a statement that locks the shard's
-- tables for 300 ms at most (its lock_timeout), again and again while it
-- fails with 55P03, for lock_timeout in all, so writers never queue behind
-- it for long. Returns its value as jsonb.
CREATE OR REPLACE FUNCTION shardid._move_lock_tables(shard integer, sql text, lock_timeout interval) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    m        shardid.shard_moves;
    deadline timestamptz := clock_timestamp() + lock_timeout;
    r        jsonb;
BEGIN
    SELECT * INTO STRICT m FROM shardid.shard_moves AS x WHERE x.shard = _move_lock_tables.shard;
    LOOP
        BEGIN
            r := shardid._node('shardid_move_source', sql, m.source)::jsonb;
            RETURN r;
        EXCEPTION WHEN lock_not_available THEN
            IF clock_timestamp() > deadline THEN
                RAISE EXCEPTION 'could not lock the tables of shard % on node "%": writers held them for %', shard, m.source, lock_timeout
                    USING ERRCODE = 'lock_not_available',
                          HINT = 'Retry when writes are fewer, or with a longer lock_timeout.';
            END IF;
        END;
        PERFORM pg_sleep(0.05);
    END LOOP;
END
$$;

REVOKE ALL ON FUNCTION shardid._move_lock_tables(integer, text, interval) FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_lock_tables(integer, text, interval) IS
    'Router, moves: runs a statement that locks the shard''s tables on the source, retrying lock timeouts for lock_timeout in all.';
-- Router, first step of move_shard(): a move of this shard in progress is
-- resumed (its row, after checking it goes to the same node), or a new one
-- is checked before anything changes and recorded in phase 'schema'. The
-- checks: the shard is placed, not frozen on the router, and not already
-- on to_node, which exists; every node answers with shardid 0.2 and the
-- router's layout; the source registers the shard in a schema that holds
-- its generator; the target neither registers the shard nor has the
-- schema, and has every role the shard's owners and privileges name; the
-- copy the target would make from its templates is the source's shard
-- (the trial copy is undone), else "diverged" names every difference; an
-- online move needs wal_level = logical, a free replication slot and a
-- replica identity on every table of the shard. Leaves the connections
-- shardid_move_source and shardid_move_target open.
CREATE OR REPLACE FUNCTION shardid._move_prepare(shard integer, to_node text, offline boolean)
    RETURNS shardid.shard_moves
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    m       shardid.shard_moves;
    p       shardid.shard_placement;
    nd      record;
    facts   jsonb;
    src     jsonb;
    trial   jsonb;
    layout  text;
    mine    text;
BEGIN
    IF to_node IS NULL THEN
        RAISE EXCEPTION 'to_node must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    SELECT * INTO m FROM shardid.shard_moves AS x WHERE x.shard = _move_prepare.shard;
    IF FOUND THEN
        IF m.phase <> 'aborting' AND m.target <> to_node THEN
            RAISE EXCEPTION 'shard % is being moved to node "%" (phase %)', shard, m.target, m.phase
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = format('CALL shardid.move_shard(%s, %L); resumes it, CALL shardid.abort_move(%s); rolls it back.',
                                    shard, m.target, shard);
        END IF;
        IF m.phase <> 'aborting' THEN
            RAISE NOTICE 'resuming the % move of shard % from "%" to "%" (phase %)', m.mode, shard, m.source, m.target, m.phase;
        END IF;
        RETURN m;
    END IF;

    SELECT * INTO p FROM shardid.shard_placement AS x WHERE x.shard = _move_prepare.shard;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'shard % is not placed on any node', shard
            USING ERRCODE = 'undefined_object',
                  HINT = 'See shardid.placement; place it with shardid.place_shards().';
    END IF;
    IF NOT EXISTS (SELECT FROM shardid.nodes AS n WHERE n.node = to_node) THEN
        RAISE EXCEPTION 'node "%" does not exist', to_node
            USING ERRCODE = 'undefined_object',
                  HINT = 'Add it with shardid.add_node().';
    END IF;
    IF p.node = to_node THEN
        RAISE EXCEPTION 'shard % is already on node "%": nothing to move', shard, to_node
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p.frozen THEN
        RAISE EXCEPTION 'shard % is frozen on the router (shardid.freeze_shard)', shard
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = format('SELECT shardid.unfreeze_shard(%s); first.', shard);
    END IF;

    -- One layout for the whole system: every node, not only these two.
    SELECT to_char(l.epoch AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS"+00"') || ', ' || l.shard_bits || ' shard bits, '
           || l.seq_bits || ' seq bits' INTO mine FROM shardid.layout() AS l;
    FOR nd IN SELECT n.node FROM shardid.nodes AS n ORDER BY n.node LOOP
        PERFORM shardid._node_connect('shardid_move_check', nd.node);
        facts := shardid._node('shardid_move_check',
            $q$SELECT jsonb_build_object('version', (SELECT e.extversion FROM pg_catalog.pg_extension AS e WHERE e.extname = 'shardid'),
                                         'moves', pg_catalog.to_regprocedure('shardid._move_source_facts(integer)') IS NOT NULL)$q$,
            nd.node)::jsonb;
        IF facts->>'version' IS NULL THEN
            PERFORM shardid._node_close('shardid_move_check');
            RAISE EXCEPTION 'node "%" has no shardid extension', nd.node
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'CREATE EXTENSION shardid; there, with the router''s layout.';
        END IF;
        IF NOT (facts->>'moves')::boolean THEN
            PERFORM shardid._node_close('shardid_move_check');
            RAISE EXCEPTION 'node "%" has shardid %, which cannot take part in a move', nd.node, facts->>'version'
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'ALTER EXTENSION shardid UPDATE; there.';
        END IF;
        layout := shardid._node('shardid_move_check',
            $q$SELECT pg_catalog.to_char(l.epoch AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS"+00"') || ', ' || l.shard_bits
                      || ' shard bits, ' || l.seq_bits || ' seq bits' FROM shardid.layout() AS l$q$, nd.node);
        PERFORM shardid._node_close('shardid_move_check');
        IF layout IS DISTINCT FROM mine THEN
            RAISE EXCEPTION 'node "%" uses another layout than the router: %; the router: %', nd.node, layout, mine
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = 'Every server of one system must use one layout (epoch, shard bits, seq bits).';
        END IF;
    END LOOP;

    PERFORM shardid._node_connect('shardid_move_source', p.node);
    PERFORM shardid._node_connect('shardid_move_target', to_node);
    src := shardid._node('shardid_move_source', format('SELECT shardid._move_source_facts(%s)', shard), p.node)::jsonb;
    IF NOT (src->>'registered')::boolean THEN
        RAISE EXCEPTION 'shard % is not registered on node "%", where the router places it', shard, p.node
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Compare shardid.placement on the router with shardid.shards on the nodes.';
    END IF;
    IF NOT (src->>'schema_exists')::boolean THEN
        RAISE EXCEPTION 'the schema % of shard % does not exist on node "%"', quote_ident(src->>'schema_name'), shard, p.node
            USING ERRCODE = 'invalid_schema_name';
    END IF;
    IF src->'sequence' IS NULL OR jsonb_typeof(src->'sequence') = 'null' THEN
        RAISE EXCEPTION 'the generator of shard % on node "%" (%.%) is not a sequence of its schema %', shard, p.node,
                quote_ident(src->>'sequence_schema'), quote_ident(src->>'sequence_name'), quote_ident(src->>'schema_name')
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'A move copies one schema; a shard adopted with a generator elsewhere cannot be moved.';
    END IF;
    trial := shardid._node('shardid_move_target', format('SELECT shardid._create_shard_copy(%s, %L, true)', shard, src), to_node)::jsonb;
    PERFORM shardid._move_compare(src->'definition', trial, format('node "%s"', p.node), format('node "%s" (its templates)', to_node),
                                  format('shard %s on node "%s" has diverged from its templates', shard, p.node),
                                  format('A move makes the shard on node "%s" from that node''s templates (shardid.sharded_tables) and copies the rows; make the shard and the templates agree first (ALTER the shard''s tables, or the templates).', to_node));
    IF offline AND src->>'untrusted_code' IS NOT NULL THEN
        RAISE EXCEPTION 'shard % cannot move offline: writing its rows would run code of roles that are not superusers', shard
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'An offline move replays the rows as a superuser. Functions: ' || (src->>'untrusted_code') || '.',
                  HINT = 'Move it online (the copy then runs as the tables'' owners), or have a superuser own those functions.';
    END IF;
    IF NOT offline THEN
        IF src->>'wal_level' <> 'logical' THEN
            RAISE EXCEPTION 'node "%" has wal_level = %: an online move needs wal_level = logical there', p.node, src->>'wal_level'
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'Set wal_level = logical on that node (a restart), or move the shard offline (offline => true, bin/shardid-move-shard --offline).';
        END IF;
        IF src->>'no_identity' IS NOT NULL THEN
            RAISE EXCEPTION 'tables of shard % have no replica identity (a primary key, or REPLICA IDENTITY FULL or USING INDEX): %', shard, src->>'no_identity'
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'ALTER TABLE ... REPLICA IDENTITY FULL (or add a primary key), or move the shard offline.';
        END IF;
        IF NOT (src->>'free_slot')::boolean THEN
            RAISE EXCEPTION 'node "%" has no free replication slot', p.node
                USING ERRCODE = 'configuration_limit_exceeded',
                      HINT = 'Raise max_replication_slots there (a restart), or drop an unused slot.';
        END IF;
    END IF;
    INSERT INTO shardid.shard_moves (shard, source, target, schema_name, mode, phase, bytes_total)
        VALUES (shard, p.node, to_node, src->>'schema_name', CASE WHEN offline THEN 'offline' ELSE 'online' END, 'schema',
                (src->>'bytes')::bigint)
        RETURNING * INTO m;
    RAISE NOTICE 'moving shard % (%) from "%" to "%" (%)', shard, quote_ident(m.schema_name), m.source, m.target, m.mode;
    RETURN m;
END
$$;

REVOKE ALL ON FUNCTION shardid._move_prepare(integer, text, boolean) FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_prepare(integer, text, boolean) IS
    'Router, moves: resumes the shard''s move in progress, or checks a new one (placement, nodes, layouts, registries, templates, online prerequisites) and records it.';
-- Router, phase 'schema' of a move: the target makes the shard from its
-- templates with the source's owners and privileges, and registers it
-- (_create_shard_copy, one transaction there); the copy must be the
-- source's shard (else the move fails and rolls back). Then phase 'copy'
-- (online) or 'frozen' (offline).
CREATE OR REPLACE FUNCTION shardid._move_schema(shard integer) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    m    shardid.shard_moves;
    src  jsonb;
    made jsonb;
BEGIN
    SELECT * INTO STRICT m FROM shardid.shard_moves AS x WHERE x.shard = _move_schema.shard;
    PERFORM shardid._node_ensure('shardid_move_source', m.source);
    PERFORM shardid._node_ensure('shardid_move_target', m.target);
    src := shardid._node('shardid_move_source', format('SELECT shardid._move_source_facts(%s)', shard), m.source)::jsonb;
    IF src->>'schema_name' IS DISTINCT FROM m.schema_name THEN
        RAISE EXCEPTION 'shard % is no longer registered on node "%" in schema %', shard, m.source, quote_ident(m.schema_name)
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    made := shardid._node('shardid_move_target', format('SELECT shardid._create_shard_copy(%s, %L, false)', shard, src), m.target)::jsonb;
    PERFORM shardid._move_compare(src->'definition', made, format('node "%s"', m.source), format('node "%s"', m.target),
                                  format('shard %s on node "%s" has diverged from its templates', shard, m.source));
    UPDATE shardid.shard_moves AS x
       SET phase = CASE WHEN m.mode = 'offline' THEN 'frozen' ELSE 'copy' END, bytes_total = (src->>'bytes')::bigint,
           updated_at = clock_timestamp()
     WHERE x.shard = _move_schema.shard;
END
$$;

REVOKE ALL ON FUNCTION shardid._move_schema(integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_schema(integer) IS
    'Router, move phase schema: the target makes and registers the shard from its templates with the source''s owners and privileges; the definitions must agree.';
-- Router, moves: raises 55000 when two definitions of a shard differ
-- (_definition_diff, each side named by its label): the message, then the
-- first three differences (and how many more), every one in the detail.
CREATE OR REPLACE FUNCTION shardid._move_compare(ds jsonb, dt jsonb, source_label text, target_label text,
                                                 message text, hint text DEFAULT NULL)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    diff text[] := shardid._definition_diff(ds, dt, source_label, target_label);
BEGIN
    IF cardinality(diff) > 0 THEN
        PERFORM shardid._raise('55000',
            message || ': ' || array_to_string(diff[1:3], '; ')
                    || CASE WHEN cardinality(diff) > 3 THEN format('; and %s more', cardinality(diff) - 3) ELSE '' END,
            array_to_string(diff, E'\n'), hint);
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid._move_compare(jsonb, jsonb, text, text, text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_compare(jsonb, jsonb, text, text, text, text) IS
    'Router, moves: raises 55000 with the message and every difference when two definitions of a shard differ.';
-- Router, phase 'copy' of a move, one poll (the procedure commits after
-- each, so move_progress shows it): first the source's publication and
-- slot and the target's subscription (its OID committed at once, it names
-- the table-sync slots), then each poll records the subscription's
-- progress and the slot's lag, fails the move at the subscription's first
-- error, and every 2 s compares the definitions on both nodes (DDL is not
-- replicated). A node that cannot be reached is retried for node_timeout
-- (a restarting target reconnects on its own), then the move fails naming
-- it. When every table is ready and the lag is under 1 MB: phase
-- 'frozen'. state carries what one poll tells the next.
CREATE OR REPLACE FUNCTION shardid._move_copy(shard integer, catchup_timeout interval, node_timeout interval, state jsonb)
    RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    m     shardid.shard_moves;
    nm    name;
    now_t timestamptz := clock_timestamp();
    prog  jsonb;
    slot  jsonb;
    sub   jsonb;
    ds    jsonb;
    dt    jsonb;
    who   text;
    node  text;
    conn  text;
    st    text;
    msg   text;
    det   text;
    hnt   text;
    since timestamptz;
BEGIN
    SELECT * INTO STRICT m FROM shardid.shard_moves AS x WHERE x.shard = _move_copy.shard;
    nm := shardid._move_name(m.shard, m.move_id);
    IF state ? 'polled' THEN
        PERFORM pg_sleep(0.2);
        now_t := clock_timestamp();
    END IF;
    state := state || jsonb_build_object('polled', true);
    BEGIN
        who := 'source'; node := m.source; conn := 'shardid_move_source';
        PERFORM shardid._node_ensure(conn, node);
        IF m.subscription IS NULL THEN
            PERFORM shardid._node(conn, format('SELECT shardid._move_publish(%L, %L)', nm, m.schema_name), node);
            PERFORM shardid._node(conn, format('SELECT shardid._move_create_slot(%L)', nm), node);
            PERFORM shardid._move_pause(shard, 'subscribe');
            who := 'target'; node := m.target; conn := 'shardid_move_target';
            PERFORM shardid._node_ensure(conn, node);
            sub := shardid._node(conn, format('SELECT shardid._move_subscribe(%L, %L, %L)', nm,
                                              (SELECT n.connstr FROM shardid.nodes AS n WHERE n.node = m.source),
                                              m.schema_name), node)::jsonb;
            UPDATE shardid.shard_moves AS x
               SET subscription = (sub->>'subid')::oid, target_sysid = sub->>'sysid', updated_at = now_t
             WHERE x.shard = _move_copy.shard;
            RETURN state - 'unreachable_since';
        END IF;
        IF NOT state ? 'paused' THEN
            PERFORM shardid._move_pause(shard, 'copy');
            state := state || jsonb_build_object('paused', true);
        END IF;
        slot := shardid._node(conn, format('SELECT shardid._move_slot_status(%L)', nm), node)::jsonb;
        who := 'target'; node := m.target; conn := 'shardid_move_target';
        PERFORM shardid._node_ensure(conn, node);
        prog := shardid._node(conn, format('SELECT shardid._move_copy_progress(%L)', nm), node)::jsonb;
        IF NOT state ? 'compared' OR now_t - (state->>'compared')::timestamptz > '2 s'::interval THEN
            dt := shardid._node(conn, format('SELECT shardid._shard_definition(%L, %L)', m.schema_name, nm), node)::jsonb;
            who := 'source'; node := m.source; conn := 'shardid_move_source';
            ds := shardid._node(conn, format('SELECT shardid._shard_definition(%L)', m.schema_name), node)::jsonb;
            PERFORM shardid._move_compare(ds, dt, format('node "%s"', m.source), format('node "%s"', m.target),
                                          format('the tables of shard %s changed on node "%s" during the copy', shard, m.source),
                                          'Logical replication does not carry DDL: make the change after the move (or on both nodes).');
            state := state || jsonb_build_object('compared', now_t);
        END IF;
    EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
        -- the node's own error (a subscription that cannot reach the
        -- source fails with 08006 too) when the connection still works
        IF NOT shardid._node_unreachable(st) OR shardid._node_alive(conn) THEN
            PERFORM shardid._raise(st, msg, det, hnt);
        END IF;
        PERFORM shardid._node_close(conn);
        since := COALESCE((state->>'unreachable_since')::timestamptz, now_t);
        UPDATE shardid.shard_moves AS x
           SET last_error = format('node "%s" (the %s) unreachable since %s: %s', node, who, since, msg), updated_at = now_t
         WHERE x.shard = _move_copy.shard;
        IF now_t - since > node_timeout THEN
            RAISE EXCEPTION 'node "%" (the % of the move) has been unreachable for % during the copy: %',
                    node, who, date_trunc('second', now_t - since), regexp_replace(msg, '^node "[^"]*": ', '')
                USING ERRCODE = st;
        END IF;
        RETURN state || jsonb_build_object('unreachable_since', since);
    END;
    state := state - 'unreachable_since';

    IF NOT (slot->>'exists')::boolean THEN
        RAISE EXCEPTION 'the replication slot % of the move is gone from node "%"', nm, m.source
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    IF NOT (prog->>'exists')::boolean THEN
        RAISE EXCEPTION 'the subscription % of the move is gone from node "%"', nm, m.target
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    IF NOT (prog->>'enabled')::boolean OR COALESCE((prog->>'errors')::bigint, 0) > 0 THEN
        RAISE EXCEPTION 'replicating shard % to node "%" failed: its subscription % stopped at an error', shard, m.target, nm
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('%s error(s) reported by the subscription''s workers; the server log of node "%s" says which.',
                                  COALESCE(prog->>'errors', '?'), m.target);
    END IF;
    UPDATE shardid.shard_moves AS x
       SET tables_ready = (prog->>'tables_ready')::integer, tables_total = (prog->>'tables_total')::integer,
           bytes_copied = (prog->>'bytes')::bigint, lag_bytes = (slot->>'lag')::bigint,
           last_error = NULL, updated_at = now_t,
           phase = CASE WHEN (prog->>'tables_ready')::integer = (prog->>'tables_total')::integer
                             AND (slot->>'lag')::bigint < 1048576 THEN 'frozen' ELSE x.phase END
     WHERE x.shard = _move_copy.shard;
    IF now_t - m.started_at > catchup_timeout THEN
        RAISE EXCEPTION 'the copy of shard % to node "%" did not catch up within %', shard, m.target, catchup_timeout
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('Tables ready: %s of %s; lag: %s bytes.', prog->>'tables_ready', prog->>'tables_total', slot->>'lag');
    END IF;
    RETURN state;
END
$$;

REVOKE ALL ON FUNCTION shardid._move_copy(integer, interval, interval, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_copy(integer, interval, interval, jsonb) IS
    'Router, move phase copy, one poll: starts replication, records progress and lag, fails at a replication error, a change of definitions, or an unreachable node (after node_timeout); turns frozen when caught up.';
-- Router, phase 'frozen' of a move: the cut-over, in one transaction here
-- (phase 'caught_up' commits at its end).
--   online:  the source freezes the shard under a lease (writes fail with
--            25006; the lease lapses if this session's connection to the
--            source ends, before anything is routed elsewhere) and reports
--            its WAL position and generator states; the target raises its
--            generators while the router waits for its subscription to
--            confirm that position (cutover_timeout); then, at once, the
--            source makes the freeze permanent and both report their
--            definitions, which must agree.
--   offline: the source freezes the shard for good; the data is copied by
--            the caller (bin/shardid-move-shard --offline: pg_dump
--            --data-only --disable-triggers), which CALLs again: until the
--            row counts agree this returns waiting = true; then the target
--            raises its generators and the definitions are compared.
-- The freeze tries to lock the shard's tables for 300 ms at a time, for
-- lock_timeout in all, so writers queue behind it for 300 ms at most.
-- Returns the milliseconds each step ended at, from the freeze.
CREATE OR REPLACE FUNCTION shardid._move_cutover(shard integer, lock_timeout interval, cutover_timeout interval)
    RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    m        shardid.shard_moves;
    nm       name;
    t0       timestamptz;
    steps    jsonb := '{}';
    fr       jsonb;
    ok       boolean;
    ds       jsonb;
    dt       jsonb;
    cs       jsonb;
    ct       jsonb;
BEGIN
    SELECT * INTO STRICT m FROM shardid.shard_moves AS x WHERE x.shard = _move_cutover.shard;
    nm := shardid._move_name(m.shard, m.move_id);
    PERFORM shardid._node_ensure('shardid_move_source', m.source);
    PERFORM shardid._node_ensure('shardid_move_target', m.target);
    t0 := clock_timestamp();
    fr := shardid._move_lock_tables(shard, format('SELECT shardid._move_freeze(%L, %s, %L, %L, 300)',
                                                  m.schema_name, shard, m.target, m.mode = 'online'), lock_timeout);
    steps := steps || jsonb_build_object('frozen', round(extract(epoch FROM clock_timestamp() - t0) * 1000));
    UPDATE shardid.shard_moves AS x
       SET frozen_at = COALESCE(x.frozen_at, t0), source_lsn = (fr->>'lsn')::pg_lsn, updated_at = clock_timestamp()
     WHERE x.shard = _move_cutover.shard;

    IF m.mode = 'offline' THEN
        PERFORM shardid._node_send('shardid_move_target', format('SELECT shardid._move_row_counts(%L)', m.schema_name));
        cs := shardid._node('shardid_move_source', format('SELECT shardid._move_row_counts(%L)', m.schema_name), m.source)::jsonb;
        ct := shardid._node_wait('shardid_move_target', m.target)::jsonb;
        IF cs IS DISTINCT FROM ct THEN
            RETURN jsonb_build_object('waiting', true, 'source', cs, 'target', ct);
        END IF;
    END IF;

    -- the target's generators, while it confirms the source's position
    PERFORM shardid._node_send('shardid_move_target',
                               format('SELECT shardid._move_raise_generators(%L, %L)', m.schema_name, fr->'states'));
    IF m.mode = 'online' THEN
        LOOP
            ok := (shardid._node('shardid_move_source', format('SELECT shardid._move_slot_status(%L, %L)', nm, fr->>'lsn'),
                                 m.source)::jsonb->>'confirmed')::boolean;
            EXIT WHEN ok;
            IF clock_timestamp() - t0 > cutover_timeout THEN
                RAISE EXCEPTION 'node "%" did not confirm the WAL position % of node "%" within %', m.target, fr->>'lsn',
                        m.source, cutover_timeout
                    USING ERRCODE = 'object_not_in_prerequisite_state',
                          DETAIL = 'Its subscription may have stopped (see its server log) or be far behind.';
            END IF;
            PERFORM pg_sleep(0.002);
        END LOOP;
        steps := steps || jsonb_build_object('confirmed', round(extract(epoch FROM clock_timestamp() - t0) * 1000));
    END IF;
    PERFORM shardid._node_wait('shardid_move_target', m.target);
    steps := steps || jsonb_build_object('raised', round(extract(epoch FROM clock_timestamp() - t0) * 1000));
    PERFORM shardid._move_pause(shard, 'frozen');

    -- the last comparison; the source's freeze made permanent meanwhile
    PERFORM shardid._node_send('shardid_move_target', format('SELECT shardid._shard_definition(%L, %L)', m.schema_name, nm));
    ds := shardid._move_lock_tables(shard, format('SELECT shardid._move_seal(%L, %s, %L, 300)', m.schema_name, shard, m.target),
                                    lock_timeout);
    dt := shardid._node_wait('shardid_move_target', m.target)::jsonb;
    PERFORM shardid._move_compare(ds, dt, format('node "%s"', m.source), format('node "%s"', m.target),
                                  format('the tables of shard %s changed on node "%s" during the move', shard, m.source),
                                  'Logical replication does not carry DDL: make the change after the move (or on both nodes).');
    steps := steps || jsonb_build_object('sealed', round(extract(epoch FROM clock_timestamp() - t0) * 1000));
    UPDATE shardid.shard_moves AS x SET phase = 'caught_up', updated_at = clock_timestamp()
     WHERE x.shard = _move_cutover.shard;
    RETURN steps;
END
$$;

REVOKE ALL ON FUNCTION shardid._move_cutover(integer, interval, interval) FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_cutover(integer, interval, interval) IS
    'Router, move phase frozen: freezes the shard on the source, waits for the target, raises its generators, seals the freeze, compares definitions; then caught_up.';
-- Router, phase 'caught_up' of a move: points the router at the target
-- (repoint_shard(), which also turns the phase to 'repointed', under the
-- lock on shard_placement that a rollback takes to read the phase).
CREATE OR REPLACE FUNCTION shardid._move_repoint(shard integer) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    m shardid.shard_moves;
BEGIN
    SELECT * INTO STRICT m FROM shardid.shard_moves AS x WHERE x.shard = _move_repoint.shard;
    PERFORM shardid.repoint_shard(shard, m.target);
    UPDATE shardid.shard_moves AS x SET repointed_at = clock_timestamp() WHERE x.shard = _move_repoint.shard;
END
$$;

REVOKE ALL ON FUNCTION shardid._move_repoint(integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_repoint(integer) IS
    'Router, move phase caught_up: repoints the shard at its target (phase repointed, same transaction).';
-- Router, phase 'repointed' of a move: the target serves the shard; what
-- is left is dropped and retired, each step repeatable: the subscription
-- (and 15's role) on the target, the slots (its own and the table-sync
-- ones) and the publication on the source, then the old copy on the
-- source (retire_shard: dropped with drop_old, else renamed
-- <schema>_moved_<move_id>, cut to 63 bytes at a character boundary, with
-- triggers refusing writes), locking its tables 300 ms at a time for
-- lock_timeout in all. Deletes the move's row; returns what became of the
-- old copy.
CREATE OR REPLACE FUNCTION shardid._move_finish(shard integer, drop_old boolean, lock_timeout interval) RETURNS text
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    m    shardid.shard_moves;
    nm   name;
    res  jsonb;
    remaining text;
    old  text;
BEGIN
    SELECT * INTO STRICT m FROM shardid.shard_moves AS x WHERE x.shard = _move_finish.shard;
    nm := shardid._move_name(m.shard, m.move_id);
    PERFORM shardid._node_ensure('shardid_move_target', m.target);
    res := shardid._node('shardid_move_target', format('SELECT shardid._move_unsubscribe(%L)', nm), m.target)::jsonb;
    PERFORM shardid._node_ensure('shardid_move_source', m.source);
    remaining := shardid._node('shardid_move_source', format('SELECT shardid._move_unpublish(%L, %L, %L, 10000)', nm,
                                                         COALESCE(m.subscription, (res->>'subid')::oid),
                                                         COALESCE(m.target_sysid, res->>'sysid')), m.source);
    IF remaining <> '' THEN
        RAISE EXCEPTION 'replication slots of the move are still in use on node "%": %', m.source, remaining
            USING ERRCODE = 'object_in_use',
                  HINT = format('The shard is served by node "%s". CALL shardid.move_shard(%s, %L); again to finish.', m.target, shard, m.target);
    END IF;
    old := (shardid._move_lock_tables(shard,
                format('SELECT to_jsonb(shardid._move_retire(%s, %L, %L, %L, 300))', shard, m.schema_name, m.target,
                       CASE WHEN drop_old THEN NULL ELSE shardid._fit_name(m.schema_name, '_moved_' || m.move_id) END),
                lock_timeout))#>>'{}';
    DELETE FROM shardid.shard_moves AS x WHERE x.shard = _move_finish.shard;
    RETURN old;
END
$$;

REVOKE ALL ON FUNCTION shardid._move_finish(integer, boolean, interval) FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_finish(integer, boolean, interval) IS
    'Router, move phase repointed: drops the subscription, slots and publication, retires the old copy, deletes the move''s row.';
-- Router, one step of _move_rollback(): runs sql on node over the dblink
-- connection conn (opened unless it is) and says how it went, without
-- raising, so that a failure on one node stops none of the other steps:
-- {"value": its first value as text}; {"cancelled": true} when the step was
-- cancelled (the rollback stops there); {"left": "<what> on node "<node>"
-- (<error>)"} for what is left undone, the connection closed.
CREATE OR REPLACE FUNCTION shardid._move_rollback_step(conn text, node text, sql text, what text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    msg text;
BEGIN
    PERFORM shardid._node_ensure(conn, node);
    RETURN jsonb_build_object('value', shardid._node(conn, sql, node));
EXCEPTION WHEN query_canceled THEN
    RETURN '{"cancelled": true}';
WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT;
    PERFORM shardid._node_close(conn);
    RETURN jsonb_build_object('left', format('%s on node "%s" (%s)', what, node, msg));
END
$$;

REVOKE ALL ON FUNCTION shardid._move_rollback_step(text, text, text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_rollback_step(text, text, text, text) IS
    'Router, one step of a move''s rollback: runs a statement on a node and returns its value, that it was cancelled, or what it left undone; never raises.';
-- Router: rolls a move back unless it has been repointed, committing as it
-- goes. The phase is read under the lock on shard_placement that
-- repoint_shard() takes and turned to 'aborting' in that transaction, so
-- a move that the router already points at the target is never undone
-- (it stays repointed). Then, each step on its own so one unreachable
-- node stops none of the others, and the source first (the target is not
-- routed, so the shard must be writable where it is):
--   1. source: the freeze triggers dropped (thaw_shard_tables);
--   2. target: the subscription disabled, detached, dropped (and 15's role);
--   3. source: the move's slot, the table-sync slots, the publication;
--   4. target: the copy unregistered and dropped (not if step 2 failed).
-- When all succeeded the row is deleted; else it stays in phase 'aborting'
-- with last_error listing what is left ('rollback incomplete, left: ...',
-- or 'rollback cancelled, left: ...' when a cancel stopped the steps), for
-- abort_move() or move_shard() to finish. The caller reads the outcome
-- from the row (_move_outcome). Never raises: its caller holds the shard's
-- lock.
CREATE OR REPLACE PROCEDURE shardid._move_rollback(shard integer)
    LANGUAGE plpgsql
AS $$
DECLARE
    m         shardid.shard_moves;
    nm        name;
    remaining text[];
    res       jsonb;
    step      jsonb;
    msg       text;
    st        text;
    cancelled boolean := false;
    tgt_done  boolean := false;
    outcome   text;
BEGIN
    BEGIN
        LOCK TABLE shardid.shard_placement IN SHARE ROW EXCLUSIVE MODE;
        SELECT * INTO m FROM shardid.shard_moves AS x WHERE x.shard OPERATOR(pg_catalog.=) _move_rollback.shard FOR UPDATE;
        IF m.shard IS NULL THEN
            outcome := 'none';
        ELSIF m.phase OPERATOR(pg_catalog.=) 'repointed' THEN
            outcome := 'repointed';
        ELSE
            UPDATE shardid.shard_moves AS x SET phase = 'aborting', updated_at = pg_catalog.clock_timestamp()
             WHERE x.shard OPERATOR(pg_catalog.=) _move_rollback.shard;
        END IF;
    EXCEPTION WHEN query_canceled OR OTHERS THEN
        GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, st = RETURNED_SQLSTATE;
        outcome := CASE WHEN st OPERATOR(pg_catalog.=) '57014' THEN 'cancelled' ELSE 'failed: ' OPERATOR(pg_catalog.||) msg END;
    END;
    COMMIT;
    IF outcome IS NOT NULL THEN
        RETURN;
    END IF;
    RAISE NOTICE 'rolling back the move of shard %: it stays on "%"', shard, m.source;
    nm := shardid._move_name(m.shard, m.move_id);

    -- 1. the source writable again, before anything else
    step := shardid._move_rollback_step('shardid_move_source', m.source,
                                        pg_catalog.format('SELECT shardid.thaw_shard_tables(%L)', m.schema_name),
                                        pg_catalog.format('the freeze of shard %s', shard));
    remaining := ARRAY[step OPERATOR(pg_catalog.->>) 'left'];
    -- 2. the subscription, without the source
    IF NOT step OPERATOR(pg_catalog.?) 'cancelled' THEN
        step := shardid._move_rollback_step('shardid_move_target', m.target,
                                            pg_catalog.format('SELECT shardid._move_unsubscribe(%L)', nm),
                                            pg_catalog.format('subscription %s', nm));
        tgt_done := step OPERATOR(pg_catalog.?) 'value';
        res := (step OPERATOR(pg_catalog.->>) 'value')::jsonb;
        remaining := remaining OPERATOR(pg_catalog.||) (step OPERATOR(pg_catalog.->>) 'left');
    END IF;
    -- 3. the slots (table-sync ones too) and the publication
    IF NOT step OPERATOR(pg_catalog.?) 'cancelled' THEN
        step := shardid._move_rollback_step('shardid_move_source', m.source,
                                            pg_catalog.format('SELECT shardid._move_unpublish(%L, %L, %L, 10000)', nm,
                                                              COALESCE(m.subscription, (res OPERATOR(pg_catalog.->>) 'subid')::oid),
                                                              COALESCE(m.target_sysid, res OPERATOR(pg_catalog.->>) 'sysid')),
                                            pg_catalog.format('publication and slots %s', nm));
        IF step OPERATOR(pg_catalog.->>) 'value' OPERATOR(pg_catalog.<>) '' THEN
            remaining := remaining OPERATOR(pg_catalog.||)
                         pg_catalog.format('replication slots %s on node "%s" (in use)', step OPERATOR(pg_catalog.->>) 'value', m.source);
        END IF;
        remaining := remaining OPERATOR(pg_catalog.||) (step OPERATOR(pg_catalog.->>) 'left');
    END IF;
    -- 4. the target's copy, once nothing replicates into it
    IF NOT step OPERATOR(pg_catalog.?) 'cancelled' THEN
        IF tgt_done THEN
            step := shardid._move_rollback_step('shardid_move_target', m.target,
                                                pg_catalog.format('SELECT shardid._move_drop_copy(%s, %L)', shard, m.schema_name),
                                                pg_catalog.format('the copy %s', pg_catalog.quote_ident(m.schema_name)));
            remaining := remaining OPERATOR(pg_catalog.||) (step OPERATOR(pg_catalog.->>) 'left');
        ELSE
            remaining := remaining OPERATOR(pg_catalog.||) pg_catalog.format('the copy %s on node "%s"', pg_catalog.quote_ident(m.schema_name), m.target);
        END IF;
    END IF;
    cancelled := step OPERATOR(pg_catalog.?) 'cancelled';
    remaining := pg_catalog.array_remove(remaining, NULL);

    BEGIN
        IF cancelled THEN
            remaining := remaining OPERATOR(pg_catalog.||) 'the rest: the rollback was cancelled'::text;
        END IF;
        IF pg_catalog.cardinality(remaining) OPERATOR(pg_catalog.=) 0 THEN
            DELETE FROM shardid.shard_moves AS x WHERE x.shard OPERATOR(pg_catalog.=) _move_rollback.shard;
            RAISE NOTICE 'move of shard % rolled back: nothing left on "%", shard writable on "%"', shard, m.target, m.source;
        ELSE
            UPDATE shardid.shard_moves AS x
               SET last_error = CASE WHEN cancelled THEN 'rollback cancelled, left: ' ELSE 'rollback incomplete, left: ' END
                                OPERATOR(pg_catalog.||) pg_catalog.array_to_string(remaining, '; '),
                   updated_at = pg_catalog.clock_timestamp()
             WHERE x.shard OPERATOR(pg_catalog.=) _move_rollback.shard;
        END IF;
    EXCEPTION WHEN query_canceled OR OTHERS THEN
        NULL;
    END;
    COMMIT;
END
$$;

REVOKE ALL ON PROCEDURE shardid._move_rollback(integer) FROM PUBLIC;

COMMENT ON PROCEDURE shardid._move_rollback(integer) IS
    'Router: rolls back a move not yet repointed (phase read under the repoint''s lock), the source made writable first; deletes its row, or leaves it aborting with what is left.';
-- Router, moves: what _move_rollback() achieved, read from the move's row:
-- 'rolled back' (no row left), 'repointed' (not rolled back: the router
-- points at the target), 'cancelled' (a cancel stopped the rollback), or
-- 'incomplete: ' and what is left.
CREATE OR REPLACE FUNCTION shardid._move_outcome(shard integer) RETURNS text
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN m.shard IS NULL THEN 'rolled back'
                WHEN m.phase = 'repointed' THEN 'repointed'
                WHEN m.last_error LIKE 'rollback cancelled%' THEN 'cancelled'
                ELSE 'incomplete: ' || COALESCE(m.last_error, 'phase ' || m.phase) END
      FROM (SELECT 1) AS one
      LEFT JOIN shardid.shard_moves AS m ON m.shard = _move_outcome.shard
$$;

REVOKE ALL ON FUNCTION shardid._move_outcome(integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_outcome(integer) IS
    'Router, moves: the outcome of a rollback, from the move''s row: rolled back, repointed, cancelled, or incomplete and what is left.';
-- Router: moves one logical shard to another node while it takes writes
-- (docs/moves.md). The move is a row of shardid.shard_moves whose phase
-- commits as it advances (schema, copy, frozen, caught_up, repointed), the
-- nodes driven over dblink (CREATE EXTENSION dblink here). CALL it again
-- after any interruption to resume from the phase reached. A failure or a
-- cancel (pg_cancel_backend) before the router points at the target rolls
-- the move back (_move_rollback), the source writable first; after it,
-- CALL again to finish. pg_terminate_backend of the session, or its end,
-- leaves the phase for the next CALL or abort_move(): the shard's
-- advisory lock and the source's freeze lease go with the session.
-- One session per shard (the advisory lock). Writes to the shard are
-- refused (25006) only during the cut-over.
--   drop_old: drop the old copy instead of keeping it renamed
--   offline: for a source without wal_level = logical; the shard is frozen
--     while its rows are copied, by bin/shardid-move-shard --offline
--   lock_timeout: how long the freeze and the retirement may keep trying
--     to lock the shard's tables (300 ms at a time)
--   cutover_timeout: how long the frozen shard waits for the target
--   catchup_timeout: how long the copy may take
--   node_timeout: how long a node may be unreachable during the copy
-- A procedure that commits cannot pin search_path with SET: every name
-- below is schema-qualified, and the work is done by functions that pin it.
CREATE OR REPLACE PROCEDURE shardid.move_shard(
    shard integer,
    to_node text,
    drop_old boolean DEFAULT false,
    offline boolean DEFAULT false,
    lock_timeout interval DEFAULT '10 s',
    cutover_timeout interval DEFAULT '30 s',
    catchup_timeout interval DEFAULT '1 day',
    node_timeout interval DEFAULT '30 s')
    LANGUAGE plpgsql
AS $$
DECLARE
    m        shardid.shard_moves;
    last     shardid.shard_moves;
    phase    text;
    state    jsonb := '{}';
    steps    jsonb;
    old      text;
    outcome  text;
    t_start  timestamptz := pg_catalog.clock_timestamp();
    t_routed timestamptz;
    e_state  text;
    e_msg    text;
    e_detail text;
    e_hint   text;
BEGIN
    PERFORM shardid._move_lock(shard, 'shardid.move_shard()');
    BEGIN
        IF offline IS NULL OR drop_old IS NULL OR lock_timeout IS NULL OR cutover_timeout IS NULL
           OR catchup_timeout IS NULL OR node_timeout IS NULL THEN
            RAISE EXCEPTION 'move_shard() arguments must not be NULL' USING ERRCODE = 'null_value_not_allowed';
        END IF;
        m := shardid._move_prepare(shard, to_node, offline);
        phase := m.phase;
        last := m;
    EXCEPTION WHEN query_canceled OR OTHERS THEN
        GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_msg = MESSAGE_TEXT,
                                e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
    END;
    IF e_state IS NOT NULL THEN
        IF e_state OPERATOR(pg_catalog.=) '57014' THEN
            PERFORM shardid._absorb_cancel();
        END IF;
        PERFORM shardid._move_unlock(shard);
        PERFORM shardid._raise(e_state, e_msg, e_detail, e_hint);
    END IF;
    COMMIT;

    IF phase OPERATOR(pg_catalog.=) 'aborting' THEN
        CALL shardid._move_rollback(shard);
        outcome := shardid._move_outcome(shard);
        PERFORM shardid._move_unlock(shard);
        PERFORM shardid._raise('55000',
            pg_catalog.format('a rollback of the move of shard %s was interrupted; %s', shard,
                              CASE WHEN outcome OPERATOR(pg_catalog.=) 'rolled back' THEN 'it is finished now: the shard stays where it was'
                                   ELSE 'it is still not complete: ' OPERATOR(pg_catalog.||) outcome END),
            NULL, pg_catalog.format('CALL shardid.move_shard(%s, %L); again to move it.', shard, to_node));
    END IF;

    WHILE phase IS NOT NULL LOOP
        BEGIN
            CASE phase
                WHEN 'schema' THEN
                    PERFORM shardid._move_pause(shard, 'schema');
                    PERFORM shardid._move_schema(shard);
                WHEN 'copy' THEN
                    state := shardid._move_copy(shard, catchup_timeout, node_timeout, state);
                WHEN 'frozen' THEN
                    steps := shardid._move_cutover(shard, lock_timeout, cutover_timeout);
                WHEN 'caught_up' THEN
                    PERFORM shardid._move_pause(shard, 'caught_up');
                    PERFORM shardid._move_repoint(shard);
                WHEN 'repointed' THEN
                    PERFORM shardid._move_pause(shard, 'repointed');
                    old := shardid._move_finish(shard, drop_old, lock_timeout);
                ELSE
                    RAISE EXCEPTION 'move of shard % in unexpected phase %', shard, phase USING ERRCODE = 'internal_error';
            END CASE;
            phase := NULL;
            SELECT x.* INTO m FROM shardid.shard_moves AS x WHERE x.shard OPERATOR(pg_catalog.=) move_shard.shard;
            IF FOUND THEN
                phase := m.phase;
                last := m;
            END IF;
        EXCEPTION WHEN query_canceled OR OTHERS THEN
            GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_msg = MESSAGE_TEXT,
                                    e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
        END;
        EXIT WHEN e_state IS NOT NULL;
        COMMIT;
        -- the end of the refused window: the repoint committed in this CALL
        IF phase OPERATOR(pg_catalog.=) 'repointed' AND t_routed IS NULL AND last.frozen_at IS NOT NULL THEN
            t_routed := pg_catalog.clock_timestamp();
        END IF;
        -- offline: the rows are to be copied by the caller, then CALL again
        EXIT WHEN steps OPERATOR(pg_catalog.?) 'waiting';
    END LOOP;

    IF e_state IS NOT NULL THEN
        IF e_state OPERATOR(pg_catalog.=) '57014' THEN
            PERFORM shardid._absorb_cancel();
        END IF;
        PERFORM shardid._move_disconnect();
        BEGIN
            UPDATE shardid.shard_moves AS x SET last_error = e_msg, updated_at = pg_catalog.clock_timestamp()
             WHERE x.shard OPERATOR(pg_catalog.=) move_shard.shard
            RETURNING x.phase INTO phase;
        EXCEPTION WHEN query_canceled OR OTHERS THEN
            NULL;
        END;
        COMMIT;
        IF phase OPERATOR(pg_catalog.=) 'repointed' THEN
            e_hint := pg_catalog.format('The shard is served by node "%s"; its old copy is not retired yet. CALL shardid.move_shard(%s, %L); again to finish.',
                                        last.target, shard, last.target);
        ELSIF phase IS NOT NULL THEN
            CALL shardid._move_rollback(shard);
            outcome := shardid._move_outcome(shard);
            e_detail := pg_catalog.concat_ws(E'\n', NULLIF(e_detail, ''),
                CASE outcome WHEN 'rolled back' THEN 'The move was rolled back: the shard stays where it was, writable.'
                             WHEN 'repointed' THEN NULL
                             ELSE 'The rollback is not complete (' OPERATOR(pg_catalog.||) outcome OPERATOR(pg_catalog.||)
                                  pg_catalog.format('): the shard is writable where it was unless its node is down. CALL shardid.abort_move(%s); to finish it.', shard) END);
            IF outcome OPERATOR(pg_catalog.=) 'repointed' THEN
                e_hint := pg_catalog.format('The shard is served by node "%s" already. CALL shardid.move_shard(%s, %L); again to finish.',
                                            last.target, shard, last.target);
            END IF;
        END IF;
        PERFORM shardid._move_unlock(shard);
        PERFORM shardid._raise(e_state, e_msg, e_detail, e_hint);
    END IF;

    PERFORM shardid._move_unlock(shard);
    IF steps OPERATOR(pg_catalog.?) 'waiting' THEN
        RAISE NOTICE 'shard % is frozen on "%" for an offline move: copy its rows to "%", then CALL this again', shard, last.source, last.target
            USING DETAIL = pg_catalog.format('Row counts on "%s": %s; on "%s": %s.', last.source, steps OPERATOR(pg_catalog.->) 'source',
                                             last.target, steps OPERATOR(pg_catalog.->) 'target'),
                  HINT = 'bin/shardid-move-shard --offline does it (pg_dump --data-only --disable-triggers).';
        RETURN;
    END IF;
    RAISE NOTICE 'moved shard % from "%" to "%" in % ms%; old copy %', shard, last.source, last.target,
        pg_catalog.round(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp() OPERATOR(pg_catalog.-) t_start) OPERATOR(pg_catalog.*) 1000),
        CASE WHEN t_routed IS NOT NULL
             THEN pg_catalog.format(' (cut-over from %s ms); writes refused for %s ms',
                                    pg_catalog.round(pg_catalog.date_part('epoch', last.frozen_at OPERATOR(pg_catalog.-) last.started_at) OPERATOR(pg_catalog.*) 1000),
                                    pg_catalog.round(pg_catalog.date_part('epoch', t_routed OPERATOR(pg_catalog.-) last.frozen_at) OPERATOR(pg_catalog.*) 1000))
             ELSE '' END,
        COALESCE(old, 'retired');
END
$$;

REVOKE ALL ON PROCEDURE shardid.move_shard(integer, text, boolean, boolean, interval, interval, interval, interval) FROM PUBLIC;

COMMENT ON PROCEDURE shardid.move_shard(integer, text, boolean, boolean, interval, interval, interval, interval) IS
    'Router: moves a shard to another node while it takes writes (refused only during the cut-over); CALL again to resume an interrupted move; a failure or cancel before the repoint rolls it back.';
-- Router: rolls back a move that the router does not point at yet (see
-- _move_rollback: the source made writable first, then the subscription,
-- the slots and publication, the target's copy), e.g. one left by a
-- session that was terminated, or a rollback that could not finish
-- because a node was down. A move being run by another session is refused
-- (cancel that session instead: its rollback is the same); a repointed one
-- too: CALL move_shard() again to finish it.
CREATE OR REPLACE PROCEDURE shardid.abort_move(shard integer)
    LANGUAGE plpgsql
AS $$
DECLARE
    m       shardid.shard_moves;
    outcome text;
BEGIN
    PERFORM shardid._move_lock(shard, 'shardid.abort_move()');
    SELECT x.* INTO m FROM shardid.shard_moves AS x WHERE x.shard OPERATOR(pg_catalog.=) abort_move.shard;
    IF NOT FOUND THEN
        PERFORM shardid._move_unlock(shard);
        RAISE EXCEPTION 'no move of shard % is in progress', shard
            USING ERRCODE = 'undefined_object',
                  HINT = 'See shardid.move_progress.';
    END IF;
    COMMIT;
    CALL shardid._move_rollback(shard);
    outcome := shardid._move_outcome(shard);
    PERFORM shardid._move_unlock(shard);
    IF outcome OPERATOR(pg_catalog.=) 'repointed' THEN
        RAISE EXCEPTION 'shard % is already served by node "%": the move cannot be aborted', shard, m.target
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = pg_catalog.format('CALL shardid.move_shard(%s, %L); to finish it.', shard, m.target);
    ELSIF outcome OPERATOR(pg_catalog.=) 'cancelled' THEN
        RAISE EXCEPTION 'canceling statement due to user request'
            USING ERRCODE = 'query_canceled',
                  DETAIL = 'The rollback stopped part way: CALL shardid.abort_move() again to finish it.';
    ELSIF outcome OPERATOR(pg_catalog.<>) 'rolled back' AND outcome OPERATOR(pg_catalog.<>) 'none' THEN
        RAISE EXCEPTION 'the rollback of the move of shard % is not complete', shard
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = outcome,
                  HINT = pg_catalog.format('The shard is writable on node "%s" unless that node is down. Fix the cause, then CALL shardid.abort_move(%s); again.', m.source, shard);
    END IF;
END
$$;

REVOKE ALL ON PROCEDURE shardid.abort_move(integer) FROM PUBLIC;

COMMENT ON PROCEDURE shardid.abort_move(integer) IS
    'Router: rolls back a shard move that has not been repointed (source writable first, then subscription, slots, publication, target copy); refused while another session runs the move.';
-- Refuses a rebalance strategy shardid does not know, or a negative
-- max_moves, before anything reads the placement or reaches a node.
CREATE OR REPLACE FUNCTION shardid._check_rebalance_options(strategy text, max_moves integer) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF strategy IS NULL THEN
        RAISE EXCEPTION 'rebalance strategy must not be NULL' USING ERRCODE = 'null_value_not_allowed',
            HINT = 'Use by_size (the nodes'' total shard size, the default) or by_count (shards per node).';
    END IF;
    IF strategy <> ALL (ARRAY['by_size', 'by_count']) THEN
        RAISE EXCEPTION 'unknown rebalance strategy "%"', strategy
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'The strategies are by_size and by_count.',
                  HINT = 'Use by_size (the nodes'' total shard size, the default) or by_count (shards per node).';
    END IF;
    IF max_moves < 0 THEN
        RAISE EXCEPTION 'max_moves must not be negative (it is %)', max_moves
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give the most moves to plan or make, or NULL for no limit.';
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid._check_rebalance_options(text, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid._check_rebalance_options(text, integer) IS
    'Internal: raises 22023 for a rebalance strategy other than by_size and by_count, or a negative max_moves.';
-- The rebalance planner, pure: from the nodes, the node each shard counts
-- on and its size, the moves that even out the nodes' load. It reads no
-- table and reaches no node: rebalance_plan() gathers its input (placement,
-- moves in progress, sizes read from the nodes) and calls it, and the
-- regression tests call it with sizes of their own.
--
-- A node's load is, by_size, the total bytes of the shards it holds; by_count,
-- their number (each shard costs 1). One step moves a shard of cost c from a
-- node s to a node t where, with D = load(s) - load(t):
--   D > tolerance: by_size a tenth of the average node's load (nodes that
--       close are balanced enough: sizes drift with every write, and a move
--       is not free); by_count 0;
--   0 < c and 3c <= 2D: the gap between s and t narrows by at least c, so a
--       big shard is not moved for a small gain; and since c < D, both new
--       loads lie strictly between the old ones: no node ends fuller than
--       the fullest was or emptier than the emptiest was, and the sum of
--       squared loads strictly falls. No step makes the balance worse and
--       no sequence of steps comes back to a placement it left.
-- Which step (deterministic): sources from the fullest node down, targets
-- from the emptiest up (equal loads: node names in byte order), the first
-- pair that has such a shard; its shard whose cost is nearest D/2 (the
-- largest narrowing), then the smaller, then the highest shard number (the
-- choice of the count-based planner before 0.2, so by_count plans what it
-- planned). A shard moves at most once in a plan. Pinned shards (in a move,
-- frozen, or excluded by the caller) load the node given for them but never
-- move. The plan ends when no pair has such a shard, or after max_moves.
--
-- Cost: each step sorts the nodes and, per pair tried, binary-searches the
-- source's shards (sorted by cost) for D/2, skipping shards already moved.
CREATE OR REPLACE FUNCTION shardid._rebalance_moves(strategy text, max_moves integer, nodes text[],
                                                    shards integer[], shard_nodes text[], shard_bytes bigint[],
                                                    pinned integer[] DEFAULT '{}')
    RETURNS TABLE (step integer, shard integer, source text, target text, bytes bigint)
    LANGUAGE plpgsql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    node_name   text[];     -- the nodes, each once, in byte order; a node is its index here
    k           integer;
    load        bigint[];   -- per node
    tolerance   bigint := 0;
    -- the movable shards, sorted by node, cost, shard number descending;
    -- node i's are cand_*[first_of[i] .. last_of[i]]
    cand_shard  integer[];
    cand_cost   bigint[];
    cand_bytes  bigint[];
    cand_node   integer[];
    m           integer;
    first_of    integer[];
    last_of     integer[];
    -- runs of equal cost on one node: a shard taken from a run is always
    -- the first not yet taken, so each run is a queue: next_of[start] is
    -- its first untaken shard (past run_end once all are taken)
    run_start   integer[];
    run_end     integer[];
    next_of     integer[];
    by_load     integer[];  -- sources: fullest first, equal loads in name order
    to_load     integer[];  -- targets: emptiest first, equal loads in name order
    s           integer;
    t           integer;
    gap         bigint;
    lo          integer;
    hi          integer;
    mid         integer;
    g           integer;
    above       integer;
    below       integer;
    best        integer;
    done        integer := 0;
    dup         integer;
BEGIN
    PERFORM shardid._check_rebalance_options(strategy, max_moves);
    IF nodes IS NULL OR shards IS NULL OR shard_nodes IS NULL OR shard_bytes IS NULL THEN
        RAISE EXCEPTION '_rebalance_moves() arrays must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF cardinality(shard_nodes) <> cardinality(shards) OR cardinality(shard_bytes) <> cardinality(shards) THEN
        RAISE EXCEPTION 'shards, shard_nodes and shard_bytes must have one element per shard (% shards, % nodes, % sizes)',
                        cardinality(shards), cardinality(shard_nodes), cardinality(shard_bytes)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    node_name := ARRAY(SELECT u.n FROM pg_catalog.unnest(nodes) AS u(n) WHERE u.n IS NOT NULL
                        GROUP BY u.n ORDER BY u.n COLLATE "C");
    k := cardinality(node_name);

    SELECT x.sh INTO dup FROM pg_catalog.unnest(shards) AS x(sh)
     GROUP BY x.sh HAVING pg_catalog.count(*) > 1 OR x.sh IS NULL ORDER BY x.sh LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'shard % is given more than once', COALESCE(dup::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT x.sh INTO dup FROM ROWS FROM (pg_catalog.unnest(shards), pg_catalog.unnest(shard_nodes)) AS x(sh, nd)
     WHERE x.nd IS NULL OR x.nd <> ALL (node_name) ORDER BY x.sh LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'shard % is on a node that is not given', dup USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF strategy = 'by_size' THEN
        SELECT x.sh INTO dup FROM ROWS FROM (pg_catalog.unnest(shards), pg_catalog.unnest(shard_bytes)) AS x(sh, b)
         WHERE x.b IS NULL OR x.b < 0 ORDER BY x.sh LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION 'shard % has no size', dup
                USING ERRCODE = 'invalid_parameter_value',
                      DETAIL = 'by_size needs the size in bytes (0 or more) of every shard.';
        END IF;
    END IF;
    IF k < 2 THEN
        RETURN;
    END IF;

    load := ARRAY(SELECT COALESCE(pg_catalog.sum(CASE WHEN x.nd IS NULL THEN 0 WHEN strategy = 'by_count' THEN 1
                                                      ELSE x.b END), 0)::bigint
                    FROM pg_catalog.generate_series(1, k) AS g(i)
                    LEFT JOIN ROWS FROM (pg_catalog.unnest(shard_nodes), pg_catalog.unnest(shard_bytes)) AS x(nd, b)
                      ON x.nd = node_name[g.i]
                   GROUP BY g.i ORDER BY g.i);
    IF strategy = 'by_size' THEN
        SELECT pg_catalog.div(pg_catalog.sum(l), k * 10)::bigint
          INTO tolerance FROM pg_catalog.unnest(load) AS l;
    END IF;

    SELECT pg_catalog.array_agg(c.sh ORDER BY c.ni, c.cost, c.sh DESC),
           pg_catalog.array_agg(c.cost ORDER BY c.ni, c.cost, c.sh DESC),
           pg_catalog.array_agg(c.b ORDER BY c.ni, c.cost, c.sh DESC),
           pg_catalog.array_agg(c.ni ORDER BY c.ni, c.cost, c.sh DESC)
      INTO cand_shard, cand_cost, cand_bytes, cand_node
      FROM (SELECT x.sh, x.b, pg_catalog.array_position(node_name, x.nd) AS ni,
                   CASE strategy WHEN 'by_count' THEN 1 ELSE x.b END AS cost
              FROM ROWS FROM (pg_catalog.unnest(shards), pg_catalog.unnest(shard_nodes), pg_catalog.unnest(shard_bytes)) AS x(sh, nd, b)
             WHERE x.sh <> ALL (COALESCE(pinned, '{}'))) AS c;
    m := COALESCE(cardinality(cand_shard), 0);
    IF m = 0 THEN
        RETURN;
    END IF;

    first_of := array_fill(1, ARRAY[k]);
    last_of := array_fill(0, ARRAY[k]);
    run_start := array_fill(0, ARRAY[m]);
    run_end := array_fill(0, ARRAY[m]);
    next_of := array_fill(0, ARRAY[m]);
    FOR i IN 1 .. m LOOP
        IF last_of[cand_node[i]] = 0 THEN
            first_of[cand_node[i]] := i;
        END IF;
        last_of[cand_node[i]] := i;
        IF i > 1 AND cand_node[i] = cand_node[i - 1] AND cand_cost[i] = cand_cost[i - 1] THEN
            run_start[i] := run_start[i - 1];
        ELSE
            run_start[i] := i;
            next_of[i] := i;
        END IF;
    END LOOP;
    FOR i IN REVERSE m .. 1 LOOP
        run_end[i] := CASE WHEN i < m AND run_start[i + 1] = run_start[i] THEN run_end[i + 1] ELSE i END;
    END LOOP;

    WHILE max_moves IS NULL OR done < max_moves LOOP
        best := NULL;
        by_load := ARRAY(SELECT g.i FROM pg_catalog.generate_series(1, k) AS g(i) ORDER BY load[g.i] DESC, g.i);
        to_load := ARRAY(SELECT g.i FROM pg_catalog.generate_series(1, k) AS g(i) ORDER BY load[g.i], g.i);
        <<pairs>>
        FOREACH s IN ARRAY by_load LOOP
            FOREACH t IN ARRAY to_load LOOP
                gap := load[s] - load[t];
                EXIT WHEN gap <= tolerance;
                CONTINUE WHEN first_of[s] > last_of[s];
                -- the first of s's shards whose cost is at least D/2
                lo := first_of[s];
                hi := last_of[s] + 1;
                WHILE lo < hi LOOP
                    mid := (lo + hi) / 2;
                    IF 2 * cand_cost[mid] >= gap THEN hi := mid; ELSE lo := mid + 1; END IF;
                END LOOP;
                -- nearest untaken run at or above D/2, and below it
                above := NULL;
                g := lo;
                WHILE g <= last_of[s] AND next_of[run_start[g]] > run_end[g] LOOP
                    g := run_end[g] + 1;
                END LOOP;
                IF g <= last_of[s] AND 3 * cand_cost[g] <= 2 * gap THEN
                    above := next_of[run_start[g]];
                END IF;
                below := NULL;
                g := lo - 1;
                WHILE g >= first_of[s] AND cand_cost[g] > 0 AND next_of[run_start[g]] > run_end[g] LOOP
                    g := run_start[g] - 1;
                END LOOP;
                IF g >= first_of[s] AND cand_cost[g] > 0 THEN
                    below := next_of[run_start[g]];
                END IF;
                IF below IS NOT NULL AND (above IS NULL OR gap - 2 * cand_cost[below] <= 2 * cand_cost[above] - gap) THEN
                    best := below;
                ELSE
                    best := above;
                END IF;
                EXIT pairs WHEN best IS NOT NULL;
            END LOOP;
        END LOOP;
        EXIT WHEN best IS NULL;

        next_of[run_start[best]] := best + 1;
        load[s] := load[s] - cand_cost[best];
        load[t] := load[t] + cand_cost[best];
        done := done + 1;
        step := done;
        shard := cand_shard[best];
        source := node_name[s];
        target := node_name[t];
        bytes := cand_bytes[best];
        RETURN NEXT;
    END LOOP;
END
$$;

REVOKE ALL ON FUNCTION shardid._rebalance_moves(text, integer, text[], integer[], text[], bigint[], integer[]) FROM PUBLIC;

COMMENT ON FUNCTION shardid._rebalance_moves(text, integer, text[], integer[], text[], bigint[], integer[]) IS
    'Internal: the rebalance planner without I/O: the moves (step, shard, source, target, bytes) that even out the given nodes'' load by_size or by_count; shards in pinned count but never move.';
-- The size source of by_size rebalancing: each placed shard's size on the
-- node that holds it, the sum of pg_total_relation_size() (table, indexes,
-- TOAST) of the tables and materialized views in the shard's schema, read
-- over dblink (contrib) with one query per node that holds shards. A copy
-- being moved in or retired is not counted: only the shards placed on a
-- node, found through that node's shard_registry.
CREATE OR REPLACE FUNCTION shardid.shard_sizes()
    RETURNS TABLE (shard integer, node text, bytes bigint)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    -- runs on the node, whatever its search_path; %L is the shard list
    node_query CONSTANT text := $q$
        SELECT s.shard,
               CASE WHEN r.shard IS NOT NULL THEN
                   (SELECT COALESCE(pg_catalog.sum(pg_catalog.pg_total_relation_size(c.oid)), 0)::pg_catalog.int8
                      FROM pg_catalog.pg_class AS c
                      JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
                     WHERE n.nspname = r.schema_name
                       AND c.relkind = ANY ('{r,m}'::pg_catalog."char"[]))
               END
          FROM pg_catalog.unnest(%L::pg_catalog.int4[]) AS s(shard)
          LEFT JOIN shardid.shard_registry AS r ON r.shard = s.shard$q$;
    dblink_schema name;
    n       record;
    got_shard integer[];
    got_bytes bigint[];
    missing integer;
    err_state text;
    err_msg text;
    err_detail text;
BEGIN
    SELECT ns.nspname INTO dblink_schema
      FROM pg_catalog.pg_extension AS e
      JOIN pg_catalog.pg_namespace AS ns ON ns.oid = e.extnamespace
     WHERE e.extname = 'dblink';
    IF NOT FOUND THEN
        RAISE EXCEPTION 'dblink is not installed in database %', pg_catalog.current_database()
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'The router reads the shards'' sizes from the data nodes over dblink.',
                  HINT = 'On the router: CREATE EXTENSION dblink; (contrib, part of the postgresql-NN package). Or rebalance by_count, which reads no size.';
    END IF;
    FOR n IN
        SELECT nd.node, nd.connstr, pg_catalog.array_agg(p.shard ORDER BY p.shard) AS placed
          FROM shardid.nodes AS nd
          JOIN shardid.shard_placement AS p ON p.node = nd.node
         GROUP BY nd.node, nd.connstr
         ORDER BY nd.node COLLATE "C"
    LOOP
        BEGIN
            EXECUTE pg_catalog.format('SELECT pg_catalog.array_agg(r.shard ORDER BY r.shard), pg_catalog.array_agg(r.bytes ORDER BY r.shard)
                                         FROM %I.dblink($1, $2) AS r(shard integer, bytes bigint)', dblink_schema)
               INTO got_shard, got_bytes
              USING n.connstr, pg_catalog.format(node_query, n.placed::text);
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS err_state = RETURNED_SQLSTATE, err_msg = MESSAGE_TEXT, err_detail = PG_EXCEPTION_DETAIL;
            RAISE EXCEPTION 'cannot read the shard sizes of node "%": %', n.node, err_msg
                USING ERRCODE = err_state, DETAIL = err_detail,
                      HINT = 'The router connects to each node with its connect string in shardid.nodes, as the router''s server user (passwords in its ~/.pgpass).';
        END;
        SELECT u.sh INTO missing FROM ROWS FROM (pg_catalog.unnest(got_shard), pg_catalog.unnest(got_bytes)) AS u(sh, b)
         WHERE u.b IS NULL ORDER BY u.sh LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION 'shard % is placed on node "%" but not registered there', missing, n.node
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = 'Its size cannot be read: the node''s shardid.shard_registry has no such shard.',
                      HINT = 'Fix the placement (shardid.shard_placement) or the node, or rebalance by_count.';
        END IF;
        RETURN QUERY SELECT u.sh, n.node, u.b FROM ROWS FROM (pg_catalog.unnest(got_shard), pg_catalog.unnest(got_bytes)) AS u(sh, b);
    END LOOP;
END
$$;

REVOKE ALL ON FUNCTION shardid.shard_sizes() FROM PUBLIC;

COMMENT ON FUNCTION shardid.shard_sizes() IS
    'Router: each placed shard''s size in bytes on its node (tables with their indexes and TOAST in the shard''s schema), read over dblink; the sizes rebalance_plan(''by_size'') balances.';
-- The moves that would even out the nodes, without making any: the
-- placement and the moves in progress from the router's tables, the sizes
-- (by_size) from the nodes through shard_sizes(), the plan from the pure
-- planner _rebalance_moves() (which says how it chooses). Every node of
-- shardid.nodes takes part, also one that holds no shard yet. A shard in a
-- move counts on the node it is going to (on its source while the move is
-- being rolled back) and is not moved; so are frozen shards and
-- excluded_shards. by_count reaches no node and reports no bytes.
CREATE OR REPLACE FUNCTION shardid.rebalance_plan(strategy text DEFAULT 'by_size', max_moves integer DEFAULT NULL,
                                                  excluded_shards integer[] DEFAULT '{}')
    RETURNS TABLE (step integer, shard integer, source text, target text, bytes bigint)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    node_names  text[];
    placed      integer[];
    counted_on  text[];
    sizes       bigint[];
    pinned      integer[];
    size_shard  integer[] := '{}';
    size_bytes  bigint[] := '{}';
BEGIN
    PERFORM shardid._check_rebalance_options(strategy, max_moves);
    IF strategy = 'by_size' THEN
        SELECT COALESCE(pg_catalog.array_agg(z.shard), '{}'), COALESCE(pg_catalog.array_agg(z.bytes), '{}')
          INTO size_shard, size_bytes
          FROM shardid.shard_sizes() AS z;
    END IF;
    node_names := ARRAY(SELECT n.node FROM shardid.nodes AS n);
    SELECT COALESCE(pg_catalog.array_agg(p.shard ORDER BY p.shard), '{}'),
           COALESCE(pg_catalog.array_agg(CASE WHEN m.shard IS NULL OR m.phase = 'aborting' THEN p.node
                                              ELSE m.target END ORDER BY p.shard), '{}'),
           COALESCE(pg_catalog.array_agg(z.bytes ORDER BY p.shard), '{}'),
           COALESCE(pg_catalog.array_agg(p.shard ORDER BY p.shard)
                        FILTER (WHERE m.shard IS NOT NULL OR p.frozen
                                   OR p.shard = ANY (COALESCE(excluded_shards, '{}'))), '{}')
      INTO placed, counted_on, sizes, pinned
      FROM shardid.shard_placement AS p
      LEFT JOIN shardid.shard_moves AS m ON m.shard = p.shard
      LEFT JOIN ROWS FROM (pg_catalog.unnest(size_shard), pg_catalog.unnest(size_bytes)) AS z(shard, bytes) ON z.shard = p.shard;
    RETURN QUERY
        SELECT r.step, r.shard, r.source, r.target, r.bytes
          FROM shardid._rebalance_moves(strategy, max_moves, node_names, placed, counted_on, sizes, pinned) AS r;
END
$$;

REVOKE ALL ON FUNCTION shardid.rebalance_plan(text, integer, integer[]) FROM PUBLIC;

COMMENT ON FUNCTION shardid.rebalance_plan(text, integer, integer[]) IS
    'Router: the moves (step, shard, source, target, bytes) that would even out the nodes'' total shard size (by_size, read from the nodes) or shard count (by_count), at most max_moves; shards in a move, frozen or excluded stay put. Changes nothing.';
-- rebalance() trusts a move only once it is done: after CALL move_shard()
-- returns, its row must be gone and the shard placed on the target. A move
-- that returns unfinished (an offline move waits for a client to copy its
-- rows) or went elsewhere stops the rebalance instead of being counted.
CREATE OR REPLACE FUNCTION shardid._check_move_done(shard integer, target text) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    phase text;
    node  text;
BEGIN
    SELECT m.phase INTO phase FROM shardid.shard_moves AS m WHERE m.shard = _check_move_done.shard;
    IF FOUND THEN
        RAISE EXCEPTION 'the move of shard % to node "%" returned unfinished (phase %)', shard, target, phase
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = pg_catalog.format('CALL shardid.move_shard(%s, %L); to go on with it, or CALL shardid.abort_move(%s); to roll it back, then rebalance again.',
                                           shard, target, shard);
    END IF;
    SELECT p.node INTO node FROM shardid.shard_placement AS p WHERE p.shard = _check_move_done.shard;
    IF node IS DISTINCT FROM target THEN
        RAISE EXCEPTION 'shard % is placed on node "%" after its move to node "%"', shard, COALESCE(node, '(none)'), target
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid._check_move_done(integer, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid._check_move_done(integer, text) IS
    'Internal, rebalance(): raises 55000 unless the move of a shard is done (no move row left, placed on the target).';
-- Rebalances the nodes: CALL shardid.rebalance() makes the moves of
-- rebalance_plan() one at a time with CALL shardid.move_shard(), committing
-- after each, and stops at the first failure by raising it. Calling it again
-- goes on from where it stopped: a move left in progress (a row of
-- shardid.shard_moves, e.g. after its session was terminated) is resumed
-- first; one being rolled back is rolled back to the end (abort_move(), no
-- move counted). Moves are online: an offline move copies its rows from a
-- client (bin/shardid-move-shard --offline, which bin/shardid-rebalance
-- --offline runs), so one left in progress is refused here with a hint.
--
-- It re-plans before every move (rebalance_plan(strategy, 1, ...), the
-- shards it has moved excluded, so none moves twice in one call) rather than
-- following one plan made at the start: during a long rebalance the sizes
-- change (writes go on; a shard copied by logical replication arrives
-- without its bloat, smaller than it was on the source), a move may fail or
-- someone may move a shard by hand, and each step should act on the
-- placement and sizes as they are. It costs one size query per node per
-- move, nothing next to a move. With sizes that do not change, the moves
-- made are exactly the plan rebalance_plan() showed.
--
-- One rebalance at a time: a session-level advisory lock on the router,
-- kept across the commits and released at the end (or when the session
-- ends: after a failure it stays with the session until then, or until
-- rebalance() is called again in it).
--
-- The move options (drop_old, lock_timeout ... node_timeout) are passed to
-- every move_shard() call and have its defaults (a regression test compares
-- them). After each call the move must be done: its row gone, the shard
-- placed on the target; anything else stops the rebalance.
-- No SET search_path: PostgreSQL refuses COMMIT in a procedure that has
-- one, so every name and operator here is schema-qualified.
CREATE OR REPLACE PROCEDURE shardid.rebalance(
    strategy text DEFAULT 'by_size',
    max_moves integer DEFAULT NULL,
    excluded_shards integer[] DEFAULT '{}',
    drop_old boolean DEFAULT false,
    lock_timeout interval DEFAULT '10 s',
    cutover_timeout interval DEFAULT '30 s',
    catchup_timeout interval DEFAULT '1 day',
    node_timeout interval DEFAULT '30 s')
    LANGUAGE plpgsql
AS $$
DECLARE
    lock_key CONSTANT integer := pg_catalog.hashtext('shardid-rebalance');
    holder   integer;
    left_over record;
    next_move record;
    moved    integer[] := '{}';
    made     integer := 0;
BEGIN
    PERFORM shardid._check_rebalance_options(strategy, max_moves);
    -- Fails at once (2D000, invalid transaction termination) inside a
    -- transaction block or a function, before anything is done.
    COMMIT;

    IF NOT EXISTS (SELECT FROM pg_catalog.pg_locks AS l
                    WHERE l.locktype OPERATOR(pg_catalog.=) 'advisory'
                      AND l.pid OPERATOR(pg_catalog.=) pg_catalog.pg_backend_pid()
                      AND l.classid OPERATOR(pg_catalog.=) lock_key::pg_catalog.oid
                      AND l.objid OPERATOR(pg_catalog.=) 0::pg_catalog.oid
                      AND l.objsubid OPERATOR(pg_catalog.=) 2 AND l.granted)
       AND NOT pg_catalog.pg_try_advisory_lock(lock_key, 0) THEN
        SELECT l.pid INTO holder FROM pg_catalog.pg_locks AS l
         WHERE l.locktype OPERATOR(pg_catalog.=) 'advisory'
           AND l.classid OPERATOR(pg_catalog.=) lock_key::pg_catalog.oid
           AND l.objid OPERATOR(pg_catalog.=) 0::pg_catalog.oid
           AND l.objsubid OPERATOR(pg_catalog.=) 2 AND l.granted;
        RAISE EXCEPTION 'another rebalance is running'
            USING ERRCODE = 'lock_not_available',
                  DETAIL = pg_catalog.format('The router session with process ID %s holds the rebalance lock.', holder),
                  HINT = 'Wait for it to finish, or cancel it (pg_cancel_backend); a rebalance that failed keeps the lock until its session ends.';
    END IF;

    -- Moves left in progress first, lowest shard first.
    FOR left_over IN
        SELECT m.shard, m.target, m.phase, m.mode FROM shardid.shard_moves AS m ORDER BY m.shard
    LOOP
        IF left_over.phase OPERATOR(pg_catalog.=) 'aborting' THEN
            RAISE NOTICE 'rebalance: finishing the rollback of the move of shard % to node "%"', left_over.shard, left_over.target;
            CALL shardid.abort_move(left_over.shard);
        ELSIF left_over.mode OPERATOR(pg_catalog.=) 'offline' THEN
            PERFORM pg_catalog.pg_advisory_unlock(lock_key, 0);
            RAISE EXCEPTION 'the offline move of shard % to node "%" is in progress (phase %)',
                            left_over.shard, left_over.target, left_over.phase
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = 'An offline move copies the shard''s rows from a client; rebalance() cannot finish it.',
                      HINT = pg_catalog.format('Finish it with bin/shardid-move-shard --shard %s --to %s --offline, or roll it back with CALL shardid.abort_move(%s);',
                                               left_over.shard, left_over.target, left_over.shard);
        ELSE
            EXIT WHEN max_moves IS NOT NULL AND made OPERATOR(pg_catalog.>=) max_moves;
            RAISE NOTICE 'rebalance: resuming the move of shard % to node "%" (phase %)', left_over.shard, left_over.target, left_over.phase;
            CALL shardid.move_shard(left_over.shard, left_over.target, drop_old => drop_old,
                                    lock_timeout => lock_timeout, cutover_timeout => cutover_timeout,
                                    catchup_timeout => catchup_timeout, node_timeout => node_timeout);
            PERFORM shardid._check_move_done(left_over.shard, left_over.target);
            made := made OPERATOR(pg_catalog.+) 1;
            moved := moved OPERATOR(pg_catalog.||) left_over.shard;
        END IF;
        COMMIT;
    END LOOP;

    -- Then the plan, re-made before each move.
    LOOP
        IF max_moves IS NOT NULL AND made OPERATOR(pg_catalog.>=) max_moves THEN
            PERFORM pg_catalog.pg_advisory_unlock(lock_key, 0);
            RAISE NOTICE 'rebalance: stopped at max_moves (moves made: %): CALL rebalance() again for more', made;
            RETURN;
        END IF;
        SELECT p.shard, p.source, p.target, p.bytes INTO next_move
          FROM shardid.rebalance_plan(strategy, 1, COALESCE(excluded_shards, '{}') OPERATOR(pg_catalog.||) moved) AS p;
        EXIT WHEN NOT FOUND;
        RAISE NOTICE 'rebalance: shard % from node "%" to node "%"%', next_move.shard, next_move.source, next_move.target,
            CASE WHEN next_move.bytes IS NULL THEN ''
                 ELSE pg_catalog.format(' (%s)', pg_catalog.pg_size_pretty(next_move.bytes)) END;
        CALL shardid.move_shard(next_move.shard, next_move.target, drop_old => drop_old,
                                lock_timeout => lock_timeout, cutover_timeout => cutover_timeout,
                                catchup_timeout => catchup_timeout, node_timeout => node_timeout);
        PERFORM shardid._check_move_done(next_move.shard, next_move.target);
        made := made OPERATOR(pg_catalog.+) 1;
        moved := moved OPERATOR(pg_catalog.||) next_move.shard;
        COMMIT;
    END LOOP;

    PERFORM pg_catalog.pg_advisory_unlock(lock_key, 0);
    IF made OPERATOR(pg_catalog.=) 0 THEN
        RAISE NOTICE 'rebalance: balanced: nothing to move';
    ELSE
        RAISE NOTICE 'rebalance: balanced (moves made: %)', made;
    END IF;
END
$$;

REVOKE ALL ON PROCEDURE shardid.rebalance(text, integer, integer[], boolean, interval, interval, interval, interval) FROM PUBLIC;

COMMENT ON PROCEDURE shardid.rebalance(text, integer, integer[], boolean, interval, interval, interval, interval) IS
    'Router: moves shards one at a time with move_shard(), re-planned by rebalance_plan() before each, committing after each, until balanced or max_moves; resumes a move left in progress first; stops at the first failure (CALL it again to go on). The move options are passed to move_shard().';
CREATE OR REPLACE FUNCTION shardid.create_time_partitions(parent regclass, from_time timestamptz,
                                               to_time timestamptz, every interval)
    RETURNS SETOF regclass
    LANGUAGE plpgsql STRICT
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    max_partitions CONSTANT integer := 1000;
    nsp name;
    relname name;
    key_type regtype;
    fmt text;
    t timestamptz;
    n integer := 0;
    part name;
    existing regclass;
BEGIN
    SELECT n.nspname, c.relname, a.atttypid::regtype INTO nsp, relname, key_type
      FROM pg_class AS c
      JOIN pg_namespace AS n ON n.oid = c.relnamespace
      JOIN pg_partitioned_table AS pt ON pt.partrelid = c.oid
      LEFT JOIN pg_attribute AS a ON a.attrelid = c.oid AND a.attnum = pt.partattrs[0]
     WHERE c.oid = parent AND pt.partstrat = 'r' AND pt.partnatts = 1;
    IF key_type IS DISTINCT FROM 'bigint'::regtype THEN
        RAISE EXCEPTION 'table % is not partitioned by range on one bigint column', parent
            USING ERRCODE = 'wrong_object_type',
                  HINT = 'Create it with PARTITION BY RANGE (id), id being the bigint ID column.';
    END IF;
    IF from_time >= to_time OR from_time + every <= from_time THEN
        RAISE EXCEPTION 'no partitions from % to % every %', from_time, to_time, every
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'from_time must be before to_time, and every must be positive.';
    END IF;
    -- partition names: parent_pYYYYMMDD, with _HH24MI when partitions are shorter than a day
    fmt := CASE WHEN from_time + every < from_time + interval '1 day' THEN '"_p"YYYYMMDD"_"HH24MI'
                ELSE '"_p"YYYYMMDD' END;
    t := from_time;
    WHILE t < to_time LOOP
        n := n + 1;
        IF n > max_partitions THEN
            RAISE EXCEPTION 'more than % partitions from % to % every %', max_partitions, from_time, to_time, every
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Create them in several calls, or with a longer interval.';
        END IF;
        -- the parent's name cut at a character boundary, so that the suffix
        -- (and with it the name's uniqueness) survives in 63 bytes
        part := shardid._fit_name(relname, to_char(t, fmt));
        existing := to_regclass(format('%I.%I', nsp, part));
        IF existing IS NULL THEN
            EXECUTE format('CREATE TABLE %I.%I PARTITION OF %s FOR VALUES FROM (%s) TO (%s)',
                           nsp, part, parent, shardid.time_to_id(t), shardid.time_to_id(t + every));
            RETURN NEXT format('%I.%I', nsp, part)::regclass;
        ELSIF NOT EXISTS (SELECT FROM pg_inherits AS i
                           WHERE i.inhrelid = existing AND i.inhparent = parent) THEN
            -- another table took the name (one whose name starts with the
            -- same 63 bytes less the suffix, say): never take it for ours
            RAISE EXCEPTION 'relation %.% already exists and is not a partition of %',
                    quote_ident(nsp), quote_ident(part), parent
                USING ERRCODE = 'duplicate_table',
                      HINT = 'Rename one of the tables: partition names are the parent''s name, cut to fit 63 bytes, and _pYYYYMMDD.';
        END IF;
        t := t + every;
    END LOOP;
END
$$;

COMMENT ON FUNCTION shardid.create_time_partitions(regclass, timestamptz, timestamptz, interval) IS
    'Creates the partitions [t, t + every) for t from from_time until to_time of a table partitioned by RANGE on its bigint ID, with time_to_id() bounds, named parent_pYYYYMMDD (the parent''s name cut at a character boundary to fit 63 bytes); skips its partitions that exist, refuses a name another table holds, and returns those it created.';
-- Every generator that a column DEFAULT names, with the tables it serves and
-- its state. The catalog finds the DEFAULTs shardid.next_id(shard, seq)
-- without the shard registry (shardid._next_id_defaults); a generator's
-- shard is NULL unless every DEFAULT naming it has the same literal.
-- Partitions count as their partitioned table.
--
-- SECURITY DEFINER so that a monitoring role (pg_monitor) reads the states
-- without a privilege on each sequence, and only to that role: it reads the
-- state of these sequences and of no other, and takes no argument. States
-- of temporary and unlogged sequences (next_id() refuses them) are not read.
CREATE OR REPLACE FUNCTION shardid._generator_states()
    RETURNS TABLE (schema name, sequence name, shard integer, tables pg_catalog.regclass[], state bigint)
    LANGUAGE sql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT n.nspname, s.relname,
           CASE WHEN pg_catalog.count(g.shard) = pg_catalog.count(*)
                 AND pg_catalog.min(g.shard) = pg_catalog.max(g.shard)
                THEN pg_catalog.min(g.shard) END,
           pg_catalog.array_agg(DISTINCT g.tbl),
           CASE WHEN s.relpersistence = 'p'
                THEN pg_catalog.pg_sequence_last_value(s.oid::pg_catalog.regclass) END
      FROM (SELECT nd.seq,
                   COALESCE(pg_catalog.pg_partition_root(nd.rel), nd.rel::pg_catalog.regclass) AS tbl,
                   nd.shard
              FROM shardid._next_id_defaults AS nd
              JOIN pg_catalog.pg_attribute AS a
                ON a.attrelid = nd.rel AND a.attnum = nd.attnum
              JOIN pg_catalog.pg_class AS t ON t.oid = nd.rel
             WHERE t.relkind IN ('r', 'p') AND NOT a.attisdropped) AS g
      JOIN pg_catalog.pg_class AS s
        ON s.oid = g.seq AND s.relkind = 'S'
      JOIN pg_catalog.pg_namespace AS n ON n.oid = s.relnamespace
     GROUP BY n.nspname, s.relname, s.oid, s.relpersistence
$$;

REVOKE ALL ON FUNCTION shardid._generator_states() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION shardid._generator_states() TO pg_monitor;

COMMENT ON FUNCTION shardid._generator_states() IS
    'Internal (for shardid.generators): every generator sequence a column DEFAULT shardid.next_id(shard, seq) names, its shard, the tables it serves and its raw state; read as the extension owner, executable by pg_monitor.';
-- Generator health, for monitoring: one row per generator that a column
-- DEFAULT names. A burst of more than ids_per_ms IDs in a millisecond
-- carries a generator's state ahead of the clock (lead), up to
-- shardid.max_drift, where next_id() starts to wait; a lead beyond it means
-- the clock stepped back. time_left is how long the layout can still issue
-- IDs. Times are measured from now(), the start of the transaction.
--
-- Readable by superusers and pg_monitor, as the states are sequence values,
-- which PostgreSQL shows only to roles with a privilege on the sequence
-- (shardid.shards shows the registered shards to everyone, with a state
-- only where the reader has that privilege).
CREATE OR REPLACE VIEW shardid.generators AS
SELECT g.schema,
       g.sequence,
       g.shard,
       g.tables,
       st.ts AS last_time,
       CASE WHEN st.ts IS NOT NULL THEN
           GREATEST(st.ts OPERATOR(pg_catalog.-) pg_catalog.now(), '0'::interval)
       END AS lead,
       st.seq::bigint OPERATOR(pg_catalog.+) 1 AS ids_in_ms,
       l.ids_per_ms,
       l.last_time AS layout_end,
       l.last_time OPERATOR(pg_catalog.-) pg_catalog.now() AS time_left
  FROM shardid._generator_states() AS g
 CROSS JOIN shardid.layout() AS l
 CROSS JOIN LATERAL shardid._state_decode(g.state) AS st;

REVOKE ALL ON shardid.generators FROM PUBLIC;
GRANT SELECT ON shardid.generators TO pg_monitor;

COMMENT ON VIEW shardid.generators IS
    'Generator health: every generator a column DEFAULT shardid.next_id(shard, seq) names, its shard and tables, the time of its last ID, its lead over now() (left by bursts), the IDs it issued in that millisecond, and the layout''s end. Readable by pg_monitor.';
COMMENT ON COLUMN shardid.generators.schema IS 'Schema of the generator sequence.';
COMMENT ON COLUMN shardid.generators.sequence IS 'The generator sequence.';
COMMENT ON COLUMN shardid.generators.shard IS 'The shard its DEFAULTs issue IDs for (NULL unless they all name the same literal shard).';
COMMENT ON COLUMN shardid.generators.tables IS 'The tables whose column DEFAULT names the generator (partitions as their partitioned table).';
COMMENT ON COLUMN shardid.generators.last_time IS 'Time of the generator''s state: of the last ID it issued (NULL before the first, or for a state outside the layout).';
COMMENT ON COLUMN shardid.generators.lead IS 'How far last_time is ahead of now(): the drift a burst left (0 when not ahead). Capped by shardid.max_drift unless the clock stepped back.';
COMMENT ON COLUMN shardid.generators.ids_in_ms IS 'IDs issued in the millisecond of last_time, out of ids_per_ms.';
COMMENT ON COLUMN shardid.generators.ids_per_ms IS 'IDs a generator can issue per millisecond (2^seq_bits).';
COMMENT ON COLUMN shardid.generators.layout_end IS 'The last time the layout can represent: no ID can be issued after it.';
COMMENT ON COLUMN shardid.generators.time_left IS 'layout_end - now(): how long the layout can still issue IDs.';
