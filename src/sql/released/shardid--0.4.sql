-- shardid's install script: its areas, in the order they install. Each
-- area's install.sql lists its objects (one file each) in order; an area
-- calls only into itself, common/ and the areas before it (test/lint/run
-- checks it); router/ subfolders hold what runs on the router. make
-- assembles build/shardid--VERSION.sql from this file and the upgrade
-- script from src/sql/updates/PREV--VERSION.sql followed by every
-- function, procedure and view named here (src/sql/include.awk).
-- shardid's common floor: what several areas use, installed first, calling
-- into no area. Every object is schema-qualified so a hostile search_path
-- cannot hijack it.
--
-- Both sides: the install-time schema check and shardid_internal; the one
-- fence for a table owner's code (_run_as_owner: a security-restricted
-- operation as the owner, never SET ROLE); errors (_raise); procedures'
-- COMMIT checks and batch progress (_require_commit, _commit_allowed,
-- _require_batch_size, _batch_progress); privileges (_acl_*, _apply_acl,
-- _grantee; _privilege_steps and _align_privileges: shards follow their
-- templates' privileges);
-- the registry of logical shards and sharded tables (shard_registry,
-- sharded_tables: extension configuration tables, so pg_dump carries
-- them); the checks of a sharded table's template; the parser of an
-- apply_ddl() command (_ddl_command, _ddl_template).
--
-- router/: the router's ledgers (nodes, shard_placement, shard_moves,
-- session_locks) and its connections to the nodes over dblink (_node*,
-- _pinned_connstr: search_path pinned to pg_catalog, pg_temp for the whole
-- session), and the locks held across commits (_session_lock).

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
-- The schema of shardid's internal helpers (every function, procedure and
-- view whose name begins with "_"), out of the way of \df shardid.* and of
-- a user's tab completion, as Citus keeps citus_internal: the schema
-- shardid holds what docs/reference.md documents for users. Its functions
-- are revoked from PUBLIC one by one (sql/internal_functions.sql lists the
-- few that PUBLIC's calls need); USAGE lets the public functions that
-- call them run for every role. Made by the extension, so one that exists
-- already (anyone's) stops CREATE EXTENSION and the update.
CREATE SCHEMA shardid_internal;

GRANT USAGE ON SCHEMA shardid_internal TO PUBLIC;

COMMENT ON SCHEMA shardid_internal IS
    'shardid''s internal helpers (names beginning with "_"), not for direct use; see docs/reference.md, "Internal functions".';
-- Generated names (partitions, retired shards, publications, slots) must fit
-- PostgreSQL's 63 bytes: PostgreSQL would cut base || suffix at byte 63,
-- dropping the suffix (so two names collide) and possibly splitting a
-- multibyte character. This cuts the base instead, at a character boundary.
CREATE OR REPLACE FUNCTION shardid_internal._fit_name(base text, suffix text) RETURNS name
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
COMMENT ON FUNCTION shardid_internal._fit_name(text, text) IS
    'Internal: base || suffix in at most 63 bytes, base cut at a character boundary so the suffix survives. Used by create_time_partitions().';
-- Every column DEFAULT that calls shardid.next_id(), with the generator it
-- names, for _generator_states(), sync_generators() and
-- _refuse_issued_layout(): the catalog query that finds generators without
-- the shard registry, written once. A DEFAULT depends on the function and on
-- its sequence (a regclass constant); seq is every pg_class object the
-- DEFAULT depends on (its own table too), so readers keep the sequences
-- (relkind 'S'). The shard is read from the DEFAULT's text (NULL unless it
-- is a literal). It is in common/ (the layout freeze reads it, before the
-- generator is installed), so it names next_id() by to_regprocedure() at
-- run time rather than by a regprocedure constant that needs the function
-- first.
--
-- A view, not a function: the planner inlines it into each query, which
-- then plans as if the joins were written there (a SQL function with SET
-- search_path or SECURITY DEFINER would not be inlined). It shows only what
-- pg_catalog shows everyone (pg_attrdef, pg_depend, pg_get_expr()), so
-- PUBLIC may read it: sync_generators() runs as its caller.
CREATE OR REPLACE VIEW shardid_internal._next_id_defaults AS
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
   AND fdep.refobjid OPERATOR(pg_catalog.=) pg_catalog.to_regprocedure('shardid.next_id(integer, pg_catalog.regclass)')
  JOIN pg_catalog.pg_depend AS sdep
    ON sdep.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_attrdef'::pg_catalog.regclass
   AND sdep.objid OPERATOR(pg_catalog.=) d.oid
   AND sdep.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass;

GRANT SELECT ON shardid_internal._next_id_defaults TO PUBLIC;

COMMENT ON VIEW shardid_internal._next_id_defaults IS
    'Internal (for _generator_states(), sync_generators() and _refuse_issued_layout()): every column DEFAULT that calls shardid.next_id(), its table, column, the pg_class objects it depends on (seq: keep relkind S) and its literal shard. Readable by PUBLIC: it shows only what pg_catalog shows everyone.';
-- The registered shards: one schema and one generator sequence each.
CREATE TABLE shardid.shard_registry (
    shard           integer PRIMARY KEY CHECK (shard OPERATOR(pg_catalog.>=) 0),
    schema_name     name    NOT NULL UNIQUE,
    sequence_schema name    NOT NULL,
    sequence_name   name    NOT NULL
);

SELECT pg_catalog.pg_extension_config_dump('shardid.shard_registry', '');

GRANT SELECT ON shardid.shard_registry TO PUBLIC;

COMMENT ON TABLE shardid.shard_registry IS
    'Registered logical shards: shard number, its schema and its generator sequence. Written by create_shard(), attach_shard(), adopt(), detach_shard().';
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

COMMENT ON TABLE shardid.sharded_tables IS
    'Tables created in every shard by create_table(): name, template, id column, creation order.';
-- Whether the procedure that calls it may COMMIT (see src/pg/module.cpp).
-- Called directly from a procedure's body: from inside another function it
-- would always answer false, since functions cannot commit.
CREATE OR REPLACE FUNCTION shardid_internal._commit_allowed() RETURNS boolean
    LANGUAGE c VOLATILE PARALLEL UNSAFE AS 'MODULE_PATHNAME', 'shardid_commit_allowed';

COMMENT ON FUNCTION shardid_internal._commit_allowed() IS
    'True when called from a procedure CALLed on its own, which may COMMIT; false inside a transaction block, a function or a subtransaction.';
-- The refusal every procedure of shardid starts with, since each commits as
-- it goes: 25001 "<caller> cannot run inside a transaction block" unless
-- allowed. Called as the first statement of a procedure's body, with
-- shardid_internal._commit_allowed() as its first argument: the procedure's
-- own statement evaluates that argument before this function runs (inside
-- any function, _commit_allowed() would answer false). commits says when
-- the procedure commits ("after every batch"), for the DETAIL.
CREATE OR REPLACE FUNCTION shardid_internal._require_commit(allowed boolean, caller text, commits text,
                                                            hint text DEFAULT 'CALL it on its own (autocommit).')
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT allowed THEN
        RAISE EXCEPTION '% cannot run inside a transaction block', caller
            USING ERRCODE = 'active_sql_transaction',
                  DETAIL = format('It commits %s, which a CALL inside BEGIN ... COMMIT, a function, an EXCEPTION block or a multi-statement query string cannot do.', commits),
                  HINT = hint;
    END IF;
END
$$;

COMMENT ON FUNCTION shardid_internal._require_commit(boolean, text, text, text) IS
    'The procedures: raises 25001 (caller cannot run inside a transaction block, with when it commits and a hint) unless allowed, which is _commit_allowed() evaluated by the procedure''s own statement.';
-- Refuses a batch size of the *_proc procedures below 1, before their first
-- batch. Callers have refused NULL with their own name in the message.
CREATE OR REPLACE FUNCTION shardid_internal._require_batch_size(batch_size integer) RETURNS void
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

COMMENT ON FUNCTION shardid_internal._require_batch_size(integer) IS
    'Raises 22023 if the batch size of create_shards_proc() or create_table_proc() is below 1.';
-- The batch procedures (create_shards_proc, create_table_proc, apply_ddl),
-- after a commit: counts what it committed (done: {items, batches}, made
-- items more) and reports it as caller: every batch, or, with every,
-- each time the items done pass a multiple of every (batches whose size
-- varies: apply_ddl's, bounded by time, or items done one at a time).
-- Returns the counts.
CREATE OR REPLACE FUNCTION shardid_internal._batch_progress(caller text, items text, done integer[], made integer, todo integer,
                                                            every integer DEFAULT NULL) RETURNS integer[]
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    done := ARRAY[done[1] + made, done[2] + 1];
    IF every IS NULL THEN
        RAISE NOTICE '%: batch % committed: % of % % done', caller, done[2], done[1], todo, items;
    ELSIF done[1] / every > (done[1] - made) / every THEN
        RAISE NOTICE '%: % of % % done', caller, done[1], todo, items;
    END IF;
    RETURN done;
END
$$;

COMMENT ON FUNCTION shardid_internal._batch_progress(text, text, integer[], integer, integer, integer) IS
    'The batch procedures: counts the items and batches committed and reports them (every batch, or each time the items done pass a multiple of every); returns the counts. Executable by PUBLIC (the procedures call it).';
-- Refuses to go on if the template of one sharded table has gone, before a
-- shard gets the table: for _require_templates() (every sharded table) and
-- each batch of create_table_proc() (its own).
CREATE OR REPLACE FUNCTION shardid_internal._require_template(t shardid.sharded_tables) RETURNS void
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

COMMENT ON FUNCTION shardid_internal._require_template(shardid.sharded_tables) IS
    'Raises 55000 if the template of the given sharded table has been dropped.';
-- Refuses to go on if a sharded table's template has gone, before a shard
-- gets any table (_require_template() of each, in order).
CREATE OR REPLACE FUNCTION shardid_internal._require_templates() RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t shardid.sharded_tables;
BEGIN
    FOR t IN SELECT * FROM shardid.sharded_tables ORDER BY position LOOP
        PERFORM shardid_internal._require_template(t);
    END LOOP;
END
$$;

COMMENT ON FUNCTION shardid_internal._require_templates() IS
    'Raises 55000 if the template of a sharded table has been dropped.';
-- A connect string as libpq parses it (src/pg/connstr.cpp).
CREATE OR REPLACE FUNCTION shardid_internal._connstr_options(connstr text, OUT keyword text, OUT value text, OUT secret boolean)
    RETURNS SETOF record
    LANGUAGE c IMMUTABLE STRICT AS 'MODULE_PATHNAME', 'shardid_connstr_options';

REVOKE ALL ON FUNCTION shardid_internal._connstr_options(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._connstr_options(text) IS
    'Internal: the options a libpq connect string (key=value or URI) sets, as libpq''s PQconninfoParse() reads them; secret for those libpq hides (password, sslpassword, ...). 22023 if libpq cannot parse it.';
-- The secret a node connect string holds, as libpq reads it, or NULL. A
-- dbname that libpq takes for a connect string of its own (a URI, or text
-- with "=") is searched as well; one that libpq cannot parse counts as a
-- secret, since its text would show wherever the connect string does. A
-- string libpq cannot parse at all raises 22023. Used by add_node() and by
-- the CHECK on shardid.nodes. Not PARALLEL SAFE: its exception block is a
-- subtransaction.
CREATE OR REPLACE FUNCTION shardid_internal._connstr_secret(connstr text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    o     record;
    found text;
BEGIN
    FOR o IN SELECT * FROM shardid_internal._connstr_options(connstr) LOOP
        IF o.secret THEN
            RETURN o.keyword;
        END IF;
        IF o.keyword = 'dbname'
           AND (o.value ~ '^postgres(ql)?://'
                OR pg_catalog.strpos(o.value, '=') > 0) THEN
            BEGIN
                found := shardid_internal._connstr_secret(o.value);
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

REVOKE ALL ON FUNCTION shardid_internal._connstr_secret(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._connstr_secret(text) IS
    'Internal: the secret a libpq connect string holds (password, sslpassword, ..., also in a dbname that is itself a connect string), NULL if none; 22023 if libpq cannot parse it. For add_node() and the CHECK on shardid.nodes.';
-- The data nodes: a name and a libpq key=value connect string, which holds
-- no secret as libpq reads it (shardid_internal._connstr_secret(), defined before).
CREATE TABLE shardid.nodes (
    node     text PRIMARY KEY
             CHECK (node OPERATOR(pg_catalog.~) '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,62}$'),
    connstr  text NOT NULL
             CONSTRAINT nodes_connstr_no_password
             CHECK (shardid_internal._connstr_secret(connstr) IS NULL),
    added_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    -- false: plans move no shard onto it (set_node(); drain_node() sets it)
    accepts_shards boolean NOT NULL DEFAULT true
);

SELECT pg_catalog.pg_extension_config_dump('shardid.nodes', '');

-- administrators only (an explicit ACL, as an update from 0.1 leaves it)
REVOKE SELECT ON shardid.nodes FROM PUBLIC;

COMMENT ON TABLE shardid.nodes IS
    'Router: the data nodes, by name, with a libpq key=value connect string (never a password). Whether it accepts shards (rebalance and drain plans move none onto it when not). Written by add_node(), set_node(), remove_node(). Readable by administrators only.';
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

COMMENT ON TABLE shardid.shard_placement IS
    'Router: the node holding each placed logical shard; frozen (read-only through the router) by freeze_shard().';
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
-- Router: the locks a move and a rebalance hold across their commits, one
-- row per lock ('move <shard>', 'rebalance'): the backend that holds it,
-- by process ID and start time. A lock whose backend is gone (terminated,
-- crashed, the router restarted) is free: the next taker replaces the row
-- (_session_lock). Only administrators may write or lock these rows, so,
-- unlike the advisory locks of 0.2 (fixed keys any role could take first),
-- no role without privileges on shardid's objects can block a move or a
-- rebalance. Not dumped: a restored router holds no lock.
CREATE TABLE shardid.session_locks (
    lock_name     text PRIMARY KEY,
    pid           integer NOT NULL,
    backend_start timestamptz NOT NULL,
    taken_at      timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp()
);

COMMENT ON TABLE shardid.session_locks IS
    'Router: locks held across commits by a move (move <shard>) or a rebalance (rebalance): the holding backend''s process ID and start; free once that backend is gone. Writable by administrators only.';
-- Node: runs one statement for each table of a schema whose relkind is in
-- kinds (any relation with kinds NULL) and, if trigger is given, that has
-- a trigger of that name, in name order; returns how many. The statement is
-- format(sql, schema, table, args[1], args[2], ...): names go in with %I,
-- values with %L, never pasted into the SQL text.
CREATE OR REPLACE FUNCTION shardid_internal._for_tables(schema_name name, kinds "char"[], sql text, args text[] DEFAULT '{}',
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

REVOKE ALL ON FUNCTION shardid_internal._for_tables(name, "char"[], text, text[], name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._for_tables(name, "char"[], text, text[], name) IS
    'Node: runs format(sql, schema, table, args[1], ...) for each table of a schema of the given relkinds (and with the given trigger), in name order; returns how many.';
-- Raises an error from its parts (as GET STACKED DIAGNOSTICS gives them),
-- leaving out an empty detail or hint (PL/pgSQL's RAISE refuses NULL
-- options and prints empty ones), and without CONTEXT lines: the error is
-- the one of the call the user made, not of shardid's helpers
-- (src/pg/raise.cpp).
CREATE OR REPLACE FUNCTION shardid_internal._raise(sqlstate text, message text, detail text DEFAULT NULL, hint text DEFAULT NULL)
    RETURNS void
    LANGUAGE c VOLATILE
    AS 'MODULE_PATHNAME', 'shardid_raise';

-- Raising an error grants nothing: executable by PUBLIC, so that code run
-- with the caller's rights (the event trigger shardid_template_drop) may
-- call it.
REVOKE ALL ON FUNCTION shardid_internal._raise(text, text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION shardid_internal._raise(text, text, text, text) TO PUBLIC;

COMMENT ON FUNCTION shardid_internal._raise(text, text, text, text) IS
    'Internal: raises an error from SQLSTATE, message, detail and hint, leaving out empty ones, without CONTEXT lines of shardid''s helpers. Executable by PUBLIC.';
-- The one fence: runs one statement of shardid's as the role that owns
-- what it touches, in a security-restricted operation, never as the
-- superuser who calls it (src/pg/run_as.cpp): the tenant code that
-- changing a table or writing, emptying or reading a shard's rows runs
-- (triggers, CHECKs, index expressions, defaults, domains, policies) has
-- the owner's rights and cannot SET ROLE back. Moves, apply_ddl() and the
-- copy of a shard's privileges use it. search_path pinned; replica:
-- session_replication_role = replica (superusers only). Executable by
-- PUBLIC (apply_ddl() runs as a table's owner for its members): the
-- caller needs the privileges of the role, as SET ROLE would.
CREATE OR REPLACE FUNCTION shardid_internal._run_as_owner(role regrole, sql text, replica boolean DEFAULT false) RETURNS text
    LANGUAGE c VOLATILE STRICT AS 'MODULE_PATHNAME', 'shardid_run_as_owner';

COMMENT ON FUNCTION shardid_internal._run_as_owner(regrole, text, boolean) IS
    'The one fence for a table owner''s code: runs a statement as a role (the owner of what it touches) in a security-restricted operation, search_path pinned, optionally with session_replication_role = replica (superusers only); returns its first value as text. The caller needs the role''s privileges.';

-- The same fence for a read (run_on_shards()): the statement runs with the
-- transaction read-only (src/pg/run_as.cpp), so that a "read" that
-- writes through a function (setval(), an INSERT in a function) is
-- refused (25006). Executable by PUBLIC, as _run_as_owner().
CREATE OR REPLACE FUNCTION shardid_internal._run_as_owner_read(role regrole, sql text) RETURNS text
    LANGUAGE c VOLATILE STRICT AS 'MODULE_PATHNAME', 'shardid_run_as_owner_read';

COMMENT ON FUNCTION shardid_internal._run_as_owner_read(regrole, text) IS
    'The one fence, for a read: runs a statement as a role in a security-restricted operation, search_path pinned, with the transaction read-only (a write through a function is refused, 25006); returns its first value as text. The caller needs the role''s privileges.';
-- An index as the catalog defines it, for another table: the CREATE INDEX
-- that makes it, under its own name, on table target; with no target, its
-- shape (the definition without its name and table: CREATE [UNIQUE] INDEX
-- ON [ONLY] USING ...), so that the same index of two tables (a template
-- and a shard's copy, or a shard on two nodes) compares equal. Read with
-- pg_get_indexdef() under the pinned search_path, so every name outside
-- pg_catalog is written with its schema as it is; the definition's head
-- (CREATE [UNIQUE] INDEX name ON [ONLY] schema.table USING) is built from
-- the catalog, checked and cut off, and the target's name is taken from
-- the catalog: no name is searched for or replaced in the text.
CREATE OR REPLACE FUNCTION shardid_internal._index_statement(index oid, target regclass DEFAULT NULL) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    def   text := pg_catalog.pg_get_indexdef(index);
    uniq  text;
    head  text;
    only_ text;
    i     record;
BEGIN
    SELECT ic.relname AS name, x.indisunique, n.nspname, t.relname
      INTO i
      FROM pg_catalog.pg_index AS x
      JOIN pg_catalog.pg_class AS ic ON ic.oid OPERATOR(pg_catalog.=) x.indexrelid
      JOIN pg_catalog.pg_class AS t ON t.oid OPERATOR(pg_catalog.=) x.indrelid
      JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) t.relnamespace
     WHERE x.indexrelid OPERATOR(pg_catalog.=) index;
    IF NOT FOUND OR def IS NULL THEN
        RETURN NULL;
    END IF;
    uniq := CASE WHEN i.indisunique THEN 'UNIQUE ' ELSE '' END;
    FOREACH only_ IN ARRAY ARRAY['', 'ONLY '] LOOP
        head := pg_catalog.format('CREATE %sINDEX %I ON %s%I.%I USING ', uniq, i.name, only_, i.nspname, i.relname);
        IF pg_catalog.starts_with(def, head) THEN
            IF target IS NULL THEN
                RETURN pg_catalog.format('CREATE %sINDEX ON %sUSING %s', uniq, only_,
                                         pg_catalog.substr(def, pg_catalog.length(head) OPERATOR(pg_catalog.+) 1));
            END IF;
            RETURN (SELECT pg_catalog.format('CREATE %sINDEX %I ON %s%I.%I USING %s', uniq, i.name, only_, n.nspname, c.relname,
                                             pg_catalog.substr(def, pg_catalog.length(head) OPERATOR(pg_catalog.+) 1))
                      FROM pg_catalog.pg_class AS c JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
                     WHERE c.oid OPERATOR(pg_catalog.=) target);
        END IF;
    END LOOP;
    RAISE EXCEPTION 'shardid: cannot read the definition of index %', index::regclass
        USING ERRCODE = 'internal_error',
              DETAIL = pg_catalog.format('pg_get_indexdef() gave %s', pg_catalog.to_jsonb(def)::text);
END
$$;

-- EXECUTE stays with PUBLIC, as _index_list()'s: _create_shard_table() reads it with the caller's rights.

COMMENT ON FUNCTION shardid_internal._index_statement(oid, regclass) IS
    'An index from the catalog: the CREATE INDEX that makes it under its name on table target, or without a target its shape (definition without name and table), built from parsed parts, never by replacing names in text.';
-- Privileges as one comparable string: sorted words grantee:PRIVILEGE[*]/grantor
-- ("*" for WITH GRANT OPTION, PUBLIC for grantee 0). A NULL ACL is the
-- default of its object kind (kind 'r', 's', 'n'; NULL for column ACLs,
-- whose default is none). ignore_role leaves out the grants to one role
-- (the 15 subscription role of a move, see _move_subscribe).
-- search_path is pinned: every name below resolves in pg_catalog.
CREATE OR REPLACE FUNCTION shardid_internal._acl_words(acl aclitem[], kind "char", owner oid, ignore_role name DEFAULT NULL)
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

REVOKE ALL ON FUNCTION shardid_internal._acl_words(aclitem[], "char", oid, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._acl_words(aclitem[], "char", oid, name) IS
    'Internal: an ACL (NULL: the kind''s default) as sorted words grantee:PRIVILEGE[*]/grantor, leaving out one role if given.';
-- An ACL (NULL: the kind's default; kind NULL for column ACLs) as a JSON
-- array of {grantee, privilege, grantable, grantor}, grantee null for
-- PUBLIC, for _apply_acl() on another node: role names, never OIDs.
CREATE OR REPLACE FUNCTION shardid_internal._acl_items(acl aclitem[], kind "char", owner oid) RETURNS jsonb
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

REVOKE ALL ON FUNCTION shardid_internal._acl_items(aclitem[], "char", oid) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._acl_items(aclitem[], "char", oid) IS
    'Internal: an ACL as a JSON array of {grantee, privilege, grantable, grantor} (role names), for _apply_acl() on another node.';
-- Gives an object exactly the privileges of a list made by _acl_items()
-- on another node: everything is revoked (also from the owner), then each
-- item granted, by its grantor (grants the owner made first, so a grant
-- option exists before it is used): a grant of another grantor than the
-- owner runs as that role (_run_as_owner), since a superuser's own GRANT
-- is recorded as the owner's. Run by a superuser. column: the column's
-- privileges instead of the object's.
CREATE OR REPLACE FUNCTION shardid_internal._apply_acl(kind text, object text, owner name, items jsonb, column_name name DEFAULT NULL)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    i    jsonb;
    sql  text;
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
        sql := format('GRANT %s%s ON %s %s TO %s%s', i->>'privilege', cols, kind, object,
                      COALESCE(quote_ident(i->>'grantee'), 'PUBLIC'),
                      CASE WHEN (i->>'grantable')::boolean THEN ' WITH GRANT OPTION' ELSE '' END);
        IF i->>'grantor' IS DISTINCT FROM owner THEN
            PERFORM shardid_internal._run_as_owner(quote_ident(i->>'grantor')::regrole, sql);
        ELSE
            EXECUTE sql;
        END IF;
    END LOOP;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._apply_acl(text, text, name, jsonb, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_acl(text, text, name, jsonb, name) IS
    'Internal, moves: gives a schema, sequence, table or column exactly the privileges listed by _acl_items() on another node.';
-- A grantee of an ACL entry as GRANT and REVOKE name it: PUBLIC for 0, a
-- role's name quoted (names are data, never pasted into SQL).
CREATE OR REPLACE FUNCTION shardid_internal._grantee(role oid) RETURNS text
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE role WHEN 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(role)) END
$$;

COMMENT ON FUNCTION shardid_internal._grantee(oid) IS
    'Internal: an ACL entry''s grantee as GRANT names it: PUBLIC for 0, else the role''s quoted name. Executable by PUBLIC (the shard functions call it with the caller''s rights).';
-- Privileges follow the shards (issue 46): what brings shards' copies,
-- schemas and generators in line with the privileges recorded on the
-- templates, as steps, each a statement and the role it runs as (the
-- owner of what it touches; run through the fence by _align_privileges).
--
-- The record is the templates' ACLs: a template is the truth for every
-- shard's tables, a GRANT through grant_shards() or run_on_shards() lands
-- on it first, and it survives restarts, pg_dump and updates. From it:
--   table      each copy has exactly its template's grants to other roles
--              (those its owner gave: a grant option's delegated grants
--              are the grantee's business); a copy-only grant is revoked
--              (CASCADE), a missing one granted;
--   schema     every role with a privilege on a template (or a column of
--              one) has USAGE on each shard's schema;
--   generator  every role with INSERT on a template has USAGE on each
--              shard's generator, which next_id() needs.
-- Schema and generator USAGE is only added; tidy (after a REVOKE) also
-- revokes it from a role that no template grant and no privilege on a
-- copy (or, for the schema, the generator) of that shard need any more.
-- Roles named shardid_move_% are a move's own (15's subscription role)
-- and left out. shards NULL: every
-- registered shard; only_table: that sharded table's copies only (the
-- schema and generator steps still follow every template).
CREATE OR REPLACE FUNCTION shardid_internal._privilege_steps(shards integer[], only_table name DEFAULT NULL,
                                                             tidy boolean DEFAULT false)
    RETURNS TABLE (shard integer, object text, what text, run_as oid, statement text)
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    templates oid[] := ARRAY(SELECT to_regclass(format('%I.%I', t.template_schema, t.template_name))
                               FROM shardid.sharded_tables AS t);
BEGIN
    -- PL/pgSQL keeps the plan for the session: a shard at a time
    -- (_create_shard_table(), run_on_shards()) must not plan it each time;
    -- the templates by OID, never a scan of the catalog
    RETURN QUERY
WITH tmpl AS (
    SELECT t.table_name, c.oid, c.relowner, c.relacl
      FROM pg_class AS c
      JOIN pg_namespace AS n ON n.oid = c.relnamespace
      JOIN shardid.sharded_tables AS t ON t.template_schema = n.nspname AND t.template_name = c.relname
     WHERE c.oid = ANY (templates)
), want AS (
    SELECT t.table_name, a.grantee, a.privilege_type AS priv, a.is_grantable AS opt
      FROM tmpl AS t, aclexplode(t.relacl) AS a
     WHERE a.grantor = t.relowner AND a.grantee <> t.relowner
), needs AS (
    -- the roles that need USAGE on every shard's schema, and whether they write
    SELECT u.grantee, bool_or(u.priv = 'INSERT') AS writes
      FROM (SELECT w.grantee, w.priv FROM want AS w
            UNION ALL
            SELECT a.grantee, NULL
              FROM tmpl AS t
              JOIN pg_attribute AS att ON att.attrelid = t.oid AND att.attnum > 0 AND att.attacl IS NOT NULL,
                   aclexplode(att.attacl) AS a
             WHERE a.grantee <> t.relowner) AS u
     GROUP BY u.grantee
), reg AS (
    SELECT r.shard, n.oid AS nsp, n.nspowner, n.nspacl, format('%I', r.schema_name) AS qschema,
           s.oid AS seq, s.relowner AS seqowner, s.relacl AS seqacl
      FROM shardid.shard_registry AS r
      JOIN pg_namespace AS n ON n.nspname = r.schema_name
      LEFT JOIN pg_namespace AS sn ON sn.nspname = r.sequence_schema
      LEFT JOIN pg_class AS s ON s.relnamespace = sn.oid AND s.relname = r.sequence_name AND s.relkind = 'S'
     WHERE shards IS NULL OR r.shard = ANY (shards)
), copies AS (
    SELECT g.shard, t.table_name, c.oid, c.relowner, c.relacl
      FROM reg AS g
      CROSS JOIN tmpl AS t
      JOIN pg_class AS c ON c.relnamespace = g.nsp AND c.relname = t.table_name AND c.relkind IN ('r', 'p')
     WHERE only_table IS NULL OR t.table_name = only_table
), have AS (
    SELECT c.shard, c.table_name, a.grantee, a.privilege_type AS priv, a.is_grantable AS opt
      FROM copies AS c, aclexplode(c.relacl) AS a
     WHERE a.grantor = c.relowner AND a.grantee <> c.relowner
       AND (a.grantee = 0 OR pg_get_userbyid(a.grantee) NOT LIKE 'shardid\_move\_%')
), tdiff AS (
    -- per copy and grantee: what it lacks (add) and what it has beyond
    -- its template (extra), each with or without the grant option
    SELECT c.shard, c.oid, c.relowner, d.grantee, d.opt, d.add, string_agg(d.priv, ', ' ORDER BY d.priv) AS privs
      FROM copies AS c
      CROSS JOIN LATERAL (
          SELECT COALESCE(w.grantee, h.grantee) AS grantee, COALESCE(w.priv, h.priv) AS priv,
                 COALESCE(w.opt, h.opt) AS opt, h.grantee IS NULL AS add
            FROM (SELECT * FROM want WHERE want.table_name = c.table_name) AS w
            FULL JOIN (SELECT * FROM have WHERE have.shard = c.shard AND have.table_name = c.table_name) AS h
              ON h.grantee = w.grantee AND h.priv = w.priv AND h.opt = w.opt
           WHERE w.grantee IS NULL OR h.grantee IS NULL) AS d
     GROUP BY c.shard, c.oid, c.relowner, d.grantee, d.opt, d.add
), acl AS (
    -- the exact entries of each shard's schema and generator
    SELECT g.shard, 'schema' AS object, a.grantee, a.grantor, a.privilege_type AS priv
      FROM reg AS g, aclexplode(COALESCE(g.nspacl, acldefault('n', g.nspowner))) AS a
    UNION ALL
    SELECT g.shard, 'generator', a.grantee, a.grantor, a.privilege_type
      FROM reg AS g, aclexplode(COALESCE(g.seqacl, acldefault('s', g.seqowner))) AS a
     WHERE g.seq IS NOT NULL
), held AS (
    -- tidy: per shard, the roles with a privilege on a copy or on the
    -- generator (but its USAGE), and whether one of them is INSERT
    SELECT c.shard, e.grantee, e.privilege_type = 'INSERT' AS inserts
      FROM copies AS c, aclexplode(c.relacl) AS e
     WHERE tidy
    UNION ALL
    SELECT q.shard, q.grantee, false FROM acl AS q
     WHERE tidy AND q.object = 'generator' AND q.priv <> 'USAGE'
), steps AS (
    SELECT d.shard, 'table' AS object, CASE WHEN d.add THEN 2 ELSE 1 END AS ord,
           format(CASE WHEN d.add THEN 'table %s: %s lacks %s%s' ELSE 'table %s: %s has %s%s, which its template does not give' END,
                  d.oid::regclass, shardid_internal._grantee(d.grantee), d.privs,
                  CASE WHEN d.opt THEN ' WITH GRANT OPTION' ELSE '' END) AS what,
           d.relowner AS run_as,
           CASE WHEN d.add
                THEN format('GRANT %s ON TABLE %s TO %s%s', d.privs, d.oid::regclass, shardid_internal._grantee(d.grantee),
                            CASE WHEN d.opt THEN ' WITH GRANT OPTION' ELSE '' END)
                ELSE format('REVOKE %s ON TABLE %s FROM %s CASCADE', d.privs, d.oid::regclass, shardid_internal._grantee(d.grantee)) END
               AS statement
      FROM tdiff AS d
    UNION ALL
    SELECT g.shard, 'schema', 3, format('schema %s: %s lacks USAGE', g.qschema, shardid_internal._grantee(x.grantee)),
           g.nspowner, format('GRANT USAGE ON SCHEMA %s TO %s', g.qschema, shardid_internal._grantee(x.grantee))
      FROM reg AS g, needs AS x
     WHERE x.grantee <> g.nspowner
       AND NOT EXISTS (SELECT FROM acl AS a WHERE a.shard = g.shard AND a.object = 'schema' AND a.grantee = x.grantee AND a.priv = 'USAGE')
    UNION ALL
    SELECT g.shard, 'generator', 4, format('generator %s: %s lacks USAGE', g.seq::regclass, shardid_internal._grantee(x.grantee)),
           g.seqowner, format('GRANT USAGE ON SEQUENCE %s TO %s', g.seq::regclass, shardid_internal._grantee(x.grantee))
      FROM reg AS g, needs AS x
     WHERE x.writes AND g.seq IS NOT NULL AND x.grantee <> g.seqowner
       AND NOT EXISTS (SELECT FROM acl AS a WHERE a.shard = g.shard AND a.object = 'generator' AND a.grantee = x.grantee
                                              AND a.priv IN ('USAGE', 'UPDATE'))
    UNION ALL
    -- tidy: a generator's USAGE no template's INSERT and no copy's INSERT needs
    SELECT g.shard, 'generator', 5, format('generator %s: %s has USAGE nothing needs', g.seq::regclass, shardid_internal._grantee(a.grantee)),
           g.seqowner, format('REVOKE USAGE ON SEQUENCE %s FROM %s', g.seq::regclass, shardid_internal._grantee(a.grantee))
      FROM reg AS g
      JOIN acl AS a ON a.shard = g.shard AND a.object = 'generator' AND a.priv = 'USAGE' AND a.grantor = g.seqowner AND a.grantee <> g.seqowner
     WHERE tidy
       AND NOT EXISTS (SELECT FROM needs AS x WHERE x.grantee = a.grantee AND x.writes)
       AND NOT EXISTS (SELECT FROM held AS h WHERE h.shard = g.shard AND h.grantee = a.grantee AND h.inserts)
    UNION ALL
    -- tidy: a schema's USAGE no template grant and no privilege on a relation of it needs
    SELECT g.shard, 'schema', 6, format('schema %s: %s has USAGE nothing needs', g.qschema, shardid_internal._grantee(a.grantee)),
           g.nspowner, format('REVOKE USAGE ON SCHEMA %s FROM %s', g.qschema, shardid_internal._grantee(a.grantee))
      FROM reg AS g
      JOIN acl AS a ON a.shard = g.shard AND a.object = 'schema' AND a.priv = 'USAGE' AND a.grantor = g.nspowner AND a.grantee <> g.nspowner
     WHERE tidy
       AND NOT EXISTS (SELECT FROM needs AS x WHERE x.grantee = a.grantee)
       AND NOT EXISTS (SELECT FROM held AS h WHERE h.shard = g.shard AND h.grantee = a.grantee)
)
SELECT s.shard, s.object, s.what, s.run_as, s.statement
  FROM steps AS s
 ORDER BY s.shard, s.ord, s.what COLLATE "C";
END
$$;

-- EXECUTE stays with PUBLIC: create_shard() and run_on_shards() reach it with the caller's rights.

COMMENT ON FUNCTION shardid_internal._privilege_steps(integer[], name, boolean) IS
    'Internal: what brings shards'' copies (their template''s grants, exactly), schemas (USAGE for every role a template grants to) and generators (USAGE for every role a template grants INSERT to) in line with the templates'' privileges, as steps: shard, object, what differs, the owner it runs as, the statement; tidy also revokes schema and generator USAGE nothing needs. Executable by PUBLIC (the shard functions call it with the caller''s rights).';
-- Runs the steps of _privilege_steps() for some shards (NULL: every one),
-- each through the one fence as the owner of what it touches
-- (_run_as_owner: a security-restricted operation, search_path pinned;
-- never SET ROLE). usage_only: the schemas' and generators' steps only
-- (after run_on_shards() ran a GRANT or REVOKE on the copies itself).
-- as_role, when given, is the role the statements are for (run_on_shards()
-- on a loopback connection): a step run as an owner whose privileges it
-- lacks is refused (42501) before anything runs; without it,
-- _run_as_owner() checks the caller. Returns each statement it ran.
CREATE OR REPLACE FUNCTION shardid_internal._align_privileges(shards integer[], only_table name, usage_only boolean,
                                                              tidy boolean, as_role name DEFAULT NULL)
    RETURNS SETOF text
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    run_as oid[];
    stmts  text[];
    whats  text[];
    objs   text[];
    nums   integer[];
BEGIN
    -- read once: the checks, then the statements
    SELECT array_agg(s.run_as ORDER BY o), array_agg(s.statement ORDER BY o), array_agg(s.what ORDER BY o),
           array_agg(s.object ORDER BY o), array_agg(s.shard ORDER BY o)
      INTO run_as, stmts, whats, objs, nums
      FROM shardid_internal._privilege_steps(shards, only_table, tidy) WITH ORDINALITY AS s(shard, object, what, run_as, statement, o)
     WHERE NOT usage_only OR s.object <> 'table';
    FOR i IN 1 .. COALESCE(cardinality(stmts), 0) LOOP
        IF as_role IS NOT NULL AND NOT pg_has_role(as_role, run_as[i], 'USAGE') THEN
            RAISE EXCEPTION 'permission denied to run a statement as role %, the owner of the %', quote_ident(pg_get_userbyid(run_as[i])), objs[i]
                USING ERRCODE = 'insufficient_privilege',
                      DETAIL = format('%s: role %s lacks the privileges of that owner.', whats[i], quote_ident(as_role)),
                      HINT = format('Let role %s run SELECT * FROM shardid.align_privileges(%s) on this node.',
                                    quote_ident(pg_get_userbyid(run_as[i])), nums[i]);
        END IF;
    END LOOP;
    FOR i IN 1 .. COALESCE(cardinality(stmts), 0) LOOP
        PERFORM shardid_internal._run_as_owner(run_as[i]::regrole, stmts[i]);
        RETURN NEXT stmts[i];
    END LOOP;
END
$$;

COMMENT ON FUNCTION shardid_internal._align_privileges(integer[], name, boolean, boolean, name) IS
    'Internal: runs _privilege_steps() for some shards (the schemas'' and generators'' only, if asked), each as the owner of what it touches through the fence (_run_as_owner); 42501 for a step whose owner''s privileges as_role lacks; returns the statements. Executable by PUBLIC (the shard functions call it with the caller''s rights; the fence checks the caller).';
-- Router: the schema of the dblink extension, which moves drive the nodes
-- with; 55000 with a hint when it is missing. dblink is not a requirement
-- of the extension (shardid.control): data nodes and routers that never
-- move a shard need not have it, and it installs functions that let their
-- callers open connections; so only the move procedures ask for it.
CREATE OR REPLACE FUNCTION shardid_internal._dblink_schema() RETURNS name
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

REVOKE ALL ON FUNCTION shardid_internal._dblink_schema() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._dblink_schema() IS
    'Router, moves: the schema of the dblink extension; 55000 with a hint when it is not installed.';
-- Router, moves: closes the dblink connection conn if it is open, first
-- cancelling a statement it runs (a remote statement would otherwise run
-- on, holding its locks, until it next talks to the router). Never fails.
CREATE OR REPLACE FUNCTION shardid_internal._node_close(conn text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    dbl name := shardid_internal._dblink_schema();
    open boolean;
BEGIN
    EXECUTE format('SELECT $1 = ANY (COALESCE(%I.dblink_get_connections(), ''{}''))', dbl) INTO open USING conn;
    IF NOT open THEN
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

REVOKE ALL ON FUNCTION shardid_internal._node_close(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._node_close(text) IS
    'Router, moves: cancels what a named dblink connection runs and closes it, if it is open.';
-- Router: a node's connect string as the router uses it, with the
-- search_path of the session pinned to pg_catalog, pg_temp from its first
-- statement (options, last so it wins; add_node() refuses node connect
-- strings that set options, or a dbname that is a connect string, so
-- nothing overrides it): no statement the router sends to a node can
-- reach a function or operator a role of that node put in a schema of its
-- default search_path (public, "$user").
CREATE OR REPLACE FUNCTION shardid_internal._pinned_connstr(connstr text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT connstr || ' options=''-c search_path=pg_catalog,pg_temp'''
$$;

REVOKE ALL ON FUNCTION shardid_internal._pinned_connstr(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._pinned_connstr(text) IS
    'Router: a node connect string with options=''-c search_path=pg_catalog,pg_temp'' appended, as every router session to a node uses it.';
-- An error message on one line, for a move's last_error and the errors it
-- raises: libpq puts one line per host it tried ("connection to server at
-- ... failed: ...") and indents its hints on lines of their own, so a
-- multi-host connect string (an HA pair) gave a message of many lines. The
-- indented lines join the line above with a space, the others with "; ".
CREATE OR REPLACE FUNCTION shardid_internal._one_line(msg text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT regexp_replace(regexp_replace(btrim(msg, E' \t\r\n'), E'[ \t\r]*\n[ \t]+', ' ', 'g'), E'[ \t\r]*\n+', '; ', 'g')
$$;

REVOKE ALL ON FUNCTION shardid_internal._one_line(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._one_line(text) IS
    'Internal: an error message on one line (libpq''s line per host joined by "; ", its indented hints by a space), for a move''s last_error and errors.';
-- Router, moves: the dblink connection conn to a node, opened unless this
-- session has one of that name open already (kept as it is: a caller that
-- may have left one open to another node closes it first, _node_close).
-- It is opened with the node's connect string from shardid.nodes
-- (passwords come from the router's server user's ~/.pgpass) and its
-- search_path pinned for the whole session (_pinned_connstr): every
-- statement a move sends runs with search_path = pg_catalog, pg_temp. A
-- node that cannot be reached fails with 08001 naming the node, libpq's
-- error on one line (_one_line: a multi-host string gives one per host).
CREATE OR REPLACE FUNCTION shardid_internal._node_connect(conn text, node text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    dbl name := shardid_internal._dblink_schema();
    cs  text;
    msg text;
    det text;
    open boolean;
BEGIN
    EXECUTE format('SELECT $1 = ANY (COALESCE(%I.dblink_get_connections(), ''{}''))', dbl) INTO open USING conn;
    IF open THEN
        RETURN;
    END IF;
    SELECT n.connstr INTO cs FROM shardid.nodes AS n WHERE n.node = _node_connect.node;
    IF cs IS NULL THEN
        RAISE EXCEPTION 'node "%" does not exist', node USING ERRCODE = 'undefined_object';
    END IF;
    BEGIN
        -- the node's own settings win, but for the pinned search_path
        EXECUTE format('SELECT %I.dblink_connect($1, $2)', dbl)
            USING conn, shardid_internal._pinned_connstr('connect_timeout=10 application_name=shardid_move ' || cs);
    EXCEPTION WHEN sqlclient_unable_to_establish_sqlconnection OR connection_exception THEN
        GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
        RAISE EXCEPTION 'node "%" is unreachable: %', node, shardid_internal._one_line(COALESCE(NULLIF(rtrim(det, E'\n'), ''), msg))
            USING ERRCODE = 'sqlclient_unable_to_establish_sqlconnection';
    END;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._node_connect(text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._node_connect(text, text) IS
    'Router, moves: opens a named dblink connection to a node unless it is open; 08001 naming the node when it cannot be reached.';
-- Router, moves: sends one statement on the dblink connection conn without
-- waiting (_node_wait() collects its single value), so the router can
-- drive two nodes at once and a cancel of the router's backend interrupts
-- the wait (15's dblink() cannot be interrupted while it waits).
CREATE OR REPLACE FUNCTION shardid_internal._node_send(conn text, sql text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    dbl  name := shardid_internal._dblink_schema();
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

REVOKE ALL ON FUNCTION shardid_internal._node_send(text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._node_send(text, text) IS
    'Router, moves: sends a statement on a named dblink connection without waiting for it.';
-- Router: the per-node session of a job that sends a node statements over
-- many transactions there (apply_ddl(), run_on_shards(): the router's
-- fan-out to every node), on the dblink connection conn: opened anew
-- (_node_close, _node_connect: search_path pinned), named app in the
-- node's pg_stat_activity (how the node tells a running job from an
-- interrupted one), and told to end a statement within a second of this
-- session's end (client_connection_check_interval).
CREATE OR REPLACE FUNCTION shardid_internal._node_session(conn text, node text, app text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM shardid_internal._node_close(conn);
    PERFORM shardid_internal._node_connect(conn, node);
    PERFORM shardid_internal._node(conn, 'SET client_connection_check_interval = ''1s''', node);
    PERFORM shardid_internal._node(conn, format('SET application_name = %L', app), node);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._node_session(text, text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._node_session(text, text, text) IS
    'Router, apply_ddl() and run_on_shards() on every node: opens a dblink connection to a node anew, search_path pinned, named app there, its statements ended soon after this session ends.';
-- Router, moves: waits (interruptibly, 1 ms at a time) for the statement
-- sent on conn and returns the first column of its first row as text; the
-- node's error is raised with its SQLSTATE, detail and hint, the message
-- prefixed with node "NAME": when node is given; a lost connection as 08006.
CREATE OR REPLACE FUNCTION shardid_internal._node_wait(conn text, node text DEFAULT NULL) RETURNS text
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    dbl  name := shardid_internal._dblink_schema();
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
        PERFORM shardid_internal._raise(st, format('node "%s": %s', node, msg), det, hnt);
    END;
    -- the end of the results
    EXECUTE format('SELECT count(*) FROM %I.dblink_get_result($1) AS t(x text)', dbl) USING conn;
    RETURN r;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._node_wait(text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._node_wait(text, text) IS
    'Router, moves: waits interruptibly for the statement sent on a named dblink connection; returns its first value as text.';
-- Router, moves: runs one statement on the dblink connection conn and
-- returns its first value as text (_node_send, then _node_wait; node names
-- the node in its errors).
CREATE OR REPLACE FUNCTION shardid_internal._node(conn text, sql text, node text DEFAULT NULL) RETURNS text
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM shardid_internal._node_send(conn, sql);
    RETURN shardid_internal._node_wait(conn, node);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._node(text, text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._node(text, text, text) IS
    'Router, moves: runs a statement on a named dblink connection and returns its first value as text.';
-- Router, moves: whether the dblink connection conn is open and answers.
CREATE OR REPLACE FUNCTION shardid_internal._node_alive(conn text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    open boolean;
BEGIN
    EXECUTE format('SELECT $1 = ANY (COALESCE(%I.dblink_get_connections(), ''{}''))', shardid_internal._dblink_schema())
        INTO open USING conn;
    IF NOT open THEN
        RETURN false;
    END IF;
    PERFORM shardid_internal._node(conn, 'SELECT 1');
    RETURN true;
EXCEPTION WHEN OTHERS THEN
    RETURN false;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._node_alive(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._node_alive(text) IS
    'Router, moves: whether a named dblink connection is open and answers.';
-- Router, moves: whether an error's SQLSTATE says the node could not be
-- talked to (connection errors, a node shutting down or starting up)
-- rather than that it refused something.
CREATE OR REPLACE FUNCTION shardid_internal._node_unreachable(sqlstate text) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT sqlstate LIKE '08%' OR sqlstate IN ('57P01', '57P02', '57P03')
$$;

REVOKE ALL ON FUNCTION shardid_internal._node_unreachable(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._node_unreachable(text) IS
    'Router, moves: true for SQLSTATEs of a node that cannot be reached (class 08, 57P01-57P03).';
-- Router, moves: a cancel request reaches a backend twice (the postmaster
-- signals the backend and its process group), so a procedure that catches
-- the first to roll a move back would see its rollback cancelled by the
-- second. This waits a moment and swallows a cancel that arrives meanwhile.
CREATE OR REPLACE FUNCTION shardid_internal._absorb_cancel() RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM pg_sleep(0.05);
EXCEPTION WHEN query_canceled THEN
    NULL;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._absorb_cancel() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._absorb_cancel() IS
    'Router, moves: swallows the second signal of a cancel request (sent to the backend and to its process group) before a rollback.';
-- Router: whether the backend with process ID pid that started at
-- backend_start still runs (a process ID is reused; its start time is
-- not). A role that may not see another role's start time sees it NULL,
-- and such a backend counts as live.
CREATE OR REPLACE FUNCTION shardid_internal._backend_alive(pid integer, backend_start timestamptz) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT EXISTS (SELECT FROM pg_stat_activity AS a
                    WHERE a.pid = _backend_alive.pid
                      AND (a.backend_start = _backend_alive.backend_start OR a.backend_start IS NULL))
$$;

REVOKE ALL ON FUNCTION shardid_internal._backend_alive(integer, timestamptz) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._backend_alive(integer, timestamptz) IS
    'Router: whether the backend of a process ID that started at a given time still runs.';
-- Router: takes the lock lock_name of shardid.session_locks for this
-- session, unless a live backend other than this one holds it; returns
-- NULL when taken (or held already), else the holder's process ID. The
-- caller commits at once, so that others see it (the insert of a new
-- lock name waits only for such a commit). A holder is live while
-- pg_stat_activity shows its process ID with its start time.
CREATE OR REPLACE FUNCTION shardid_internal._session_lock(lock_name text) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    me_start timestamptz;
    got      boolean;
    holder   integer;
BEGIN
    PERFORM pg_stat_clear_snapshot();
    SELECT a.backend_start INTO me_start FROM pg_stat_activity AS a WHERE a.pid = pg_backend_pid();
    INSERT INTO shardid.session_locks AS l (lock_name, pid, backend_start)
        VALUES (_session_lock.lock_name, pg_backend_pid(), me_start)
        ON CONFLICT ON CONSTRAINT session_locks_pkey DO UPDATE
           SET pid = excluded.pid, backend_start = excluded.backend_start, taken_at = excluded.taken_at
         WHERE (l.pid = excluded.pid AND l.backend_start = excluded.backend_start)
            OR NOT shardid_internal._backend_alive(l.pid, l.backend_start)
        RETURNING true INTO got;
    IF got THEN
        RETURN NULL;
    END IF;
    SELECT l.pid INTO holder FROM shardid.session_locks AS l WHERE l.lock_name = _session_lock.lock_name;
    RETURN holder;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._session_lock(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._session_lock(text) IS
    'Router: takes a lock of shardid.session_locks for this session unless a live backend holds it; NULL when taken, else the holder''s process ID.';
-- Router: releases the lock lock_name of shardid.session_locks if this
-- session holds it (the caller commits). Returns whether it held it.
CREATE OR REPLACE FUNCTION shardid_internal._session_unlock(lock_name text) RETURNS boolean
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    WITH d AS (DELETE FROM shardid.session_locks AS l
                WHERE l.lock_name = _session_unlock.lock_name AND l.pid = pg_backend_pid() RETURNING 1)
    SELECT EXISTS (SELECT FROM d)
$$;

REVOKE ALL ON FUNCTION shardid_internal._session_unlock(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._session_unlock(text) IS
    'Router: releases a lock of shardid.session_locks held by this session; whether it held it.';
-- Whether a text read from a node (a name, a stored command) holds a
-- control character: C0 (a newline among them), DEL, C1, or a Unicode line
-- or paragraph separator. Text built from such a value could end a
-- comment or a line where the reader does not see it, so check_cluster()
-- reports it (unsafe_name) and never puts it into a fix.
CREATE OR REPLACE FUNCTION shardid_internal._unsafe_text(t text) RETURNS boolean
    LANGUAGE sql IMMUTABLE STRICT
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT t OPERATOR(pg_catalog.~) '[\x01-\x1f\x7f-\x9f\u2028\u2029]'
$$;

REVOKE ALL ON FUNCTION shardid_internal._unsafe_text(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._unsafe_text(text) IS
    'Whether a text holds a control character (C0, DEL, C1, or U+2028/U+2029): check_cluster() never puts such a text into a fix.';
-- What apply_ddl() may run, read by PostgreSQL's parser (src/pg/ddl_command.cpp):
-- one statement about schema.table, of a kind that changes every shard's
-- copy alike; concurrent when it cannot run in a transaction block;
-- index_name the index it makes or drops (CREATE INDEX, DROP INDEX of one).
CREATE OR REPLACE FUNCTION shardid_internal._ddl_command(command text, schema_name name, table_name name,
                                               OUT kind text, OUT concurrent boolean, OUT index_name text)
    LANGUAGE c STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_ddl_command';

COMMENT ON FUNCTION shardid_internal._ddl_command(text, name, name) IS
    'apply_ddl(): parses a command for schema.table; refuses more than one statement, another table, or a kind it does not run; returns the command tag, whether it cannot run in a transaction block, and the index a CREATE INDEX makes or a DROP INDEX of one index drops.';
-- apply_ddl(): the statement for one table (src/pg/ddl_template.cpp): the
-- command with each %s that stands outside literals, quoted identifiers
-- and comments replaced by the table's qualified name (%s_suffix: an
-- index named after it, quoted as one name), and %% by %; the parse tree
-- must have the table's name (or the index's) exactly there. 22023 for a
-- command without %s, with %s in a literal, a quoted identifier or where
-- the statement does not name its table; 42601 for an unterminated quote.
CREATE OR REPLACE FUNCTION shardid_internal._ddl_template(command text, schema_name name, table_name name) RETURNS text
    LANGUAGE c IMMUTABLE STRICT AS 'MODULE_PATHNAME', 'shardid_ddl_template';

COMMENT ON FUNCTION shardid_internal._ddl_template(text, name, name) IS
    'apply_ddl(): the command for one table, %s replaced by the parser''s rules (only outside literals, quoted identifiers and comments, only where the statement names the table or an index named after it, %s_suffix); 22023 or 42601 otherwise.';

GRANT USAGE ON SCHEMA shardid TO PUBLIC;
-- shardid, area layout: the layout of an ID (epoch, shard bits, sequence
-- bits), its decoders, and what keeps the layout frozen.
--
-- Stored decodes: the decoders are IMMUTABLE, so indexes, generated
-- columns, constraints and materialized views may store what they compute.
-- Those values depend on the layout, so configure() refuses a change while
-- any of them exists (found through pg_depend), and a layout row that
-- arrives after the rows (pg_dump restores shardid.layout_config after the
-- tables of schemas that sort before "shardid") recomputes the stored
-- generated columns and rechecks the constraints that were computed with
-- the default. Once an ID is issued the layout no longer changes
-- (_refuse_issued_layout).

-- The layout of this database. Empty means Instagram's default layout; a row
-- is written by configure(). Dumped by pg_dump as extension configuration.
CREATE TABLE shardid.layout_config (
    singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    epoch_ms   bigint  NOT NULL,
    shard_bits integer NOT NULL,
    seq_bits   integer NOT NULL
);

SELECT pg_catalog.pg_extension_config_dump('shardid.layout_config', '');

COMMENT ON TABLE shardid.layout_config IS
    'The ID layout of this database (empty: Instagram''s default). Change it with shardid.configure().';
-- Advanced by the first ID each backend issues (from C, bypassing
-- privileges): once it has a value, IDs exist and the layout is frozen.
-- Readable by everyone (layout() reports it), advanced by no ordinary role.
-- Dumped so a restore stays frozen.
CREATE SEQUENCE shardid.ids_issued AS bigint;

SELECT pg_catalog.pg_extension_config_dump('shardid.ids_issued', '');

GRANT SELECT ON SEQUENCE shardid.ids_issued TO PUBLIC;

COMMENT ON SEQUENCE shardid.ids_issued IS
    'Marker: advanced by next_id() once an ID has been issued; from then on the layout is frozen. Readable by PUBLIC, advanced by no ordinary role.';
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
CREATE OR REPLACE FUNCTION shardid_internal._layout_changed() RETURNS trigger
    LANGUAGE c AS 'MODULE_PATHNAME', 'shardid_layout_changed';

CREATE OR REPLACE TRIGGER layout_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON shardid.layout_config
    FOR EACH STATEMENT EXECUTE FUNCTION shardid_internal._layout_changed();

-- Not for PUBLIC: attached to a table of one's own it would reset every
-- backend's cached layout and plans on each statement. A trigger function
-- needs EXECUTE only to be attached (CREATE TRIGGER checks it), not to fire.
REVOKE ALL ON FUNCTION shardid_internal._layout_changed() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._layout_changed() IS
    'Trigger: tells every backend to reread shardid.layout_config.';
-- shardid.layout_freeze only grows: rows come from next_id() or from a
-- publisher's copy of the table. ENABLE ALWAYS, so a session with
-- session_replication_role = replica and logical replication's workers are
-- refused too.
CREATE OR REPLACE FUNCTION shardid_internal._refuse_freeze_reset() RETURNS trigger
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

REVOKE ALL ON FUNCTION shardid_internal._refuse_freeze_reset() FROM PUBLIC;

CREATE OR REPLACE TRIGGER layout_freeze_append_only
    BEFORE UPDATE OR DELETE ON shardid.layout_freeze
    FOR EACH ROW EXECUTE FUNCTION shardid_internal._refuse_freeze_reset();

CREATE OR REPLACE TRIGGER layout_freeze_no_truncate
    BEFORE TRUNCATE ON shardid.layout_freeze
    FOR EACH STATEMENT EXECUTE FUNCTION shardid_internal._refuse_freeze_reset();

ALTER TABLE shardid.layout_freeze ENABLE ALWAYS TRIGGER layout_freeze_append_only;
ALTER TABLE shardid.layout_freeze ENABLE ALWAYS TRIGGER layout_freeze_no_truncate;

COMMENT ON FUNCTION shardid_internal._refuse_freeze_reset() IS
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
CREATE OR REPLACE FUNCTION shardid_internal._refuse_issued_layout() RETURNS void
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
              FROM (SELECT nd.seq FROM shardid_internal._next_id_defaults AS nd
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

REVOKE ALL ON FUNCTION shardid_internal._refuse_issued_layout() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._refuse_issued_layout() IS
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
CREATE OR REPLACE FUNCTION shardid_internal._refuse_layout_rewrite() RETURNS trigger
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
        PERFORM shardid_internal._refuse_issued_layout();
    ELSIF TG_OP = 'INSERT' AND stored THEN
        RETURN NULL;
    END IF;
    RETURN CASE TG_OP WHEN 'DELETE' THEN OLD WHEN 'TRUNCATE' THEN NULL ELSE NEW END;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._refuse_layout_rewrite() FROM PUBLIC;

CREATE OR REPLACE TRIGGER layout_freeze
    BEFORE INSERT OR UPDATE OR DELETE ON shardid.layout_config
    FOR EACH ROW EXECUTE FUNCTION shardid_internal._refuse_layout_rewrite();

CREATE OR REPLACE TRIGGER layout_freeze_truncate
    BEFORE TRUNCATE ON shardid.layout_config
    FOR EACH STATEMENT EXECUTE FUNCTION shardid_internal._refuse_layout_rewrite();

ALTER TABLE shardid.layout_config ENABLE ALWAYS TRIGGER layout_freeze;
ALTER TABLE shardid.layout_config ENABLE ALWAYS TRIGGER layout_freeze_truncate;

COMMENT ON FUNCTION shardid_internal._refuse_layout_rewrite() IS
    'Trigger on shardid.layout_config: refuses a write that changes the layout once IDs have been issued (the rule of configure()); skips an INSERT of the row already there.';
CREATE OR REPLACE FUNCTION shardid_internal._require_layout(epoch timestamptz, shard_bits integer, seq_bits integer)
    RETURNS bigint
    LANGUAGE c IMMUTABLE STRICT AS 'MODULE_PATHNAME', 'shardid_check_layout';

REVOKE ALL ON FUNCTION shardid_internal._require_layout(timestamptz, integer, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._require_layout(timestamptz, integer, integer) IS
    'Validates a layout and returns its epoch in Unix milliseconds; used by configure().';
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

COMMENT ON TYPE shardid.layout_report IS
    'What shardid.layout() and shardid.configure() report about a layout.';
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
    new_epoch_ms := shardid_internal._require_layout(epoch, shard_bits, seq_bits);
    -- Refused once IDs have been issued, even with the layout in force
    -- (the rule, and the lock that serialises with the first next_id() of
    -- every backend, are in _refuse_issued_layout()).
    PERFORM shardid_internal._refuse_issued_layout();
    PERFORM shardid_internal._refuse_stored_decodes(new_epoch_ms, configure.shard_bits, configure.seq_bits);
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
CREATE OR REPLACE FUNCTION shardid_internal._refuse_stored_decodes(new_epoch_ms bigint DEFAULT NULL,
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

REVOKE ALL ON FUNCTION shardid_internal._refuse_stored_decodes(bigint, integer, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._refuse_stored_decodes(bigint, integer, integer) IS
    'Raises 55000 if anything stores values of shardid decoders and the layout would change; called by configure().';
-- Triggers on layout_config. configure() has already refused if anything
-- stores decodes and the layout changes, so they act on other writers. A row
-- inserted is taken for a restore (pg_dump's COPY of the layout after the
-- tables whose generated columns and CHECK constraints were computed with
-- the default layout): after the statement, once layout_changed has made the
-- decoders read the new layout, those are recomputed and rechecked. Indexes
-- and materialized views made before it, and any other change that would
-- leave a stored decode stale, are refused.
CREATE OR REPLACE FUNCTION shardid_internal._layout_stored_decodes() RETURNS trigger
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
        PERFORM shardid_internal._refuse_stored_decodes();
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
        PERFORM shardid_internal._refuse_stored_decodes();
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
    FOR EACH STATEMENT EXECUTE FUNCTION shardid_internal._layout_stored_decodes();

CREATE OR REPLACE TRIGGER layout_stored_decodes_change
    AFTER UPDATE OR DELETE ON shardid.layout_config
    FOR EACH ROW EXECUTE FUNCTION shardid_internal._layout_stored_decodes();

CREATE OR REPLACE TRIGGER layout_stored_decodes_truncate
    AFTER TRUNCATE ON shardid.layout_config
    FOR EACH STATEMENT EXECUTE FUNCTION shardid_internal._layout_stored_decodes();

REVOKE ALL ON FUNCTION shardid_internal._layout_stored_decodes() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._layout_stored_decodes() IS
    'Trigger: a layout row restored after the tables recomputes their generated columns; other changes under stored decodes are refused.';
-- shardid, area schema changes: apply_ddl() over a sharded table's
-- template and every copy.
--
-- CALL shardid.apply_ddl(template, command) runs one DDL statement, %s
-- standing for each table's schema-qualified name (Citus's
-- run_command_on_shards convention), on a sharded table's template first
-- (new shards are made from it) and then on its copy in every shard; on a
-- router, on every node, one after another in name order (router/). Each
-- statement runs as the template's owner in a security-restricted
-- operation (_run_as_owner: the owner's code it reaches cannot change the
-- role back), never as the caller's superuser; a copy another role owns is
-- refused (_apply_ddl_owners). Only a statement PostgreSQL's parser reads
-- as one change of that one table (_ddl_command) is run. The ledger
-- (ddl_changes, ddl_applied) is written in the same transactions as the
-- tables, so an interrupted apply_ddl() is finished by CALLing it again
-- with the same command, and a different command for that template waits
-- until then. A batch commits after batch_size tables or once it has held
-- its first table's lock for batch_time. Statements that cannot run in a
-- transaction block (CREATE and DROP INDEX CONCURRENTLY) run over dblink,
-- on up to `connections` tables of a node at once: on a node to the node
-- itself, from the router to each node (the options are one record,
-- shardid.ddl_options, sent whole); PostgreSQL runs the
-- owner's index expressions as the owner. It comes before the shards
-- area, which records a new copy in the ledger.
--
-- shardid.run_on_shards(template, command) runs what changes no definition
-- the copies share (GRANT, REVOKE, COMMENT, reads) on every copy, with the
-- same %s and the same fence, as each copy's owner, and returns a row per
-- copy; batches commit on dblink connections (to this database itself on
-- a node, to each node from a router), so it needs no ledger and is a
-- function.

-- The ledger of apply_ddl(): one row per change of a sharded table's
-- template and every shard's copy (on a node), or of every node (on the
-- router). finished_at is NULL while the change is open; a re-CALL of the
-- same command goes on with it, abandon_ddl() closes it as it is
-- (abandoned), and another command for the same template is refused until
-- it is closed. A change a router sent carries the router's change in
-- origin, so a re-CALL after any interruption finds it on the node,
-- finished or not, and never runs it twice. Not dumped: a restored
-- database's tables carry the changes themselves.
CREATE TABLE shardid.ddl_changes (
    change_id     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    template      text NOT NULL,
    table_name    name NOT NULL,
    command       text NOT NULL,
    kind          text NOT NULL,
    concurrent  boolean NOT NULL,
    on_nodes      boolean NOT NULL,
    requested_by  name NOT NULL DEFAULT CURRENT_USER,
    started_at    timestamptz NOT NULL DEFAULT pg_catalog.now(),
    finished_at   timestamptz,
    abandoned     boolean NOT NULL DEFAULT false,
    origin        text
);

-- one open change per template
CREATE UNIQUE INDEX ddl_changes_unfinished ON shardid.ddl_changes (template) WHERE finished_at IS NULL;
-- a router's change, once per node
CREATE UNIQUE INDEX ddl_changes_origin ON shardid.ddl_changes (origin) WHERE origin IS NOT NULL;

GRANT SELECT ON shardid.ddl_changes TO PUBLIC;

COMMENT ON TABLE shardid.ddl_changes IS
    'apply_ddl() ledger: one row per change (template, sharded table, command with %s, kind, whether CONCURRENTLY, on the nodes or here, who, when started and closed; finished_at NULL while open, abandoned when abandon_ddl() closed it; origin: the router''s change it was sent for).';
-- Which tables (the template, each shard's copy) or nodes have a change of
-- shardid.ddl_changes: written in the transaction that changes them, or,
-- for statements that run outside a transaction block, marked running
-- before the statement is sent and done after it returned.
CREATE TABLE shardid.ddl_applied (
    change_id   bigint NOT NULL REFERENCES shardid.ddl_changes (change_id) ON DELETE CASCADE,
    target      text NOT NULL,
    shard       integer,
    done        boolean NOT NULL,
    applied_at  timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
    PRIMARY KEY (change_id, target)
);

GRANT SELECT ON shardid.ddl_applied TO PUBLIC;

COMMENT ON TABLE shardid.ddl_applied IS
    'apply_ddl() ledger: the targets that have a change (target ''template'', a shard''s schema, or on the router a node), done or still running (statements outside a transaction block), and when.';
-- apply_ddl()'s ledger as progress: one row per change, with how many of
-- its targets (template and shards on a node, nodes on the router) have
-- it, which are running (interrupted when no apply_ddl() session is on
-- this server: a re-CALL retries them first), and when it started, last
-- moved and was closed
-- (finished, or abandoned by abandon_ddl()), and the router's change it
-- was sent for.
CREATE OR REPLACE VIEW shardid.ddl_progress AS
    SELECT c.change_id, c.template, c.command, c.kind, c.concurrent, c.on_nodes,
           (SELECT count(*) FROM shardid.ddl_applied AS a WHERE a.change_id = c.change_id AND a.done) AS targets_done,
           CASE WHEN c.finished_at IS NOT NULL
                THEN (SELECT count(*) FROM shardid.ddl_applied AS a WHERE a.change_id = c.change_id AND a.done)
                WHEN c.on_nodes THEN (SELECT count(*) FROM shardid.nodes)
                ELSE 1 OPERATOR(pg_catalog.+) (SELECT count(*) FROM shardid.shard_registry) END AS targets_total,
           ARRAY(SELECT a.target FROM shardid.ddl_applied AS a
                  WHERE a.change_id = c.change_id AND NOT a.done AND c.finished_at IS NULL ORDER BY a.target) AS running,
           -- running targets while no apply_ddl() session is on this
           -- server: a cancel, a terminated session or a crash left them
           c.finished_at IS NULL
             AND EXISTS (SELECT FROM shardid.ddl_applied AS a WHERE a.change_id = c.change_id AND NOT a.done)
             AND NOT EXISTS (SELECT FROM pg_catalog.pg_stat_activity AS s
                              WHERE (s.application_name LIKE 'shardid apply\_ddl %' OR s.application_name = 'shardid_apply_ddl')
                                AND s.state IS DISTINCT FROM 'idle' AND s.pid <> pg_catalog.pg_backend_pid()) AS interrupted,
           c.requested_by, c.started_at,
           (SELECT max(a.applied_at) FROM shardid.ddl_applied AS a WHERE a.change_id = c.change_id) AS last_applied_at,
           c.finished_at,
           c.abandoned,
           c.origin
      FROM shardid.ddl_changes AS c;

GRANT SELECT ON shardid.ddl_progress TO PUBLIC;

COMMENT ON VIEW shardid.ddl_progress IS
    'apply_ddl() progress, one row per change: template, command, kind, CONCURRENTLY or not, on the nodes or here, targets done and in all, running targets (interrupted: no apply_ddl() session runs them), who, started, last applied, closed (finished_at, NULL while open), abandoned (closed by abandon_ddl()), origin (the router''s change it was sent for).';
-- apply_ddl(): the statement for one table (_ddl_template: %s replaced
-- where the parser sees the table's name), checked by the parser
-- (_ddl_command) for that table; returns it with its kind. A syntax
-- error is reported with the statement (the parser's position would point
-- into this function's query).
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_check(command text, schema_name name, table_name name,
                                                    OUT statement text, OUT kind text, OUT concurrent boolean,
                                                    OUT index_name text)
    LANGUAGE plpgsql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    msg text;
BEGIN
    BEGIN
        statement := shardid_internal._ddl_template(command, schema_name, table_name);
        SELECT c.kind, c.concurrent, c.index_name INTO kind, concurrent, index_name
            FROM shardid_internal._ddl_command(statement, schema_name, table_name) AS c;
    EXCEPTION WHEN syntax_error THEN
        IF statement IS NULL THEN
            RAISE;
        END IF;
        GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT;
        RAISE EXCEPTION 'apply_ddl() command is not valid SQL: %', msg
            USING ERRCODE = 'syntax_error', DETAIL = format('The statement was: %s', statement);
    END;
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_check(text, name, name) IS
    'apply_ddl(): the statement for schema.table made from the command and checked by the parser, with its kind, whether it cannot run in a transaction block, and the index it makes or drops.';
-- The one options record of apply_ddl(): built and checked once from its
-- named parameters (_ddl_options), passed whole to the node's loop
-- (_apply_ddl_here) and from the router to every node, where the same
-- builder reads it back, so that an option is honoured on each node or
-- refused on the router. A new option is an attribute here, its default
-- in _ddl_options() and its consumer.
CREATE TYPE shardid.ddl_options AS (
    batch_size  integer,   -- tables a batch commits at most
    batch_time  interval,  -- a batch commits once it has held its first table's lock this long (NULL: no bound)
    loopback    text,      -- a node's connect string to itself, for CONCURRENTLY (NULL: its socket); refused on a router
    connections integer    -- tables CONCURRENTLY changes at once on a node, each on a connection of its own
);

COMMENT ON TYPE shardid.ddl_options IS
    'The options of one apply_ddl(), built and checked once (shardid_internal._ddl_options) and passed whole, from the router to every node too: batch_size, batch_time, loopback, connections.';
-- apply_ddl(): its options record (shardid.ddl_options) from the named
-- parameters, as a jsonb object (given; a key left out gets its default:
-- batch_size 256, batch_time 100 ms, loopback NULL, connections 4), checked
-- before anything changes: 22023 for a key that is no option (a router
-- newer than this node), batch_size below 1, a negative batch_time, or
-- connections outside 1 .. 64, and on a router (_apply_ddl_on_nodes) a
-- loopback: it would name one node's connect string to itself, and the
-- router's connections go to each node. The router sends the record to
-- every node as jsonb, read back and checked there by this function.
CREATE OR REPLACE FUNCTION shardid_internal._ddl_options(given jsonb) RETURNS shardid.ddl_options
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    o       shardid.ddl_options := ROW(256, interval '100 ms', NULL, 4);
    unknown text;
BEGIN
    SELECT string_agg(k, ', ' ORDER BY k) INTO unknown
      FROM jsonb_object_keys(COALESCE(given, '{}')) AS k
     WHERE k <> ALL (ARRAY(SELECT a.attname::text FROM pg_attribute AS a
                            WHERE a.attrelid = 'shardid.ddl_options'::regclass AND a.attnum > 0 AND NOT a.attisdropped));
    IF unknown IS NOT NULL THEN
        RAISE EXCEPTION 'apply_ddl() has no option %', unknown
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Update shardid on this server to the router''s version (ALTER EXTENSION shardid UPDATE).';
    END IF;
    o := jsonb_populate_record(o, given);
    PERFORM shardid_internal._require_batch_size(o.batch_size);
    IF o.batch_time < interval '0' THEN
        RAISE EXCEPTION 'batch_time must not be negative, not %', o.batch_time
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF o.connections IS NULL OR o.connections NOT BETWEEN 1 AND 64 THEN
        RAISE EXCEPTION 'connections must be from 1 to 64, not %', COALESCE(o.connections::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'It is how many tables CREATE or DROP INDEX CONCURRENTLY changes at once, each on a dblink connection of its own.';
    END IF;
    IF o.loopback IS NOT NULL AND shardid_internal._apply_ddl_on_nodes() THEN
        RAISE EXCEPTION 'apply_ddl() takes no loopback on a router'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'loopback is a node''s connect string to itself; from a router, CONCURRENTLY runs on connections from the router to each node.',
                  HINT = 'Leave loopback out.';
    END IF;
    RETURN o;
END
$$;

COMMENT ON FUNCTION shardid_internal._ddl_options(jsonb) IS
    'apply_ddl(): its options record from the named parameters (a jsonb object; defaults for the keys left out), checked once: 22023 for an unknown option, batch_size below 1, a negative batch_time, connections outside 1 .. 64, a loopback on a router.';
-- apply_ddl(): the role every statement of a change runs as, on the
-- template and on each shard's copy alike: the template's owner (a shard
-- table of another owner is refused by PostgreSQL, 42501). Never the
-- caller's superuser rights, unless the template belongs to a superuser;
-- 42501 when the caller is not a member of that role.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_owner(table_name name) RETURNS name
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    owner name;
BEGIN
    SELECT r.rolname INTO owner
      FROM shardid.sharded_tables AS t
      JOIN pg_namespace AS n ON n.nspname = t.template_schema
      JOIN pg_class AS c ON c.relnamespace = n.oid AND c.relname = t.template_name
      JOIN pg_roles AS r ON r.oid = c.relowner
     WHERE t.table_name = _apply_ddl_owner.table_name;
    IF owner IS NULL THEN
        RAISE EXCEPTION 'the template of sharded table % no longer exists', table_name
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    IF NOT pg_has_role(owner, 'MEMBER') THEN
        RAISE EXCEPTION 'permission denied to change sharded table %', table_name
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = format('apply_ddl() runs the command as the template''s owner %I, and role %I is not a member of it.', owner, current_user);
    END IF;
    RETURN owner;
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_owner(name) IS
    'apply_ddl(): the template''s owner, whom every statement of a change runs as; 42501 unless the caller is a member of that role.';
-- apply_ddl(): refuses (42501) a change of a sharded table one of whose
-- copies (shard NULL: every shard's; otherwise that shard's) belongs to a
-- role other than the template's owner. Every statement of a change runs
-- as the template's owner, in a security-restricted operation
-- (_run_as_owner); on a copy another role owns, that role's code
-- (CHECKs, defaults, index expressions, triggers) would run with the
-- template owner's rights, a superuser's if a superuser owns the template.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_owners(table_name name, owner name, shard integer DEFAULT NULL)
    RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    odd text[];
    n   bigint;
BEGIN
    WITH copy AS (
        SELECT format('%I.%I (owner %I)', s.schema_name, c.relname, pg_get_userbyid(c.relowner)) AS what,
               row_number() OVER (ORDER BY s.shard) AS rank
          FROM shardid.shard_registry AS s
          JOIN pg_namespace AS ns ON ns.nspname = s.schema_name
          JOIN pg_class AS c ON c.relnamespace = ns.oid AND c.relname = _apply_ddl_owners.table_name
         WHERE (_apply_ddl_owners.shard IS NULL OR s.shard = _apply_ddl_owners.shard)
           AND c.relowner <> to_regrole(quote_ident(owner)))
    SELECT array_agg(copy.what ORDER BY copy.rank) FILTER (WHERE copy.rank <= 5), count(*) INTO odd, n FROM copy;
    IF n > 0 THEN
        RAISE EXCEPTION 'sharded table %: % of its copies % not owned by the template''s owner %', table_name, n,
                        CASE WHEN n = 1 THEN 'is' ELSE 'are' END, quote_ident(owner)
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = format('apply_ddl() runs every statement as the template''s owner; a copy another role owns would run that role''s code with those rights. %s%s.',
                                  array_to_string(odd, ', '), CASE WHEN n > 5 THEN ', ...' ELSE '' END),
                  HINT = format('Give each copy the template''s owner (ALTER TABLE ... OWNER TO %I), then CALL apply_ddl() again.', owner);
    END IF;
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_owners(name, name, integer) IS
    'apply_ddl(): refuses (42501) a sharded table one of whose copies (every shard''s, or one shard''s) another role than the template''s owner owns, naming up to five.';
-- apply_ddl(): a caller who may not write the ledger (a template owner who
-- is no superuser) is told which grants it needs (42501) before anything
-- changes, rather than failing on the first write with PostgreSQL's bare
-- "permission denied for table ddl_changes".
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_grants() RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    missing text[];
BEGIN
    SELECT array_agg(format('%s on %s', p.priv, p.tab) ORDER BY p.tab, p.priv) INTO missing
      FROM (VALUES ('shardid.ddl_changes', 'INSERT'), ('shardid.ddl_changes', 'UPDATE'),
                   ('shardid.ddl_applied', 'INSERT'), ('shardid.ddl_applied', 'UPDATE')) AS p(tab, priv)
     WHERE NOT has_table_privilege(p.tab, p.priv);
    IF missing IS NOT NULL THEN
        RAISE EXCEPTION 'permission denied to record a change of a sharded table'
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = format('apply_ddl() records each change in its ledger; role %I lacks %s.', current_user,
                                  array_to_string(missing, ', ')),
                  HINT = format('An administrator grants them: GRANT INSERT, UPDATE ON shardid.ddl_changes, shardid.ddl_applied TO %I;',
                                current_user);
    END IF;
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_grants() IS
    'apply_ddl(): refuses (42501, the GRANT in the HINT) a caller who may not write the ledger (shardid.ddl_changes, ddl_applied), before anything changes.';
-- apply_ddl() on a node: checks the template, the caller and the command,
-- then finds the open change of that template (the same command:
-- resumed) or records a new one; a different open command is refused
-- (55000). Returns the change, how many targets (the template and each
-- shard) it has left and how many there are, and state: new, resumed,
-- finished (origin, a router's change, was finished here already: nothing
-- to run again) or no template (origin given, and this node has no such
-- sharded table: a node with only the extension has nothing to change).
-- here: this session runs the statements, so one outside a transaction
-- block needs dblink here (false when the router drives this node over
-- its own connection). A new change is returned unrecorded (change_id
-- NULL): _apply_ddl_record() records it, with the first batch of a
-- statement that runs in a transaction block (_apply_ddl_first_batch), so
-- a change whose first batch fails is not kept.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_start(template text, command text, here boolean, origin text DEFAULT NULL,
                                                    OUT change shardid.ddl_changes, OUT todo integer, OUT total integer,
                                                    OUT state text)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rel    regclass;
    t      shardid.sharded_tables;
    owner  name;
    chk    record;
    canon  text;
BEGIN
    IF template IS NULL OR command IS NULL THEN
        RAISE EXCEPTION 'apply_ddl() arguments must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF origin IS NOT NULL THEN
        SELECT c.* INTO change FROM shardid.ddl_changes AS c WHERE c.origin = _apply_ddl_start.origin;
        IF change.finished_at IS NOT NULL THEN
            state := 'finished';
            RETURN;
        END IF;
        IF NOT EXISTS (SELECT FROM shardid.sharded_tables AS s
                        WHERE format('%I.%I', s.template_schema, s.template_name) = _apply_ddl_start.template) THEN
            state := 'no template';
            RETURN;
        END IF;
    END IF;
    rel := to_regclass(template);
    SELECT s.* INTO t FROM shardid.sharded_tables AS s
        JOIN pg_class AS c ON c.relname = s.template_name
        JOIN pg_namespace AS n ON n.oid = c.relnamespace AND n.nspname = s.template_schema
        WHERE c.oid = rel;
    IF t.table_name IS NULL THEN
        RAISE EXCEPTION '"%" is not the template of a sharded table', template
            USING ERRCODE = 'undefined_table',
                  HINT = 'shardid.sharded_tables lists the templates; register one with shardid.create_table_proc().';
    END IF;
    PERFORM shardid_internal._require_template(t);
    PERFORM shardid_internal._apply_ddl_grants();
    canon := format('%I.%I', t.template_schema, t.template_name);
    owner := shardid_internal._apply_ddl_owner(t.table_name);
    PERFORM shardid_internal._apply_ddl_owners(t.table_name, owner);
    chk := shardid_internal._apply_ddl_check(command, t.template_schema, t.template_name);
    -- and for a shard's copy: a command that names the template itself
    -- rather than %s is refused before anything changes
    PERFORM shardid_internal._apply_ddl_check(command, 'shard_0000', t.table_name);
    IF chk.concurrent AND here AND NOT EXISTS (SELECT FROM pg_extension AS e WHERE e.extname = 'dblink') THEN
        RAISE EXCEPTION 'apply_ddl() of a statement that cannot run in a transaction block needs the dblink extension'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('%s runs one table at a time on a connection of its own, to this database itself.', chk.kind),
                  HINT = 'CREATE EXTENSION dblink; in this database (contrib, shipped with PostgreSQL).';
    END IF;
    -- one change per template at a time; waits for another apply_ddl() start
    LOCK TABLE shardid.ddl_changes IN SHARE ROW EXCLUSIVE MODE;
    SELECT c.* INTO change FROM shardid.ddl_changes AS c WHERE c.template = canon AND c.finished_at IS NULL;
    IF change.change_id IS NOT NULL AND (change.command <> command OR change.on_nodes
                                         OR change.origin IS DISTINCT FROM COALESCE(origin, change.origin)) THEN
        RAISE EXCEPTION 'sharded table % has an unfinished change: %', t.table_name, change.command
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('Change %s, started by %I (shardid.ddl_progress shows how far it got); a different command waits until it is finished or abandoned.',
                                  change.change_id, change.requested_by),
                  HINT = format('Finish it: CALL shardid.apply_ddl(%L, %L); or leave it as far as it got: SELECT * FROM shardid.abandon_ddl(%L);',
                                canon, change.command, canon);
    END IF;
    state := 'resumed';
    IF change.change_id IS NULL THEN
        change := ROW(NULL, canon, t.table_name, command, chk.kind, chk.concurrent, false, current_user, now(), NULL, false, origin);
        state := 'new';
    END IF;
    SELECT 1 + count(*) INTO total FROM shardid.shard_registry;
    SELECT total - count(*) INTO todo FROM shardid.ddl_applied AS a WHERE a.change_id IS NOT DISTINCT FROM change.change_id AND a.done;
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_start(text, text, boolean, text) IS
    'apply_ddl() on a node: checks template, caller and command, then resumes the open change of the same command or returns a new one unrecorded (55000 for a different one); returns it with the targets left and in all and its state (new, resumed; for a router''s change: finished, no template); here: this session runs the statements (dblink needed for CONCURRENTLY).';
-- apply_ddl() on a node: records a new change that _apply_ddl_start()
-- returned unrecorded, and says in a NOTICE what it will do (how many of
-- how many tables; how: in batches, or how many at a time outside a
-- transaction block); returns it with its change_id. A resumed change is
-- returned as it is.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_record(change shardid.ddl_changes, todo integer, total integer,
                                                              how text) RETURNS shardid.ddl_changes
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c shardid.ddl_changes := change;
BEGIN
    IF c.change_id IS NULL THEN
        INSERT INTO shardid.ddl_changes AS d (template, table_name, command, kind, concurrent, on_nodes, origin)
            VALUES (c.template, c.table_name, c.command, c.kind, c.concurrent, false, c.origin)
            RETURNING d.* INTO c;
    END IF;
    RAISE NOTICE 'apply_ddl: change % of %: % on % of % tables (template and shards), %',
        c.change_id, c.template, c.kind, todo, total, how;
    RETURN c;
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_record(shardid.ddl_changes, integer, integer, text) IS
    'apply_ddl() on a node: records a new change (returned unrecorded by _apply_ddl_start) and announces it in a NOTICE (tables to change, how); returns it with its change_id.';
-- apply_ddl() on a node, a new CONCURRENTLY change: whether it is a re-run
-- of a finished one (a migration run twice): the ledger has the same
-- command finished for this template, and the template is as that change
-- left it (the index a CREATE INDEX makes is there and valid, the one a
-- DROP INDEX drops is gone). Then a NOTICE says so and nothing is run or
-- recorded. (A statement that runs in a transaction block is recognised
-- by its first batch instead: _apply_ddl_first_batch.)
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_rerun(change shardid.ddl_changes) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    prior bigint;
    t     shardid.sharded_tables;
    chk   record;
    there boolean;
BEGIN
    IF change.change_id IS NOT NULL OR NOT change.concurrent THEN
        RETURN false;
    END IF;
    SELECT c.change_id INTO prior FROM shardid.ddl_changes AS c
     WHERE c.template = change.template AND c.command = change.command AND c.finished_at IS NOT NULL AND NOT c.abandoned
     ORDER BY c.change_id DESC LIMIT 1;
    IF prior IS NULL THEN
        RETURN false;
    END IF;
    SELECT s.* INTO t FROM shardid.sharded_tables AS s WHERE s.table_name = change.table_name;
    chk := shardid_internal._apply_ddl_check(change.command, t.template_schema, t.template_name);
    IF chk.index_name IS NULL THEN
        RETURN false;
    END IF;
    SELECT EXISTS (SELECT FROM pg_index AS x
                    WHERE x.indexrelid = to_regclass(format('%I.%I', t.template_schema, chk.index_name)) AND x.indisvalid)
      INTO there;
    IF there <> (chk.kind = 'CREATE INDEX') THEN
        RETURN false;
    END IF;
    RAISE NOTICE 'apply_ddl: % had this change already (index %, change % ran the same command): nothing run, nothing recorded',
        change.template, quote_ident(chk.index_name), prior;
    RETURN true;
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_rerun(shardid.ddl_changes) IS
    'apply_ddl() on a node: whether a new CONCURRENTLY change re-runs a finished one (same command, the template''s index as it left it); says so in a NOTICE.';
-- apply_ddl() on a node, driven by the router for a statement outside a
-- transaction block: the change of the router's origin started, resumed
-- or recorded here (_apply_ddl_start, _apply_ddl_record); returns its
-- change_id, or NULL when there is nothing to run here (finished here
-- already, or no such template: _apply_ddl_skip).
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_open(template text, command text, origin text) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    s record;
BEGIN
    SELECT * INTO s FROM shardid_internal._apply_ddl_start(template, command, false, origin) AS x;
    IF shardid_internal._apply_ddl_skip(template, command, s.state) OR shardid_internal._apply_ddl_rerun(s.change) THEN
        RETURN NULL;
    END IF;
    RETURN (shardid_internal._apply_ddl_record(s.change, s.todo, s.total, 'outside a transaction block, on connections from the router')).change_id;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._apply_ddl_open(text, text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_ddl_open(text, text, text) IS
    'apply_ddl() on a node, for the router, CONCURRENTLY: starts, resumes or records the change of the router''s origin; returns its change_id, NULL when there is nothing to run here.';
-- apply_ddl() on a node: whether a change the router sent is not to run
-- here (state from _apply_ddl_start: finished, the router's change was
-- finished here already; no template, this node has no such sharded
-- table, e.g. a node with only the extension, which the first move there
-- gives the changed templates), said in a NOTICE.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_skip(template text, command text, state text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF state = 'finished' THEN
        RAISE NOTICE 'apply_ddl: this node has finished the change already: %', command;
    ELSIF state = 'no template' THEN
        RAISE NOTICE 'apply_ddl: this node has no sharded table with the template %: nothing to change', template;
    END IF;
    RETURN state IN ('finished', 'no template');
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_skip(text, text, text) IS
    'apply_ddl() on a node: whether a change the router sent is not to run here (finished here already, or no such template), said in a NOTICE.';
-- apply_ddl(): the targets of a change on a node that do not have it yet,
-- in order: the template first (new shards are made from it), then each
-- registered shard's copy by shard number; running ones (a statement
-- outside a transaction block that was interrupted) before the others.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_targets(change_id bigint, max integer)
    RETURNS TABLE (target text, shard integer, schema_name name, table_name name, running boolean)
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT x.target, x.shard, x.schema_name, x.table_name, a.change_id IS NOT NULL
      FROM shardid.ddl_changes AS c
      JOIN shardid.sharded_tables AS t ON t.table_name = c.table_name
      CROSS JOIN LATERAL (SELECT 'template'::text AS target, NULL::integer AS shard, t.template_schema AS schema_name,
                                 t.template_name AS table_name
                          UNION ALL
                          SELECT s.schema_name::text, s.shard, s.schema_name, t.table_name
                            FROM shardid.shard_registry AS s) AS x
      LEFT JOIN shardid.ddl_applied AS a ON a.change_id = c.change_id AND a.target = x.target
     WHERE c.change_id = _apply_ddl_targets.change_id
       AND (a.change_id IS NULL OR NOT a.done)
     ORDER BY a.change_id IS NULL, x.shard NULLS FIRST
     LIMIT max
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_targets(bigint, integer) IS
    'apply_ddl(): up to max targets of a change that lack it on this node (template first, then shards by number; interrupted ones first).';
-- apply_ddl() on a node: raises the error a batch's statement caused, as
-- the user's own: without the CONTEXT lines of shardid's helpers (_raise)
-- and naming the table it failed on, found by its statement in the
-- error's context among the targets the batch had (they still lack the
-- change: the batch rolled back).
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_raise(change shardid.ddl_changes, batch_size integer, sqlstate text,
                                                             message text, detail text, hint text, context text)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    failed text;
BEGIN
    IF change.change_id IS NOT NULL THEN
        SELECT format('%I.%I', x.schema_name, x.table_name) INTO failed
          FROM shardid_internal._apply_ddl_targets(change.change_id, batch_size) AS x
         WHERE strpos(context, (shardid_internal._apply_ddl_check(change.command, x.schema_name, x.table_name)).statement) > 0
         LIMIT 1;
    END IF;
    PERFORM shardid_internal._raise(sqlstate, CASE WHEN failed IS NULL THEN message ELSE format('%s (on %s)', message, failed) END,
                                    detail, hint);
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_raise(shardid.ddl_changes, integer, text, text, text, text, text) IS
    'apply_ddl() on a node: raises a batch''s error without shardid''s CONTEXT lines, naming the table it failed on.';
-- One batch of apply_ddl() on a node, for statements that run in a
-- transaction block: runs the change on the next targets that lack it, as
-- the template's owner in a security-restricted operation (_run_as_owner;
-- a copy another role owns is refused), and records each in the ledger in
-- the same transaction. Every table keeps its lock until the caller
-- commits, so the batch ends after batch_size tables or, sooner, once its
-- first statement began batch_time ago (NULL: no time bound): no table is
-- locked much longer than batch_time plus one statement and the commit.
-- after: the last shard the previous batch changed (-1 after the
-- template, NULL at first); the next shards are read from there in shard
-- order (an index range: short batches do not read every shard each), and
-- when none is left there, every target is looked at again
-- (_apply_ddl_targets: the template, a shard registered meanwhile). made is
-- how many tables it changed, NULL when none was left. application_name
-- says the progress for the batch's transaction (set_config local). A
-- statement's error is raised as the user's, naming its table
-- (_apply_ddl_raise).
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_batch(change shardid.ddl_changes, batch_size integer, batch_time interval,
                                                             done integer, todo integer, INOUT after integer,
                                                             OUT made integer)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    cur       refcursor;
    x         record;
    rel       regclass;
    owner     name;
    owner_oid oid;
    began     timestamptz;
    st        text;
    msg       text;
    det       text;
    hnt       text;
    ctx       text;
BEGIN
    made := 0;
    PERFORM set_config('application_name', format('shardid apply_ddl %s %s/%s', change.template, done, todo), true);
    owner := shardid_internal._apply_ddl_owner(change.table_name);
    owner_oid := to_regrole(quote_ident(owner));
    LOOP
        IF after IS NULL THEN
            OPEN cur FOR SELECT t.target, t.shard, t.schema_name, t.table_name
                           FROM shardid_internal._apply_ddl_targets(change.change_id, batch_size) AS t;
        ELSE
            OPEN cur FOR SELECT s.schema_name::text AS target, s.shard, s.schema_name, change.table_name AS table_name
                           FROM shardid.shard_registry AS s
                          WHERE s.shard > after
                            AND NOT EXISTS (SELECT FROM shardid.ddl_applied AS a
                                             WHERE a.change_id = change.change_id AND a.target = s.schema_name::text)
                          ORDER BY s.shard
                          LIMIT batch_size;
        END IF;
        LOOP
            FETCH cur INTO x;
            EXIT WHEN NOT FOUND;
            began := COALESCE(began, clock_timestamp());
            rel := to_regclass(format('%I.%I', x.schema_name, x.table_name));
            -- a shard that lacks the table gets it from the changed template
            IF rel IS NOT NULL THEN
                IF x.target <> 'template' AND (SELECT k.relowner FROM pg_class AS k WHERE k.oid = rel) <> owner_oid THEN
                    PERFORM shardid_internal._apply_ddl_owners(change.table_name, owner, x.shard);
                END IF;
                PERFORM shardid_internal._run_as_owner(quote_ident(owner)::regrole,
                                                       (shardid_internal._apply_ddl_check(change.command, x.schema_name, x.table_name)).statement);
            ELSIF x.target = 'template' THEN
                RAISE EXCEPTION 'template % of sharded table % no longer exists', x.target, change.table_name
                    USING ERRCODE = 'object_not_in_prerequisite_state';
            END IF;
            INSERT INTO shardid.ddl_applied (change_id, target, shard, done)
                VALUES (change.change_id, x.target, x.shard, true);
            made := made + 1;
            after := COALESCE(x.shard, -1);
            EXIT WHEN made >= batch_size OR clock_timestamp() - began >= batch_time;
        END LOOP;
        CLOSE cur;
        -- nothing after the last shard: look at every target once more
        EXIT WHEN made > 0 OR after IS NULL;
        after := NULL;
    END LOOP;
    made := NULLIF(made, 0);
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT,
                            ctx = PG_EXCEPTION_CONTEXT;
    PERFORM shardid_internal._apply_ddl_raise(change, batch_size, st, msg, det, hnt, ctx);
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_batch(shardid.ddl_changes, integer, interval, integer, integer, integer) IS
    'One batch of apply_ddl() on a node: runs the change as the template''s owner on the next targets that lack it (from the shard after, then every one), recording each in the ledger, until batch_size tables or batch_time since its first statement; how many it changed (NULL when none was left) and the last shard.';
-- apply_ddl() on a node, for a statement that cannot run in a transaction
-- block: the next target that lacks the change, marked running in the
-- ledger (the caller commits that before the statement is sent). A target
-- found running was interrupted: retry is true, and cleanup drops the
-- invalid indexes an interrupted CREATE INDEX CONCURRENTLY leaves on it.
-- A shard without the table is recorded as done (it will be made from the
-- changed template). busy: the targets this session is changing now on
-- its other connections (running in the ledger, not interrupted), never
-- claimed again. Another session's claim of the same new target fails on
-- the ledger's primary key: two sessions never change one table. target
-- is NULL when every target has the change or is busy.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_claim(change_id bigint, busy text[] DEFAULT '{}',
                                                    OUT target text, OUT statement text, OUT owner name,
                                                    OUT cleanup text[], OUT retry boolean)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c    shardid.ddl_changes;
    x    record;
    rel  regclass;
BEGIN
    busy := COALESCE(busy, '{}');
    SELECT * INTO STRICT c FROM shardid.ddl_changes AS d WHERE d.change_id = _apply_ddl_claim.change_id;
    LOOP
        SELECT * INTO x FROM shardid_internal._apply_ddl_targets(change_id, 1 + cardinality(busy)) AS t
         WHERE t.target <> ALL (array_remove(busy, NULL))
         LIMIT 1;
        IF NOT FOUND THEN
            RETURN;
        END IF;
        rel := to_regclass(format('%I.%I', x.schema_name, x.table_name));
        IF rel IS NULL THEN
            INSERT INTO shardid.ddl_applied AS a (change_id, target, shard, done)
                VALUES (c.change_id, x.target, x.shard, true)
                ON CONFLICT ON CONSTRAINT ddl_applied_pkey DO UPDATE SET done = true, applied_at = clock_timestamp();
            CONTINUE;
        END IF;
        target := x.target;
        retry := x.running;
        statement := (shardid_internal._apply_ddl_check(c.command, x.schema_name, x.table_name)).statement;
        owner := shardid_internal._apply_ddl_owner(c.table_name);
        IF x.target <> 'template' AND (SELECT k.relowner FROM pg_class AS k WHERE k.oid = rel) <> to_regrole(quote_ident(owner)) THEN
            PERFORM shardid_internal._apply_ddl_owners(c.table_name, owner, x.shard);
        END IF;
        cleanup := ARRAY(SELECT format('DROP INDEX CONCURRENTLY %I.%I', x.schema_name, i.relname)
                           FROM pg_index AS ix JOIN pg_class AS i ON i.oid = ix.indexrelid
                          WHERE retry AND ix.indrelid = rel AND NOT ix.indisvalid
                          ORDER BY i.relname);
        IF NOT retry THEN
            INSERT INTO shardid.ddl_applied (change_id, target, shard, done) VALUES (c.change_id, x.target, x.shard, false);
        END IF;
        RETURN;
    END LOOP;
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_claim(bigint, text[]) IS
    'apply_ddl() on a node, outside a transaction block: marks the next target that lacks the change (and is not one of busy, this session''s) as running and returns its statement, owner, and (for an interrupted one) the invalid indexes to drop first; NULL target when none is left.';
-- apply_ddl() on a node: marks a running target (claimed by
-- _apply_ddl_claim for a statement outside a transaction block) as having
-- the change.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_mark_done(change_id bigint, target text) RETURNS void
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    UPDATE shardid.ddl_applied AS a SET done = true, applied_at = clock_timestamp()
     WHERE a.change_id = _apply_ddl_mark_done.change_id AND a.target = _apply_ddl_mark_done.target
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_mark_done(bigint, text) IS
    'apply_ddl() on a node: marks a running target of a change as done.';
-- apply_ddl(): closes a change as finished (finished_at) when every target
-- has it (on a node: the template and every registered shard; on the
-- router: every node); returns whether it is.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_close_change(change_id bigint) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c     shardid.ddl_changes;
    left_ integer;
BEGIN
    SELECT * INTO STRICT c FROM shardid.ddl_changes AS d WHERE d.change_id = _apply_ddl_close_change.change_id;
    IF c.on_nodes THEN
        SELECT count(*) INTO left_ FROM shardid.nodes AS n
         WHERE NOT EXISTS (SELECT FROM shardid.ddl_applied AS a
                            WHERE a.change_id = c.change_id AND a.target = n.node AND a.done);
    ELSE
        SELECT count(*) INTO left_ FROM shardid_internal._apply_ddl_targets(c.change_id, NULL);
    END IF;
    IF left_ = 0 THEN
        UPDATE shardid.ddl_changes AS d SET finished_at = now()
         WHERE d.change_id = c.change_id AND d.finished_at IS NULL;
    END IF;
    RETURN left_ = 0;
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_close_change(bigint) IS
    'apply_ddl(): closes a change as finished (finished_at) once every target (node: template and shards; router: nodes) has it; returns whether it did.';
-- Node or router: the re-CALLs that finish this database's unfinished
-- apply_ddl() changes (shardid.ddl_changes), oldest first, as a JSON array
-- of text; a move whose shard differs from the target's templates names
-- them.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_unfinished() RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT COALESCE(jsonb_agg(format('CALL shardid.apply_ddl(%L, %L);', c.template, c.command) ORDER BY c.change_id), '[]')
      FROM shardid.ddl_changes AS c
     WHERE c.finished_at IS NULL
$$;

REVOKE ALL ON FUNCTION shardid_internal._apply_ddl_unfinished() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_ddl_unfinished() IS
    'Node or router: the re-CALLs of apply_ddl() that finish this database''s unfinished changes, as a JSON array.';
-- apply_ddl(): prepares a dblink connection for statements that cannot
-- run in a transaction block: opened to a node (router: _node_session, as
-- run_on_shards() opens its own) or to this database itself (a node:
-- connstr, or by default this server's socket, port, database and role),
-- with search_path pinned and the server told to end the statement
-- within a second of this session's end. A loopback that reaches another
-- database or server is refused (22023): the statements would change
-- tables there while this ledger records them here.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_connect(conn text, node text, connstr text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    -- (database, the server's start time): this database, on this server
    self  CONSTANT text := 'SELECT ROW(pg_catalog.current_database(), '
                           'pg_catalog.date_part(''epoch'', pg_catalog.pg_postmaster_start_time()))::text';
    here  text;
    there text;
    dbl   name;
    host  text := split_part(current_setting('unix_socket_directories'), ',', 1);
BEGIN
    BEGIN
        dbl := shardid_internal._dblink_schema();
    EXCEPTION WHEN object_not_in_prerequisite_state THEN
        RAISE EXCEPTION 'apply_ddl() of a statement that cannot run in a transaction block needs the dblink extension'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'It runs such statements (CONCURRENTLY) each on a connection of its own, up to connections tables at once: to each node from the router, or on a node to the node itself.',
                  HINT = 'CREATE EXTENSION dblink; in this database (contrib, shipped with PostgreSQL).';
    END;
    IF node IS NOT NULL THEN
        -- how shardid.ddl_progress there tells a running change from an interrupted one
        PERFORM shardid_internal._node_session(conn, node, 'shardid_apply_ddl');
        RETURN;
    END IF;
    PERFORM shardid_internal._node_close(conn);
    IF connstr IS NULL THEN
        connstr := format('host=''%s'' port=%s dbname=''%s'' user=''%s''',
                          replace(replace(COALESCE(NULLIF(btrim(host), ''), 'localhost'), '\', '\\'), '''', '\'''),
                          current_setting('port'),
                          replace(replace(current_database(), '\', '\\'), '''', '\'''),
                          replace(replace(session_user, '\', '\\'), '''', '\'''));
    END IF;
    EXECUTE format('SELECT %I.dblink_connect($1, $2)', dbl)
        USING conn, 'application_name=shardid_apply_ddl ' || connstr;
    PERFORM shardid_internal._node(conn, 'SET search_path = pg_catalog, pg_temp', NULL);
    EXECUTE self INTO here;
    there := shardid_internal._node(conn, self, NULL);
    IF there IS DISTINCT FROM here THEN
        PERFORM shardid_internal._node_close(conn);
        RAISE EXCEPTION 'apply_ddl() loopback does not reach this database'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('It reaches %s (database, the server''s start in seconds since 1970); this is %s.', there, here),
                  HINT = 'Give loopback a connect string to this database on this server, or leave it out (this server''s socket, port, database and your role).';
    END IF;
    PERFORM shardid_internal._node(conn, 'SET client_connection_check_interval = ''1s''', NULL);
    -- how shardid.ddl_progress here tells a running change from an interrupted one
    PERFORM shardid_internal._node(conn, 'SET application_name = ''shardid_apply_ddl''', NULL);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._apply_ddl_connect(text, text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_ddl_connect(text, text, text) IS
    'apply_ddl(): opens a named dblink connection to a node or (node NULL) to this database, for statements outside a transaction block, with search_path pinned.';
-- apply_ddl(), outside a transaction block: on the dblink connection conn
-- (search_path pinned, _apply_ddl_connect), drops what an interrupted run
-- left (cleanup, waiting for each), and sends the statement without
-- waiting for it (_apply_ddl_busy, _apply_ddl_result follow). The
-- statement is one CREATE INDEX or DROP INDEX CONCURRENTLY of the table
-- (_ddl_command): it runs as the connection's role, and PostgreSQL itself
-- runs the table owner's code it reaches (index expressions and
-- predicates) as that owner in a security-restricted operation, as
-- _run_as_owner does for the statements a function can run.
-- No SET ROLE: the owner's code could set it back.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_send(conn text, node text, cleanup text[], statement text)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    sql text;
BEGIN
    FOREACH sql IN ARRAY COALESCE(cleanup, '{}') LOOP
        RAISE NOTICE 'apply_ddl: dropping an index left invalid by an interrupted run: %', sql;
        PERFORM shardid_internal._node(conn, sql, node);
    END LOOP;
    PERFORM shardid_internal._node_send(conn, statement);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._apply_ddl_send(text, text, text[], text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_ddl_send(text, text, text[], text) IS
    'apply_ddl(), outside a transaction block: on a dblink connection, runs the cleanup statements, sends the statement (CONCURRENTLY; PostgreSQL runs the owner''s code in it as the owner) without waiting.';
-- apply_ddl() on a node, outside a transaction block: whether the
-- statement sent on conn still runs (then after sleeping 10 ms). The
-- procedure commits between calls: a CREATE INDEX CONCURRENTLY on the
-- loopback connection waits for every transaction of this database older
-- than its snapshot, this session's too. A cancel of this session (a
-- statement_timeout, Ctrl-C) cancels the statement at the other end too,
-- which would otherwise run on and commit unrecorded.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_busy(conn text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    busy integer;
BEGIN
    EXECUTE format('SELECT %I.dblink_is_busy($1)', shardid_internal._dblink_schema()) INTO busy USING conn;
    IF busy = 1 THEN
        PERFORM pg_sleep(0.01);
    END IF;
    RETURN busy = 1;
EXCEPTION WHEN query_canceled THEN
    EXECUTE format('SELECT %I.dblink_cancel_query($1)', shardid_internal._dblink_schema()) USING conn;
    RAISE;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._apply_ddl_busy(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_ddl_busy(text) IS
    'apply_ddl() on a node, outside a transaction block: whether the statement sent on a dblink connection still runs (sleeps 10 ms if so); a cancel of this session cancels it there too.';
-- apply_ddl() on a node, a statement outside a transaction block that
-- failed on target: if no target has the change yet (it failed on the
-- first), the change is not kept: it is closed as abandoned, and the
-- invalid indexes a failed CREATE INDEX CONCURRENTLY left on the target
-- are returned as the statements that drop them (the caller runs them on
-- its connection, outside a transaction block). A change some target has
-- stays open, to be finished or abandoned: NULL. Called over the statement's
-- own dblink connection, so the ledger is written whatever the caller's
-- transaction does next.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_failed(change_id bigint, target text) RETURNS text[]
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    x   record;
    rel regclass;
BEGIN
    PERFORM shardid_internal._apply_ddl_owner(c.table_name)
       FROM shardid.ddl_changes AS c WHERE c.change_id = _apply_ddl_failed.change_id;
    IF EXISTS (SELECT FROM shardid.ddl_applied AS a WHERE a.change_id = _apply_ddl_failed.change_id AND a.done) THEN
        RETURN NULL;
    END IF;
    UPDATE shardid.ddl_changes AS c SET finished_at = now(), abandoned = true
     WHERE c.change_id = _apply_ddl_failed.change_id AND c.finished_at IS NULL;
    SELECT t.schema_name, t.table_name INTO x
      FROM shardid_internal._apply_ddl_targets(_apply_ddl_failed.change_id, NULL) AS t
     WHERE t.target = _apply_ddl_failed.target;
    rel := to_regclass(format('%I.%I', x.schema_name, x.table_name));
    RETURN ARRAY(SELECT format('DROP INDEX CONCURRENTLY IF EXISTS %I.%I', x.schema_name, i.relname)
                   FROM pg_index AS ix JOIN pg_class AS i ON i.oid = ix.indexrelid
                  WHERE ix.indrelid = rel AND NOT ix.indisvalid
                  ORDER BY i.relname);
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_failed(bigint, text) IS
    'apply_ddl() on a node, CONCURRENTLY: after a failed statement, closes the change as abandoned if no target has it (returning the statements that drop the invalid indexes left on the target); a change some target has stays open.';
-- apply_ddl() on a node, CONCURRENTLY: whether a target has each of the
-- template's indexes, valid and with the template's definition (the same
-- shape, _index_statement(): the definition without name and table). A retried CREATE INDEX that finds
-- its name taken ("already exists": the interrupted run may have built
-- it before the ledger recorded it) counts as done only then; an index of
-- that name that is another index is an error.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_same_indexes(change_id bigint, target text) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT NOT EXISTS (
        SELECT FROM pg_index AS x JOIN pg_class AS i ON i.oid = x.indexrelid
         WHERE x.indrelid = to_regclass(format('%I.%I', t.template_schema, t.template_name))
           AND NOT EXISTS (
               SELECT FROM pg_index AS y JOIN pg_class AS j ON j.oid = y.indexrelid
                WHERE y.indrelid = to_regclass(format('%I.%I', target, t.table_name))
                  AND j.relname = i.relname AND y.indisvalid
                  AND shardid_internal._index_statement(y.indexrelid) = shardid_internal._index_statement(x.indexrelid)))
      FROM shardid.ddl_changes AS c JOIN shardid.sharded_tables AS t ON t.table_name = c.table_name
     WHERE c.change_id = _apply_ddl_same_indexes.change_id AND _apply_ddl_same_indexes.target <> 'template'
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_same_indexes(bigint, text) IS
    'apply_ddl() on a node, CONCURRENTLY: whether a shard''s copy has each of the template''s indexes, valid, with the template''s definition; a retried CREATE INDEX whose name is taken counts as done only then.';
-- apply_ddl(), outside a transaction block: waits for the statement sent
-- on conn (_apply_ddl_busy: a cancel of this session cancels it on its
-- server too) for change_id's target, in the ledger of the server at the
-- other end of conn. Its error is raised (node named), except on a
-- retried target when the error says the change is there already (42704
-- undefined, for a DROP; 42P07 duplicate, for a CREATE INDEX whose name
-- is taken by an index that is the template's, _apply_ddl_same_indexes):
-- the interrupted run had finished before the ledger recorded it. Before the error is
-- raised, that ledger hears of it over conn (_apply_ddl_failed): a change
-- no target has is closed there, not kept, and the invalid index the
-- statement left is dropped.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_result(conn text, node text, retry boolean, change_id bigint, target text)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    st      text;
    msg     text;
    det     text;
    hnt     text;
    cleanup text[];
    sql     text;
BEGIN
    WHILE shardid_internal._apply_ddl_busy(conn) LOOP
    END LOOP;
    BEGIN
        PERFORM shardid_internal._node_wait(conn, node);
    EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
    END;
    IF st IS NULL THEN
        RETURN;
    END IF;
    -- a retried target that has the change already: the interrupted run
    -- made it; an index of that name must be the template's
    IF retry AND st IN ('42P07', '42704') THEN
        IF st = '42704' OR COALESCE(shardid_internal._node(conn, format('SELECT shardid_internal._apply_ddl_same_indexes(%s, %L)', change_id, target),
                                                           node)::boolean, false) THEN
            RAISE NOTICE 'apply_ddl: % (the interrupted run had made the change)', msg;
            RETURN;
        END IF;
        det := concat_ws(' ', NULLIF(det, ''), format('An index of that name is on %s, but it is not the template''s: drop or rename it there, then CALL apply_ddl() again.', target));
    END IF;
    IF st NOT IN ('08000', '08003', '08006') THEN
        cleanup := shardid_internal._node(conn, format('SELECT shardid_internal._apply_ddl_failed(%s, %L)', change_id, target), node)::text[];
        IF cleanup IS NOT NULL THEN
            RAISE NOTICE 'apply_ddl: change % failed on its first table (%): not kept', change_id, target;
        END IF;
        FOREACH sql IN ARRAY COALESCE(cleanup, '{}') LOOP
            PERFORM shardid_internal._node(conn, sql, node);
        END LOOP;
    END IF;
    PERFORM shardid_internal._raise(st, format('%s (on %s)', msg, CASE WHEN target = 'template' THEN 'the template' ELSE target END),
                                    det, hnt);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._apply_ddl_result(text, text, boolean, bigint, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_ddl_result(text, text, boolean, bigint, text) IS
    'apply_ddl(), outside a transaction block: waits for the statement sent on a dblink connection (a cancel cancels it there too), raises its error unless a retried target already had the change; a change no target has is closed first, its invalid index dropped.';
-- apply_ddl(), CONCURRENTLY (_apply_ddl_concurrently): the next target of
-- the change in the ledger of the node the statements run on, claimed
-- (_apply_ddl_claim: busy are the targets this session's other connections
-- change): here (node NULL), or on node over conn, the idle connection the
-- statement is then sent on (the claim commits there on its own).
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_claim_next(conn text, node text, change_id bigint, busy text[],
                                                                  OUT target text, OUT statement text, OUT owner name,
                                                                  OUT cleanup text[], OUT retry boolean)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF node IS NULL THEN
        SELECT * INTO target, statement, owner, cleanup, retry FROM shardid_internal._apply_ddl_claim(change_id, busy);
        RETURN;
    END IF;
    SELECT * INTO target, statement, owner, cleanup, retry
      FROM jsonb_to_record(shardid_internal._node(conn, format('SELECT pg_catalog.row_to_json(c) FROM shardid_internal._apply_ddl_claim(%s, %L) AS c',
                                                               change_id, busy), node)::jsonb)
           AS c(target text, statement text, owner name, cleanup text[], retry boolean);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._apply_ddl_claim_next(text, text, bigint, text[]) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_ddl_claim_next(text, text, bigint, text[]) IS
    'apply_ddl(), CONCURRENTLY: claims the next target of a change in the ledger here (node NULL) or on a node over a dblink connection; its statement, owner, the cleanup of an interrupted run, whether it is a retry.';
-- apply_ddl(), CONCURRENTLY on several connections at once: the
-- next statement to have ended among those sent on conns (targets[i]: the
-- table conns[i] changes, NULL when idle), its result taken
-- (_apply_ddl_result: its error raised, a retried target that had the
-- change counted) and its target marked done in the ledger; returns its
-- index. NULL, after sleeping 10 ms, when all still run: the caller
-- commits between calls, since each CREATE INDEX CONCURRENTLY waits for
-- this session's transaction to end. Before an error is raised, the
-- statements still running on the other connections are cancelled and
-- those connections closed (their tables stay running in the ledger, and
-- the re-CALL drops what they left and changes them again); a cancel of
-- this session (statement_timeout, Ctrl-C) cancels every one of them,
-- which would otherwise run on and commit unrecorded. node: the node the
-- connections reach from the router, whose ledger is written over the
-- connection that ended (NULL: this one, on a node).
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_collect(change_id bigint, conns text[], targets text[], retries boolean[],
                                                               node text)
    RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    dbl   name := shardid_internal._dblink_schema();
    i     integer;
    j     integer;
    ended integer;
    busy  integer;
    st    text;
    msg   text;
    det   text;
    hnt   text;
BEGIN
    BEGIN
        FOR i IN 1 .. cardinality(conns) LOOP
            CONTINUE WHEN targets[i] IS NULL;
            EXECUTE format('SELECT %I.dblink_is_busy($1)', dbl) INTO busy USING conns[i];
            IF busy = 0 THEN
                ended := i;
                EXIT;
            END IF;
        END LOOP;
        IF ended IS NULL THEN
            PERFORM pg_sleep(0.01);
            RETURN NULL;
        END IF;
    EXCEPTION WHEN query_canceled THEN
        FOR j IN 1 .. cardinality(conns) LOOP
            IF targets[j] IS NOT NULL THEN
                EXECUTE format('SELECT %I.dblink_cancel_query($1)', dbl) USING conns[j];
            END IF;
        END LOOP;
        RAISE;
    END;
    BEGIN
        PERFORM shardid_internal._apply_ddl_result(conns[ended], node, retries[ended], change_id, targets[ended]);
    EXCEPTION WHEN OTHERS OR query_canceled THEN
        GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
        FOR j IN 1 .. cardinality(conns) LOOP
            IF j <> ended AND targets[j] IS NOT NULL THEN
                PERFORM shardid_internal._node_close(conns[j]);
            END IF;
        END LOOP;
        PERFORM shardid_internal._raise(st, msg, det, hnt);
    END;
    IF node IS NULL THEN
        PERFORM shardid_internal._apply_ddl_mark_done(change_id, targets[ended]);
    ELSE
        PERFORM shardid_internal._node(conns[ended], format('SELECT shardid_internal._apply_ddl_mark_done(%s, %L)', change_id, targets[ended]), node);
    END IF;
    RETURN ended;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._apply_ddl_collect(bigint, text[], text[], boolean[], text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_ddl_collect(bigint, text[], text[], boolean[], text) IS
    'apply_ddl(), CONCURRENTLY on several dblink connections (to this node, or from the router to node, whose ledger is written over them): takes the result of the next statement to have ended and marks its target done, returning its index; NULL (after 10 ms) when all still run. An error cancels the others first; a cancel of this session cancels them all.';
-- apply_ddl(): whether this database is a router (nodes are registered).
-- A role that may not read shardid.nodes is no router's administrator:
-- it changes this database's own tables (those it owns) only.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_on_nodes() RETURNS boolean
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT has_table_privilege('shardid.nodes', 'SELECT') THEN
        RETURN false;
    END IF;
    RETURN EXISTS (SELECT FROM shardid.nodes);
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_on_nodes() IS
    'apply_ddl(): true on a router (nodes registered and readable by the caller), where the change goes to every node.';
-- apply_ddl() on the router: the identity a router's change carries to
-- every node (this cluster's system identifier, this database's OID, the
-- change's ID), so that a node knows a change it was sent before, whatever
-- interrupted the router meanwhile.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_origin(change_id bigint) RETURNS text
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT format('%s/%s/%s', (SELECT s.system_identifier FROM pg_control_system() AS s),
                  (SELECT d.oid FROM pg_database AS d WHERE d.datname = current_database()), change_id)
$$;

REVOKE ALL ON FUNCTION shardid_internal._apply_ddl_origin(bigint) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_ddl_origin(bigint) IS
    'apply_ddl() on the router: the identity of a router''s change that the nodes record (system identifier/database OID/change ID).';
-- The router side of apply_ddl() and run_on_shards() (fn names it in the
-- messages): refuses NULL arguments (22004), a caller who may not read
-- shardid.nodes (42501: both connect to every node as it says, so they
-- are for administrators; what names what the caller may not do), a
-- router without dblink (_dblink_schema) and a template name that is not
-- schema-qualified (22023: the router has no search_path of the nodes to
-- resolve it with). Returns the template's schema and name, as
-- parse_ident() reads them.
CREATE OR REPLACE FUNCTION shardid_internal._router_template(fn text, what text, template text, command text) RETURNS text[]
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    parts text[];
BEGIN
    IF template IS NULL OR command IS NULL THEN
        RAISE EXCEPTION '% arguments must not be NULL', fn USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF NOT has_table_privilege('shardid.nodes', 'SELECT') THEN
        RAISE EXCEPTION 'permission denied to % on the nodes', what
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = format('On a router, %s connects to every node as shardid.nodes says: it is for administrators.', fn);
    END IF;
    PERFORM shardid_internal._dblink_schema();
    parts := parse_ident(template);
    IF cardinality(parts) <> 2 THEN
        RAISE EXCEPTION 'template "%" must be schema-qualified on a router', template
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'The router has no search_path of the nodes to resolve it with.';
    END IF;
    RETURN parts;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._router_template(text, text, text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._router_template(text, text, text, text) IS
    'Router, apply_ddl() and run_on_shards(): refuses NULL arguments, a caller who may not read shardid.nodes, no dblink, and a template name that is not schema-qualified; returns the template''s schema and name.';
-- apply_ddl() on the router: checks the caller (an administrator, who may
-- read shardid.nodes), dblink and the command (for the template's name as
-- given, schema-qualified), then resumes the unfinished change of the same
-- command or records a new one; 55000 for a different unfinished one.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_router_start(template text, command text) RETURNS shardid.ddl_changes
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    parts  text[];
    canon  text;
    chk    record;
    change shardid.ddl_changes;
BEGIN
    parts := shardid_internal._router_template('apply_ddl()', 'change sharded tables', template, command);
    canon := format('%I.%I', parts[1], parts[2]);
    chk := shardid_internal._apply_ddl_check(command, parts[1], parts[2]);
    PERFORM shardid_internal._apply_ddl_check(command, 'shard_0000', parts[2]);
    LOCK TABLE shardid.ddl_changes IN SHARE ROW EXCLUSIVE MODE;
    SELECT c.* INTO change FROM shardid.ddl_changes AS c WHERE c.template = canon AND c.finished_at IS NULL;
    IF change.change_id IS NOT NULL AND (change.command <> command OR NOT change.on_nodes) THEN
        RAISE EXCEPTION 'sharded table % has an unfinished change: %', parts[2], change.command
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('Change %s, started by %I (shardid.ddl_progress shows how far it got); a different command waits until it is finished or abandoned.',
                                  change.change_id, change.requested_by),
                  HINT = format('Finish it: CALL shardid.apply_ddl(%L, %L); or leave it as far as it got: SELECT * FROM shardid.abandon_ddl(%L);',
                                canon, change.command, canon);
    END IF;
    IF change.change_id IS NULL THEN
        INSERT INTO shardid.ddl_changes AS c (template, table_name, command, kind, concurrent, on_nodes)
            VALUES (canon, parts[2], command, chk.kind, chk.concurrent, true)
            RETURNING c.* INTO change;
    END IF;
    RETURN change;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._apply_ddl_router_start(text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_ddl_router_start(text, text) IS
    'apply_ddl() on the router: checks caller, dblink and command, then resumes the unfinished change of the same command or records a new one (55000 for a different one).';
-- apply_ddl() on the router: the next node (in name order) that does not
-- have a change yet; NULL when every node has it.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_next_node(change_id bigint) RETURNS text
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT n.node FROM shardid.nodes AS n
     WHERE NOT EXISTS (SELECT FROM shardid.ddl_applied AS a
                        WHERE a.change_id = _apply_ddl_next_node.change_id AND a.target = n.node AND a.done)
     ORDER BY n.node COLLATE "C"
     LIMIT 1
$$;

REVOKE ALL ON FUNCTION shardid_internal._apply_ddl_next_node(bigint) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_ddl_next_node(bigint) IS
    'apply_ddl() on the router: the next node, in name order, that lacks a change; NULL when none does.';
-- apply_ddl() on the router, one node, over conn (_apply_ddl_connect:
-- search_path pinned, the node's statement ended soon after this session
-- ends): a statement that runs in a transaction block is applied by the
-- node's own loop (_apply_ddl_here, with the router's change as origin, so
-- a change the node finished already is not run again), waited for with a
-- cancel of this session cancelling it there too; returns NULL. Otherwise
-- the change is opened on the node (_apply_ddl_open) and its change id
-- returned for _apply_ddl_concurrently(); NULL when the node has nothing to
-- run. The options record o goes to the node whole, as jsonb read back by
-- the node's _ddl_options() (an option that node does not know: 22023).
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_node_start(conn text, change_id bigint, node text, o shardid.ddl_options)
    RETURNS bigint
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c      shardid.ddl_changes;
    origin text := shardid_internal._apply_ddl_origin(change_id);
BEGIN
    SELECT * INTO STRICT c FROM shardid.ddl_changes AS d WHERE d.change_id = _apply_ddl_node_start.change_id;
    PERFORM shardid_internal._apply_ddl_connect(conn, node, NULL);
    IF NOT c.concurrent THEN
        PERFORM shardid_internal._node_send(conn, format('CALL shardid_internal._apply_ddl_here(%L, %L, shardid_internal._ddl_options(%L), %L)',
                                                         c.template, c.command, to_jsonb(o), origin));
        WHILE shardid_internal._apply_ddl_busy(conn) LOOP
        END LOOP;
        PERFORM shardid_internal._node_wait(conn, node);
        RETURN NULL;
    END IF;
    RETURN shardid_internal._node(conn, format('SELECT shardid_internal._apply_ddl_open(%L, %L, %L)', c.template, c.command, origin),
                                  node)::bigint;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._apply_ddl_node_start(text, bigint, text, shardid.ddl_options) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_ddl_node_start(text, bigint, text, shardid.ddl_options) IS
    'apply_ddl() on the router: runs a change on a node (statements in a transaction block: the node''s own loop, with the router''s change as origin), or opens it there and returns its change id (outside one); the options go whole; NULL when the node has nothing to run. A cancel of this session cancels the node''s statement.';
-- apply_ddl() on the router, one node, in one transaction of the router:
-- the change started (or resumed) there (_apply_ddl_node: a statement
-- that runs in a transaction block is applied by apply_ddl() on the node
-- itself), then, for one that cannot, up to o.connections tables at once,
-- each on a connection of its own to the node (_apply_ddl_concurrently,
-- the node's ledger written over them), and the node's change closed over
-- conn; then the node recorded here as having the change, and the
-- connection closed.
-- The node's error is returned (jsonb: sqlstate, message, detail, hint),
-- not raised, so that the router's procedure can record what it means
-- (_apply_ddl_router_failed) and commit before it raises it; a cancel of
-- this session is raised at once. The caller commits.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_on_node(conn text, change shardid.ddl_changes, node text, o shardid.ddl_options)
    RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    node_id bigint;
    there   shardid.ddl_changes := change;
    done    integer[] := '{0,0}';
    st      text;
    msg     text;
    det     text;
    hnt     text;
BEGIN
    PERFORM set_config('application_name', format('shardid apply_ddl %s node %s', change.template, node), false);
    node_id := shardid_internal._apply_ddl_node_start(conn, change.change_id, node, o);
    IF node_id IS NOT NULL THEN
        there.change_id := node_id;
        CALL shardid_internal._apply_ddl_concurrently(there, NULL, NULL, o, node, done);
        IF NOT shardid_internal._node(conn, format('SELECT shardid_internal._apply_ddl_close_change(%s)', node_id), node)::boolean THEN
            RAISE EXCEPTION 'node "%": change % is not finished after its last table', node, node_id
                USING ERRCODE = 'object_not_in_prerequisite_state';
        END IF;
    END IF;
    INSERT INTO shardid.ddl_applied (change_id, target, done) VALUES (change.change_id, node, true);
    PERFORM shardid_internal._node_close(conn);
    RETURN NULL;
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
    PERFORM shardid_internal._node_close(conn);
    RETURN jsonb_build_object('sqlstate', st, 'message', msg, 'detail', det, 'hint', hnt);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._apply_ddl_on_node(text, shardid.ddl_changes, text, shardid.ddl_options) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_ddl_on_node(text, shardid.ddl_changes, text, shardid.ddl_options) IS
    'apply_ddl() on the router: applies a change on one node (in a transaction block there, or up to connections tables at once over dblink connections of its own) and records the node as done; returns the node''s error (NULL if none); the caller commits.';
-- apply_ddl() on the router, after a node's error (err, from
-- _apply_ddl_on_node): if no node has kept the change (none recorded here
-- as done, and the failing node, asked on a connection of its own, holds
-- no change of this origin that is not abandoned: its first batch, or
-- first table, failed), the router's change is not kept either: closed as
-- abandoned, and another command may follow. Otherwise it stays open, to
-- be finished (re-CALL) or abandoned (abandon_ddl()). A node that cannot
-- be asked leaves it open. Returns err for the caller to raise once it
-- has committed.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_router_failed(change shardid.ddl_changes, node text, err jsonb)
    RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    conn CONSTANT text := 'shardid_apply_ddl_ask';
    kept bigint;
BEGIN
    IF EXISTS (SELECT FROM shardid.ddl_applied AS a WHERE a.change_id = change.change_id AND a.done) THEN
        RETURN err;
    END IF;
    BEGIN
        PERFORM shardid_internal._node_close(conn);
        PERFORM shardid_internal._apply_ddl_connect(conn, node, NULL);
        kept := shardid_internal._node(conn, format('SELECT count(*) FROM shardid.ddl_changes AS c WHERE c.origin = %L AND NOT c.abandoned',
                                                    shardid_internal._apply_ddl_origin(change.change_id)), node)::bigint;
        PERFORM shardid_internal._node_close(conn);
    EXCEPTION WHEN OTHERS THEN
        RETURN err;
    END;
    IF kept = 0 THEN
        UPDATE shardid.ddl_changes AS c SET finished_at = now(), abandoned = true
         WHERE c.change_id = change.change_id AND c.finished_at IS NULL;
        RAISE NOTICE 'apply_ddl: change % failed on node "%" before any node had it: not kept', change.change_id, node;
    END IF;
    RETURN err;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._apply_ddl_router_failed(shardid.ddl_changes, text, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_ddl_router_failed(shardid.ddl_changes, text, jsonb) IS
    'apply_ddl() on the router, after a node''s error: closes the router''s change as not kept when no node has it; returns the error for the caller to raise after its commit.';
-- apply_ddl() on a node, a statement that runs in a transaction block: the
-- change recorded (_apply_ddl_record) and its first batch run in one
-- transaction, so a change whose first batch fails is not kept: nothing is
-- left to finish or abandon. A new change whose first batch fails because
-- its object is there already (42701, 42P07, 42710 duplicate; 42703,
-- 42704 undefined, for a DROP or RENAME) while the ledger has the same
-- command finished for this template is a re-run (a migration run twice):
-- a NOTICE says so, nothing is kept, and made is -1. Otherwise made is how
-- many tables the batch changed (_apply_ddl_batch: up to batch_size, and
-- for no longer than batch_time) and after the last shard it changed; the
-- caller commits.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_first_batch(INOUT change shardid.ddl_changes, todo integer, total integer,
                                                                   batch_size integer, batch_time interval, OUT made integer,
                                                                   OUT after integer)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    fresh boolean := change.change_id IS NULL;
    prior shardid.ddl_changes;
    st    text;
    msg   text;
    det   text;
    hnt   text;
BEGIN
    BEGIN
        change := shardid_internal._apply_ddl_record(change, todo, total,
                                                     format('committing every %s tables%s', batch_size,
                                                            ' or ' || (round(extract(epoch FROM batch_time) * 1000, 1)::float8 || ' ms')));
        SELECT b.made, b.after INTO made, after FROM shardid_internal._apply_ddl_batch(change, batch_size, batch_time, 0, todo, NULL) AS b;
    EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
        SELECT c.* INTO prior FROM shardid.ddl_changes AS c
         WHERE fresh AND st IN ('42701', '42P07', '42710', '42703', '42704')
           AND c.template = change.template AND c.command = change.command
           AND c.finished_at IS NOT NULL AND NOT c.abandoned
         ORDER BY c.change_id DESC LIMIT 1;
        IF prior.change_id IS NULL THEN
            IF fresh THEN
                RAISE NOTICE 'apply_ddl: change % failed in its first batch: not kept', change.change_id;
            END IF;
            -- (a statement's error names its table already: _apply_ddl_batch)
            PERFORM shardid_internal._raise(st, msg, det, hnt);
        END IF;
        RAISE NOTICE 'apply_ddl: change % not kept: % had it already (%; change % ran the same command): nothing changed',
            change.change_id, change.template, msg, prior.change_id;
        made := -1;
    END;
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_first_batch(shardid.ddl_changes, integer, integer, integer, interval) IS
    'apply_ddl() on a node: records the change and runs its first batch in one transaction (a failed first batch keeps nothing); a re-run of a finished command (its object there already) is said in a NOTICE, nothing kept, made -1.';
-- apply_ddl() on a node, once the change is finished and committed: the
-- NOTICE that ends it: the tables changed by this CALL and those that had
-- the change already.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_notice_end(change shardid.ddl_changes, done integer, todo integer,
                                                                  total integer) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE NOTICE 'apply_ddl: change % of % finished: % tables changed now, % of % had it already',
        change.change_id, change.template, done, total - todo, total;
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_notice_end(shardid.ddl_changes, integer, integer, integer) IS
    'apply_ddl() on a node: the NOTICE that ends a change: tables changed now, and how many of all had it already.';
-- apply_ddl() on the router: records the change (_apply_ddl_router_start),
-- applies it on every node in name order, one router transaction per node
-- (_apply_ddl_on_node, with the options record o whole: every node
-- honours each option; a loopback, which names no node, was refused by
-- _ddl_options() with 22023), committing after each, then finishes it. A node's
-- error is raised once the router has recorded what it means
-- (_apply_ddl_router_failed: a change no node kept is not kept here
-- either) and committed. A
-- procedure of its own because it commits; executable by PUBLIC as
-- apply_ddl() is (only administrators get past _apply_ddl_router_start()).
-- No SET clause: it holds the loop and its COMMITs.
CREATE OR REPLACE PROCEDURE shardid_internal._apply_ddl_router(template text, command text, o shardid.ddl_options)
    LANGUAGE plpgsql
AS $$
DECLARE
    change shardid.ddl_changes;
    node   text;
    err    jsonb;
    conn   text := 'shardid_apply_ddl';
    app    text := pg_catalog.current_setting('application_name');
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid_internal._apply_ddl_router()',
                                             'after every node',
                                             'It is called by shardid.apply_ddl(): CALL that on its own.');
    change := shardid_internal._apply_ddl_router_start(template, command);
    COMMIT;
    RAISE NOTICE 'apply_ddl: change % of %: % on every node', change.change_id, change.template, change.kind;
    LOOP
        node := shardid_internal._apply_ddl_next_node(change.change_id);
        EXIT WHEN node IS NULL;
        err := shardid_internal._apply_ddl_on_node(conn, change, node, o);
        IF err IS NOT NULL THEN
            err := shardid_internal._apply_ddl_router_failed(change, node, err);
            COMMIT;
            PERFORM shardid_internal._raise(err OPERATOR(pg_catalog.->>) 'sqlstate', err OPERATOR(pg_catalog.->>) 'message',
                                            err OPERATOR(pg_catalog.->>) 'detail', err OPERATOR(pg_catalog.->>) 'hint');
        END IF;
        COMMIT;
        RAISE NOTICE 'apply_ddl: node % done', node;
    END LOOP;
    PERFORM shardid_internal._apply_ddl_close_change(change.change_id);
    PERFORM pg_catalog.set_config('application_name', app, false);
    COMMIT;
    RAISE NOTICE 'apply_ddl: change % of % finished on every node', change.change_id, change.template;
END
$$;

COMMENT ON PROCEDURE shardid_internal._apply_ddl_router(text, text, shardid.ddl_options) IS
    'apply_ddl() on the router: records the change and applies it on every node in name order with the same options, committing after each node. Executable by PUBLIC (apply_ddl() calls it; its functions check the caller).';
-- apply_ddl(), a statement that cannot run in a transaction block
-- (CONCURRENTLY): up to o.connections tables of a node at once, each on a
-- dblink connection of its own (_apply_ddl_connect): on a node to the node
-- itself (node NULL; o.loopback: its connect string), from the router to
-- that node (node; change: the node's change, the ledger there). Each
-- table is claimed in the node's ledger before its statement is sent
-- (_apply_ddl_claim_next) and marked done once it ended
-- (_apply_ddl_collect); on a node this commits while the statements run so
-- that this session holds no old snapshot (they wait for their snapshots
-- together); the router holds none there, and calls this from the
-- function that catches a node's error (no COMMIT: it needs none). Until one table has the change, one table
-- at a time: a change whose first table fails is not kept
-- (_apply_ddl_failed), and no other build may have started meanwhile.
-- done counts the tables ({tables, batches}, for the closing NOTICE); todo
-- and total are the node's (NULL from the router: one at a time until a
-- table has the change). A procedure of its own because it commits; executable by PUBLIC as
-- apply_ddl() is (the claim checks the caller). No SET clause: it holds
-- the loop and its COMMITs.
CREATE OR REPLACE PROCEDURE shardid_internal._apply_ddl_concurrently(change shardid.ddl_changes, todo integer, total integer,
                                                                    o shardid.ddl_options, node text, INOUT done integer[])
    LANGUAGE plpgsql
AS $$
DECLARE
    c       record;
    conns   text[] := '{}';
    targets text[] := '{}';   -- the table each connection changes, NULL when idle
    retries boolean[] := '{}';
    i       integer;
    wide    boolean := todo OPERATOR(pg_catalog.<) total;  -- some table has the change
    more    boolean := true;
    app     text := pg_catalog.current_setting('application_name');
BEGIN
    PERFORM shardid_internal._require_commit(node IS NOT NULL OR shardid_internal._commit_allowed(), 'shardid_internal._apply_ddl_concurrently()',
                                             'after every table',
                                             'It is called by shardid.apply_ddl(): CALL that on its own.');
    LOOP
        -- an idle connection (opened when first needed) gets the next table
        FOR i IN 1 .. CASE WHEN wide THEN o.connections ELSE 1 END LOOP
            EXIT WHEN NOT more;
            CONTINUE WHEN targets[i] IS NOT NULL;
            IF conns[i] IS NULL THEN
                conns[i] := pg_catalog.format('shardid_apply_ddl_%s', i);
                PERFORM shardid_internal._apply_ddl_connect(conns[i], node, o.loopback);
            END IF;
            SELECT * INTO c FROM shardid_internal._apply_ddl_claim_next(conns[i], node, change.change_id, targets);
            IF c.target IS NULL THEN
                more := false;
                EXIT;
            END IF;
            IF node IS NULL THEN
                COMMIT;
            END IF;
            PERFORM shardid_internal._apply_ddl_send(conns[i], node, c.cleanup, c.statement);
            targets[i] := c.target;
            retries[i] := c.retry;
        END LOOP;
        EXIT WHEN pg_catalog.cardinality(pg_catalog.array_remove(targets, NULL)) OPERATOR(pg_catalog.=) 0;
        PERFORM pg_catalog.set_config('application_name',
                                      pg_catalog.format('shardid apply_ddl %s %s/%s', change.template, done[1], todo), false);
        -- commit while they run: this session must hold no old snapshot
        i := shardid_internal._apply_ddl_collect(change.change_id, conns, targets, retries, node);
        IF node IS NULL THEN
            COMMIT;
        END IF;
        IF i IS NOT NULL THEN
            targets[i] := NULL;
            wide := true;
            done := shardid_internal._batch_progress('apply_ddl', 'tables', done, 1, todo, o.batch_size);
        END IF;
    END LOOP;
    FOR i IN 1 .. pg_catalog.cardinality(conns) LOOP
        PERFORM shardid_internal._node_close(conns[i]);
    END LOOP;
    PERFORM pg_catalog.set_config('application_name', app, false);
END
$$;

COMMENT ON PROCEDURE shardid_internal._apply_ddl_concurrently(shardid.ddl_changes, integer, integer, shardid.ddl_options, text, integer[]) IS
    'apply_ddl(), CONCURRENTLY: up to connections tables of a node at once, each over a dblink connection of its own (to this node, or from the router to node), claimed and recorded in the node''s ledger, committing while they run on a node (one at a time until a table has the change). Executable by PUBLIC (apply_ddl() calls it; the claim checks the caller).';
-- apply_ddl() on a node: the change started or resumed (_apply_ddl_start),
-- then recorded with its first batch in one transaction (a statement that
-- runs in a transaction block: _apply_ddl_first_batch; a first batch that
-- fails keeps nothing) and the rest batch by batch, committing after
-- each (a batch ends after batch_size tables or once it has held its
-- first table's lock for batch_time: _apply_ddl_batch); CONCURRENTLY on
-- up to connections tables at once (_apply_ddl_concurrently). Progress
-- NOTICEs every batch_size tables. o: the options, one record (from the
-- router too, read back by _ddl_options). origin is the router's change when the
-- router sent it: a change the node finished already, or a template the
-- node does not have, is not run (_apply_ddl_skip). shardid.apply_ddl()
-- calls it on a node, the router on each node. A procedure because it
-- commits; executable by PUBLIC as apply_ddl() is (its functions check the
-- caller). No SET clause: it holds the loop and its COMMITs.
CREATE OR REPLACE PROCEDURE shardid_internal._apply_ddl_here(template text, command text, o shardid.ddl_options, origin text DEFAULT NULL)
    LANGUAGE plpgsql
AS $$
DECLARE
    s      record;
    f      record;
    change shardid.ddl_changes;
    b      record;
    done   integer[] := '{0,0}';  -- tables, batches
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid.apply_ddl()',
                                             'after every batch',
                                             'CALL it on its own.');
    SELECT * INTO s FROM shardid_internal._apply_ddl_start(template, command, true, origin) AS x;
    IF shardid_internal._apply_ddl_skip(template, command, s.state) THEN
        RETURN;
    END IF;
    change := s.change;
    IF change.concurrent THEN
        IF shardid_internal._apply_ddl_rerun(change) THEN
            RETURN;
        END IF;
        change := shardid_internal._apply_ddl_record(change, s.todo, s.total,
                                                     pg_catalog.format('up to %s at a time outside a transaction block', o.connections));
        COMMIT;
        CALL shardid_internal._apply_ddl_concurrently(change, s.todo, s.total, o, NULL, done);
    ELSE
        SELECT * INTO f FROM shardid_internal._apply_ddl_first_batch(change, s.todo, s.total, o.batch_size, o.batch_time) AS x;
        change := f.change;
        b := f;
        COMMIT;
        IF b.made OPERATOR(pg_catalog.<) 0 THEN
            RETURN;
        END IF;
        WHILE b.made IS NOT NULL LOOP
            done := shardid_internal._batch_progress('apply_ddl', 'tables', done, b.made, s.todo, o.batch_size);
            SELECT * INTO b FROM shardid_internal._apply_ddl_batch(change, o.batch_size, o.batch_time, done[1], s.todo, b.after) AS x;
            COMMIT;
        END LOOP;
    END IF;
    PERFORM shardid_internal._apply_ddl_close_change(change.change_id);
    COMMIT;
    PERFORM shardid_internal._apply_ddl_notice_end(change, done[1], s.todo, s.total);
END
$$;

COMMENT ON PROCEDURE shardid_internal._apply_ddl_here(text, text, shardid.ddl_options, text) IS
    'apply_ddl() on a node: starts or resumes a change and runs it batch by batch (the first batch with the change''s record: a failed first batch keeps nothing; a re-run of a finished command changes nothing; a batch commits after batch_size tables or batch_time), or CONCURRENTLY on up to connections tables at once; origin: the router''s change. Executable by PUBLIC (its functions check the caller).';
-- apply_ddl(template, command): one DDL statement (%s: each table's
-- qualified name) on a sharded table's template and its copy in every
-- shard (a node: _apply_ddl_here), or on every node in name order (the
-- router: _apply_ddl_router), as the template's owner; batches that commit
-- after batch_size tables or batch_time, whichever comes first (every
-- table keeps its lock until its batch commits), and a ledger
-- (ddl_changes, ddl_applied) so that a re-CALL finishes what is missing
-- and abandon_ddl() closes what will not be finished; CONCURRENTLY on up
-- to connections tables at once over dblink, on every node from a router
-- too. The options are one record (shardid.ddl_options), built and checked
-- here once and passed whole. No SET clause (it COMMITs): it only chooses
-- the loop.
CREATE OR REPLACE PROCEDURE shardid.apply_ddl(template text, command text, batch_size integer DEFAULT 256,
                                             loopback text DEFAULT NULL, batch_time interval DEFAULT '100 ms',
                                             connections integer DEFAULT 4)
    LANGUAGE plpgsql
AS $$
DECLARE
    o shardid.ddl_options;
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid.apply_ddl()',
                                             'after every batch',
                                             'CALL it on its own.');
    o := shardid_internal._ddl_options(pg_catalog.jsonb_build_object('batch_size', batch_size, 'batch_time', batch_time,
                                                                     'loopback', loopback, 'connections', connections));
    IF shardid_internal._apply_ddl_on_nodes() THEN
        CALL shardid_internal._apply_ddl_router(template, command, o);
    ELSE
        CALL shardid_internal._apply_ddl_here(template, command, o);
    END IF;
END
$$;

COMMENT ON PROCEDURE shardid.apply_ddl(text, text, integer, text, interval, integer) IS
    'Runs one DDL statement (%s = each table''s schema-qualified name) on a sharded table''s template and every shard''s copy (a node), or on every node in name order (a router), as the template''s owner; commits per batch of up to batch_size tables, sooner once a batch has held its first table''s lock for batch_time (NULL: no time bound), recorded in shardid.ddl_changes / ddl_applied, so a re-CALL of the same command finishes what is missing. CONCURRENTLY runs on up to connections tables of a node at once, each over a dblink connection of its own (loopback: the node''s own connect string; refused on a router, whose connections go to each node). The options are one record, shardid.ddl_options, checked once and passed whole, from a router to every node too. Progress: NOTICEs, application_name. CALL it on its own.';
-- abandon_ddl(template, undo => true): the way back (issue 46)
-- What undoes one apply_ddl() statement, read by PostgreSQL's parser
-- (src/pg/ddl_inverse.cpp), for abandon_ddl(template, undo => true):
-- inverse is DROP INDEX (a CREATE INDEX), DROP CONSTRAINT (a named ADD
-- CONSTRAINT), SET DEFAULT or SET STATISTICS (the previous value of
-- column object_name), NULL when the statement has none; what names the
-- statement's change in words (ADD COLUMN, ALTER COLUMN TYPE, ...).
CREATE OR REPLACE FUNCTION shardid_internal._ddl_inverse(statement text, OUT inverse text, OUT object_name text, OUT what text)
    LANGUAGE c STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_ddl_inverse';

COMMENT ON FUNCTION shardid_internal._ddl_inverse(text) IS
    'abandon_ddl(undo): parses one apply_ddl() statement and says what undoes it (DROP INDEX, DROP CONSTRAINT, the previous SET DEFAULT or SET STATISTICS of a column; NULL: no safe inverse), the object it names, and the change in words.';
-- abandon_ddl(template, undo => true): the command (%s: each table's
-- name) that reverses change, an unfinished apply_ddl() change of the
-- template schema.name, or the refusal of one that has no safe inverse
-- (0A000: ADD or DROP COLUMN, a type change, ...), whose HINT is the
-- apply_ddl() call that completes it on the tables that lack it. A CREATE
-- INDEX is undone by dropping the index it names (the parser's name,
-- checked against the catalog where the tables are), CONCURRENTLY when it
-- was built so; a named ADD CONSTRAINT by dropping that constraint; SET
-- DEFAULT, DROP DEFAULT and SET STATISTICS by the column's previous
-- value, read from the tables that lack the change (previous: the
-- distinct values found there, JSON null for no default); 55000 when
-- none or several are found.
CREATE OR REPLACE FUNCTION shardid_internal._undo_ddl_inverse(change shardid.ddl_changes, previous jsonb) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    parts  text[] := parse_ident(change.template);
    chk    record;
    inv    record;
    suffix text;
    prev   jsonb;
    finish text := format('Complete it on the tables that lack it instead: CALL shardid.apply_ddl(%L, %L);', change.template, change.command);
BEGIN
    chk := shardid_internal._apply_ddl_check(change.command, parts[2], parts[2]);
    inv := shardid_internal._ddl_inverse(chk.statement);
    IF inv.inverse IS NULL THEN
        RAISE EXCEPTION 'abandon_ddl() cannot undo % of %: it has no safe inverse', inv.what, change.template
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = format('Change %s (%s) is undone only by completing it or by a change of your own; undoing it could lose data or cannot be derived from the statement.',
                                  change.change_id, change.command),
                  HINT = finish;
    END IF;
    IF inv.inverse = 'DROP INDEX' THEN
        -- DROP INDEX %s_suffix names the index after each table
        suffix := substr(inv.object_name, length(parts[2]) + 1);
        IF left(inv.object_name, length(parts[2])) <> parts[2] OR suffix !~ '^[a-z_][a-z0-9_$]*$' THEN
            RAISE EXCEPTION 'abandon_ddl() cannot undo % of %: index % is not named after the table', inv.what, change.template,
                            quote_ident(inv.object_name)
                USING ERRCODE = 'feature_not_supported',
                      DETAIL = format('apply_ddl() drops an index of every copy as DROP INDEX %%s_suffix, so the index name must be %s followed by lower-case letters, digits or underscores.',
                                      quote_ident(parts[2])),
                      HINT = finish;
        END IF;
        RETURN format('DROP INDEX%s IF EXISTS %%s%s', CASE WHEN chk.concurrent THEN ' CONCURRENTLY' ELSE '' END, suffix);
    END IF;
    IF inv.inverse = 'DROP CONSTRAINT' THEN
        RETURN format('ALTER TABLE %%s DROP CONSTRAINT IF EXISTS %I', inv.object_name);
    END IF;
    -- SET DEFAULT, SET STATISTICS: the one previous value
    IF jsonb_array_length(COALESCE(previous, '[]')) <> 1 THEN
        RAISE EXCEPTION 'abandon_ddl() cannot undo % of %: the previous value of column % is not known', inv.what, change.template,
                        quote_ident(inv.object_name)
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = CASE WHEN jsonb_array_length(COALESCE(previous, '[]')) = 0
                                THEN 'No table that lacks the change has the column, to show the value the change replaced.'
                                ELSE format('The tables that lack the change do not agree on it: %s.', previous) END,
                  HINT = finish;
    END IF;
    prev := previous->0;
    IF inv.inverse = 'SET STATISTICS' THEN
        RETURN format('ALTER TABLE %%s ALTER COLUMN %I SET STATISTICS %s', inv.object_name, (prev #>> '{}')::integer);
    END IF;
    RETURN format('ALTER TABLE %%s ALTER COLUMN %I %s', inv.object_name,
                  CASE WHEN jsonb_typeof(prev) = 'null' THEN 'DROP DEFAULT' ELSE 'SET DEFAULT ' || (prev #>> '{}') END);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._undo_ddl_inverse(shardid.ddl_changes, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._undo_ddl_inverse(shardid.ddl_changes, jsonb) IS
    'abandon_ddl(undo): the command that reverses an unfinished change (DROP INDEX [CONCURRENTLY] of the index it made, DROP CONSTRAINT of the constraint it added, the previous default or statistics target), or 0A000 with the completing apply_ddl() call in the HINT for a change with no safe inverse (55000 when the previous value is not known).';
-- abandon_ddl(template, undo => true) on a node: the change to undo and
-- the tables that lack it. The change is the one a router sent (origin:
-- the router's change, finished here or not), else the open one of the
-- template; change_id is NULL when this node has none (a router's change
-- that never reached it: every table lacks it). Each target (the
-- template, then each registered shard's copy) with its table and
-- whether it has the change (done in the ledger) or was left running by
-- a statement outside a transaction block.
CREATE OR REPLACE FUNCTION shardid_internal._undo_ddl_original(template text, origin text)
    RETURNS TABLE (change_id bigint, target text, shard integer, schema_name name, table_name name, has boolean, running boolean)
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    WITH c AS (
        SELECT d.change_id FROM shardid.ddl_changes AS d
         WHERE d.template = _undo_ddl_original.template
           AND CASE WHEN _undo_ddl_original.origin IS NULL THEN d.finished_at IS NULL ELSE d.origin = _undo_ddl_original.origin END
    )
    SELECT (SELECT c.change_id FROM c), x.target, x.shard, x.schema_name, x.table_name,
           COALESCE(a.done, false), COALESCE(NOT a.done, false)
      FROM shardid.sharded_tables AS t
      CROSS JOIN LATERAL (SELECT 'template'::text AS target, NULL::integer AS shard, t.template_schema AS schema_name,
                                 t.template_name AS table_name
                          UNION ALL
                          SELECT s.schema_name::text, s.shard, s.schema_name, t.table_name
                            FROM shardid.shard_registry AS s) AS x
      LEFT JOIN shardid.ddl_applied AS a ON a.change_id = (SELECT c.change_id FROM c) AND a.target = x.target
     WHERE format('%I.%I', t.template_schema, t.template_name) = _undo_ddl_original.template
     ORDER BY x.shard NULLS FIRST
$$;

REVOKE ALL ON FUNCTION shardid_internal._undo_ddl_original(text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._undo_ddl_original(text, text) IS
    'abandon_ddl(undo) on a node: the change to undo (the router''s origin, else the open one; NULL if none) and every target of the template with its table, whether it has the change and whether a statement outside a transaction block left it running.';
-- abandon_ddl(template, undo => true) on a node, for a SET DEFAULT, DROP
-- DEFAULT or SET STATISTICS: the distinct values the column has on the
-- tables that lack the change (_undo_ddl_original), which still hold the
-- value it replaced: the default's expression as the catalog gives it
-- (JSON null: none), or the statistics target. An empty array when every
-- table has the change or the statement sets neither.
CREATE OR REPLACE FUNCTION shardid_internal._undo_ddl_previous(template text, command text, origin text) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    parts text[] := parse_ident(template);
    inv   record;
BEGIN
    inv := shardid_internal._ddl_inverse((shardid_internal._apply_ddl_check(command, parts[1], parts[2])).statement);
    IF inv.inverse IS DISTINCT FROM 'SET DEFAULT' AND inv.inverse IS DISTINCT FROM 'SET STATISTICS' THEN
        RETURN '[]';
    END IF;
    RETURN (SELECT COALESCE(jsonb_agg(DISTINCT v.value), '[]')
              FROM shardid_internal._undo_ddl_original(template, origin) AS o
              JOIN pg_class AS k ON k.oid = to_regclass(format('%I.%I', o.schema_name, o.table_name))
              JOIN pg_attribute AS a ON a.attrelid = k.oid AND a.attname = inv.object_name AND NOT a.attisdropped
              LEFT JOIN pg_attrdef AS d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
              CROSS JOIN LATERAL (SELECT CASE WHEN inv.inverse = 'SET DEFAULT' THEN COALESCE(to_jsonb(pg_get_expr(d.adbin, d.adrelid)), 'null')
                                              ELSE to_jsonb(COALESCE(a.attstattarget::integer, -1)) END AS value) AS v
             WHERE NOT o.has AND NOT o.running);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._undo_ddl_previous(text, text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._undo_ddl_previous(text, text, text) IS
    'abandon_ddl(undo) on a node: for a SET/DROP DEFAULT or SET STATISTICS change, the distinct values of the column on the tables that lack it (the value it replaced; JSON null: no default).';
-- abandon_ddl(template, undo => true) on a node: the change to undo
-- (_undo_ddl_original: the router's, by origin, or the open one) closed as
-- abandoned, and its inverse recorded as a change of its own (kind: the
-- inverse's, "undo of change N"; origin: the router's undo, NULL on a
-- node on its own) with every target that needs no undoing marked done
-- in its ledger, so that apply_ddl() of the inverse, which resumes it,
-- reverses the change only where it was applied: on the tables that have
-- it, and, for a CREATE INDEX CONCURRENTLY, on those a failed or
-- interrupted build left with an index of its name, invalid or the
-- template's (_apply_ddl_same_indexes: built before the ledger heard). Checked
-- first: the caller may change the table (_apply_ddl_owner), and the
-- inverse drops, on every copy, the very index the change made. A second
-- call for the same undo (undo_origin recorded here already, or an undo
-- open here) changes nothing. Returns {change_id, reversed: how many
-- tables the inverse will change}; NULL when this node has no such
-- template.
CREATE OR REPLACE FUNCTION shardid_internal._undo_ddl_prepare(template text, inverse text, origin text, undo_origin text)
    RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t      shardid.sharded_tables;
    orig   shardid.ddl_changes;
    undo   shardid.ddl_changes;
    chk    record;
    oc     record;
    idx    text;
    o      record;
    n      integer;
    needs  text[];
    orig_index text;
BEGIN
    SELECT s.* INTO t FROM shardid.sharded_tables AS s WHERE format('%I.%I', s.template_schema, s.template_name) = template;
    IF t.table_name IS NULL THEN
        RETURN NULL;
    END IF;
    PERFORM shardid_internal._apply_ddl_owner(t.table_name);
    LOCK TABLE shardid.ddl_changes IN SHARE ROW EXCLUSIVE MODE;
    SELECT c.* INTO undo FROM shardid.ddl_changes AS c
     WHERE c.template = _undo_ddl_prepare.template
       AND CASE WHEN undo_origin IS NULL THEN c.finished_at IS NULL AND c.kind LIKE '% (undo of change %)'
                ELSE c.origin = undo_origin END;
    IF undo.change_id IS NOT NULL THEN
        RETURN jsonb_build_object('change_id', undo.change_id,
                                  'reversed', (SELECT count(*) FROM shardid_internal._apply_ddl_targets(undo.change_id, NULL)));
    END IF;
    SELECT c.* INTO orig FROM shardid.ddl_changes AS c
     WHERE c.change_id = (SELECT x.change_id FROM shardid_internal._undo_ddl_original(_undo_ddl_prepare.template, _undo_ddl_prepare.origin) AS x LIMIT 1);
    IF orig.change_id IS NOT NULL THEN
        oc := shardid_internal._apply_ddl_check(orig.command, t.template_schema, t.template_name);
        orig_index := oc.index_name;
    END IF;
    chk := shardid_internal._apply_ddl_check(inverse, t.template_schema, t.template_name);
    -- the inverse drops, on every table, the index the change made there
    IF chk.index_name IS NOT NULL AND orig.change_id IS NOT NULL THEN
        FOR o IN SELECT * FROM shardid_internal._undo_ddl_original(_undo_ddl_prepare.template, _undo_ddl_prepare.origin) LOOP
            idx := (shardid_internal._apply_ddl_check(inverse, o.schema_name, o.table_name)).index_name;
            IF idx IS DISTINCT FROM orig_index THEN
                RAISE EXCEPTION 'abandon_ddl() cannot undo % of %: % would drop index %, not %', orig.kind, template,
                                CASE WHEN o.target = 'template' THEN 'on the template it' ELSE 'on ' || o.target || ' it' END,
                                quote_ident(idx), quote_ident(orig_index)
                    USING ERRCODE = 'feature_not_supported',
                          DETAIL = 'The copies'' table name differs from the template''s, so DROP INDEX %s_suffix does not name the index the change made on each.',
                          HINT = format('Complete it on the tables that lack it instead: CALL shardid.apply_ddl(%L, %L);', template, orig.command);
            END IF;
        END LOOP;
    END IF;
    -- what needs undoing: a table with the change, or a running one
    -- (interrupted or failed) with an index of its name that is invalid
    -- or the template's (the build ended before the ledger heard of it)
    SELECT COALESCE(array_agg(g.target), '{}') INTO needs
      FROM shardid_internal._undo_ddl_original(_undo_ddl_prepare.template, _undo_ddl_prepare.origin) AS g
     WHERE g.has OR (g.running AND orig_index IS NOT NULL
                     AND EXISTS (SELECT FROM pg_index AS x JOIN pg_class AS i ON i.oid = x.indexrelid
                                  WHERE x.indrelid = to_regclass(format('%I.%I', g.schema_name, g.table_name))
                                    AND i.relname = orig_index
                                    AND (NOT x.indisvalid OR shardid_internal._apply_ddl_same_indexes(orig.change_id, g.target))));
    IF orig.finished_at IS NULL AND orig.change_id IS NOT NULL THEN
        UPDATE shardid.ddl_changes AS c SET finished_at = now(), abandoned = true WHERE c.change_id = orig.change_id;
    END IF;
    INSERT INTO shardid.ddl_changes AS c (template, table_name, command, kind, concurrent, on_nodes, origin)
        VALUES (_undo_ddl_prepare.template, t.table_name, inverse,
                format('%s (undo of change %s)', chk.kind, COALESCE(orig.change_id::text, 'none here')),
                chk.concurrent, false, undo_origin)
        RETURNING c.* INTO undo;
    INSERT INTO shardid.ddl_applied (change_id, target, shard, done)
        SELECT undo.change_id, g.target, g.shard, true
          FROM shardid_internal._undo_ddl_original(_undo_ddl_prepare.template, _undo_ddl_prepare.origin) AS g
         WHERE g.target <> ALL (needs);
    n := cardinality(needs);
    RAISE NOTICE 'abandon_ddl: change % of % abandoned; its undo, change %, reverses it on % tables: %',
        orig.change_id, template, undo.change_id, n, inverse;
    RETURN jsonb_build_object('change_id', undo.change_id, 'reversed', n);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._undo_ddl_prepare(text, text, text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._undo_ddl_prepare(text, text, text, text) IS
    'abandon_ddl(undo) on a node: closes the change to undo (the router''s origin, else the open one) as abandoned and records its inverse as a change (kind "... (undo of change N)", origin the router''s undo) whose ledger marks done every table that needs no undoing; returns its change_id and how many tables it will reverse (NULL without the template). A second call changes nothing.';
-- abandon_ddl(template, undo => true): what the undo will do, read only,
-- so that a refusal comes before anything changes and in the caller's
-- own session: the open change of the template (55000 when there is
-- none) and the command that reverses it (_undo_ddl_inverse: 0A000, with
-- the completing apply_ddl() call in the HINT, when it has none; for a
-- previous value, the tables that lack the change are read on every node
-- from a router). An open undo (interrupted: kind "... (undo of change
-- N)") is to be resumed as it is. Returns {template, command: the
-- inverse, original: the change undone, resume: the open undo's
-- change_id, NULL for a new undo}.
CREATE OR REPLACE FUNCTION shardid_internal._undo_ddl_plan(template text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    conn    CONSTANT text := 'shardid_undo_ddl';
    parts   text[];
    canon   text;
    c       shardid.ddl_changes;
    nd      record;
    prev    jsonb := '[]';
    inverse text;
BEGIN
    IF template IS NULL THEN
        RAISE EXCEPTION 'abandon_ddl() template must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF shardid_internal._apply_ddl_on_nodes() THEN
        parts := shardid_internal._router_template('abandon_ddl()', 'undo changes of sharded tables', template, '');
    ELSE
        SELECT ARRAY[t.template_schema::text, t.template_name::text] INTO parts
          FROM shardid.sharded_tables AS t
          JOIN pg_class AS k ON k.relname = t.template_name
          JOIN pg_namespace AS n ON n.oid = k.relnamespace AND n.nspname = t.template_schema
         WHERE k.oid = to_regclass(template);
        IF parts IS NULL THEN
            RAISE EXCEPTION '"%" is not the template of a sharded table', template
                USING ERRCODE = 'undefined_table',
                      HINT = 'shardid.sharded_tables lists the templates.';
        END IF;
    END IF;
    canon := format('%I.%I', parts[1], parts[2]);
    SELECT d.* INTO c FROM shardid.ddl_changes AS d WHERE d.template = canon AND d.finished_at IS NULL;
    IF c.change_id IS NULL THEN
        RAISE EXCEPTION 'sharded table % has no unfinished change to undo', canon
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'abandon_ddl(template, undo => true) reverses the open apply_ddl() change of a template (shardid.ddl_progress lists them).',
                  HINT = 'To reverse a finished change, CALL shardid.apply_ddl() with its inverse.';
    END IF;
    IF NOT shardid_internal._apply_ddl_on_nodes() THEN
        PERFORM shardid_internal._apply_ddl_owner(c.table_name);
    END IF;
    IF c.kind LIKE '% (undo of change %)' THEN
        RETURN jsonb_build_object('template', canon, 'command', c.command, 'resume', c.change_id,
                                  'original', substring(c.kind FROM '\(undo of change (\d+)\)$')::bigint);
    END IF;
    -- the previous value, where the statement sets one: from every node
    IF shardid_internal._apply_ddl_on_nodes() THEN
        FOR nd IN SELECT n.node FROM shardid.nodes AS n ORDER BY n.node COLLATE "C" LOOP
            PERFORM shardid_internal._node_close(conn);
            PERFORM shardid_internal._apply_ddl_connect(conn, nd.node, NULL);
            prev := prev || shardid_internal._node(conn, format('SELECT shardid_internal._undo_ddl_previous(%L, %L, %L)',
                                                                canon, c.command, shardid_internal._apply_ddl_origin(c.change_id)),
                                                   nd.node)::jsonb;
            PERFORM shardid_internal._node_close(conn);
        END LOOP;
    ELSE
        prev := shardid_internal._undo_ddl_previous(canon, c.command, NULL);
    END IF;
    SELECT COALESCE(jsonb_agg(DISTINCT v), '[]') INTO prev FROM jsonb_array_elements(prev) AS v;
    inverse := shardid_internal._undo_ddl_inverse(c, prev);
    RETURN jsonb_build_object('template', canon, 'command', inverse, 'original', c.change_id, 'resume', NULL);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._undo_ddl_plan(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._undo_ddl_plan(text) IS
    'abandon_ddl(undo), read only: the open change of a template and the command that reverses it, or its refusal (55000 no open change; 0A000 no safe inverse, the completing apply_ddl() call in the HINT; 55000 previous value not known); an open undo is returned to be resumed.';
-- abandon_ddl(template, undo => true), where the undo is driven (a node on
-- its own, or the router): the plan made again under the ledger's lock
-- (_undo_ddl_plan), then, for a new undo, on a node the change closed and
-- its inverse recorded here with the tables it needs (_undo_ddl_prepare);
-- on the router the change closed as abandoned and the inverse recorded
-- as a change of every node (kind "... (undo of change N)"), which
-- _undo_ddl_nodes() then records on each node. An open undo is returned
-- as it is, to be resumed. Returns the plan with change_id (the undo's)
-- and, on a node, reversed (how many tables it changes).
CREATE OR REPLACE FUNCTION shardid_internal._undo_ddl_start(template text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p    jsonb;
    u    shardid.ddl_changes;
    chk  record;
    tmpl text[];
BEGIN
    LOCK TABLE shardid.ddl_changes IN SHARE ROW EXCLUSIVE MODE;
    p := shardid_internal._undo_ddl_plan(template);
    IF NOT shardid_internal._apply_ddl_on_nodes() THEN
        RETURN p || shardid_internal._undo_ddl_prepare(p->>'template', p->>'command', NULL, NULL);
    END IF;
    IF p->>'resume' IS NOT NULL THEN
        RETURN p || jsonb_build_object('change_id', p->'resume');
    END IF;
    tmpl := parse_ident(p->>'template');
    chk := shardid_internal._apply_ddl_check(p->>'command', tmpl[1], tmpl[2]);
    UPDATE shardid.ddl_changes AS d SET finished_at = now(), abandoned = true WHERE d.change_id = (p->>'original')::bigint;
    INSERT INTO shardid.ddl_changes AS d (template, table_name, command, kind, concurrent, on_nodes)
        VALUES (p->>'template', tmpl[2], p->>'command', format('%s (undo of change %s)', chk.kind, p->>'original'), chk.concurrent, true)
        RETURNING d.* INTO u;
    RAISE NOTICE 'abandon_ddl: change % of % abandoned on the router; its undo, change %, on every node: %',
        p->>'original', p->>'template', u.change_id, p->>'command';
    RETURN p || jsonb_build_object('change_id', u.change_id);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._undo_ddl_start(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._undo_ddl_start(text) IS
    'abandon_ddl(undo), where it is driven: the plan (_undo_ddl_plan) under the ledger''s lock, the change closed as abandoned and its inverse recorded (on a node with the tables it needs; on the router as a change of every node); an open undo is returned to be resumed. Returns the plan with the undo''s change_id (and on a node, reversed).';
-- abandon_ddl(template, undo => true) on the router: on every node, in
-- name order, the change the router sent closed and the undo recorded
-- with the tables it needs (_undo_ddl_prepare, which commits there on the
-- node's connection; a second call changes nothing), before apply_ddl()
-- runs the undo. undo: what _undo_ddl_start() returned. Returns one
-- element per node: {node, change_id, reversed} (a node without the
-- template has none).
CREATE OR REPLACE FUNCTION shardid_internal._undo_ddl_nodes(undo jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    conn CONSTANT text := 'shardid_undo_ddl';
    nd   record;
    got  jsonb;
    res  jsonb := '[]';
BEGIN
    FOR nd IN SELECT n.node FROM shardid.nodes AS n ORDER BY n.node COLLATE "C" LOOP
        PERFORM shardid_internal._node_close(conn);
        PERFORM shardid_internal._apply_ddl_connect(conn, nd.node, NULL);
        got := shardid_internal._node(conn, format('SELECT shardid_internal._undo_ddl_prepare(%L, %L, %L, %L)',
                                                   undo->>'template', undo->>'command',
                                                   shardid_internal._apply_ddl_origin((undo->>'original')::bigint),
                                                   shardid_internal._apply_ddl_origin((undo->>'change_id')::bigint)),
                                      nd.node)::jsonb;
        PERFORM shardid_internal._node_close(conn);
        res := res || jsonb_build_array(jsonb_build_object('node', nd.node) || COALESCE(got, '{}'));
    END LOOP;
    RETURN res;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._undo_ddl_nodes(jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._undo_ddl_nodes(jsonb) IS
    'abandon_ddl(undo) on the router: on every node, closes the change the router sent and records its undo with the tables it needs (committed there); one {node, change_id, reversed} per node.';
-- abandon_ddl(template, undo => true), in the session it opens to the
-- database it was called in: the undo recorded (_undo_ddl_start; on the
-- router, then on every node: _undo_ddl_nodes), committed, and run by
-- apply_ddl() itself as a change of its own, batched and resumable as
-- any, CONCURRENTLY when the change was. result: {template, command,
-- change_id, original, and per node on a router: nodes}. A procedure
-- because it commits; no SET clause: it holds only the steps and their
-- COMMITs.
CREATE OR REPLACE PROCEDURE shardid_internal._undo_ddl(template text, INOUT result jsonb DEFAULT NULL)
    LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid_internal._undo_ddl()',
                                             'before the undo runs',
                                             'It is called by shardid.abandon_ddl(template, undo => true).');
    result := shardid_internal._undo_ddl_start(template);
    COMMIT;
    IF shardid_internal._apply_ddl_on_nodes() THEN
        result := result OPERATOR(pg_catalog.||) pg_catalog.jsonb_build_object('nodes', shardid_internal._undo_ddl_nodes(result));
        COMMIT;
    END IF;
    CALL shardid.apply_ddl(result OPERATOR(pg_catalog.->>) 'template', result OPERATOR(pg_catalog.->>) 'command');
END
$$;

REVOKE ALL ON PROCEDURE shardid_internal._undo_ddl(text, jsonb) FROM PUBLIC;

COMMENT ON PROCEDURE shardid_internal._undo_ddl(text, jsonb) IS
    'abandon_ddl(undo), in its own session to this database: records the undo (on a router, on every node too), commits, and runs the inverse with apply_ddl() as a change of its own; result says what it did.';
-- abandon_ddl(template, undo => true), the way back in one call: the open change is closed and reversed where it was applied,
-- by its inverse run as a change of its own with apply_ddl()'s batches,
-- ledger and fence (on a router, on every node): a CREATE [UNIQUE] INDEX
-- [CONCURRENTLY]'s index dropped, CONCURRENTLY when it was built so, with
-- the invalid ones a failed build left; a named ADD CONSTRAINT's
-- constraint dropped; a column's SET/DROP DEFAULT or SET STATISTICS set
-- back to the value the tables that lack the change still hold. A change
-- with no safe inverse (ADD or DROP COLUMN, a type change, ...) is refused
-- before anything changes (0A000), with the apply_ddl() call that
-- completes it in the HINT. The statements commit as they go, so the work
-- runs on a dblink connection to this database (this server's socket,
-- the session's role, as apply_ddl() CONCURRENTLY does); an interrupted
-- undo is finished by calling it again. One row per node (NULL: here):
-- the undo's change, its command, how many tables it reversed.
CREATE OR REPLACE FUNCTION shardid_internal._abandon_ddl_undo(template text)
    RETURNS TABLE (node text, change_id bigint, command text, targets_with integer, targets_without integer, without text[])
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    conn CONSTANT text := 'shardid_abandon_ddl_undo';
    res  jsonb;
BEGIN
    IF template IS NULL THEN
        RAISE EXCEPTION 'abandon_ddl() template must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    -- a refusal before anything changes, in this session
    PERFORM shardid_internal._undo_ddl_plan(template);
    PERFORM shardid_internal._apply_ddl_connect(conn, NULL, NULL);
    BEGIN
        res := shardid_internal._node(conn, format('CALL shardid_internal._undo_ddl(%L)', template))::jsonb;
    EXCEPTION WHEN OTHERS OR query_canceled THEN
        PERFORM shardid_internal._node_close(conn);
        RAISE;
    END;
    PERFORM shardid_internal._node_close(conn);
    RAISE NOTICE 'abandon_ddl: change % of % undone: %', res->>'original', res->>'template', res->>'command';
    IF res ? 'nodes' THEN
        RETURN QUERY SELECT x.node, x.change_id, res->>'command', x.reversed, 0, '{}'::text[]
                       FROM jsonb_to_recordset(res->'nodes') AS x(node text, change_id bigint, reversed integer);
    ELSE
        RETURN QUERY SELECT NULL::text, (res->>'change_id')::bigint, res->>'command', (res->>'reversed')::integer, 0, '{}'::text[];
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._abandon_ddl_undo(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._abandon_ddl_undo(text) IS
    'abandon_ddl(template, undo => true): reverses the open apply_ddl() change of a sharded table where it was applied (on a router: on every node), as a change of its own run by apply_ddl() over a dblink connection to this database; refused before anything changes when it has no safe inverse; one row per node (NULL here) with the undo''s change, its command and how many tables it reversed.';
-- abandon_ddl(template): closes the open apply_ddl() change of a sharded
-- table without finishing it, leaving every table as it is, and says
-- which have it: on a node its own change; on a router the router's and
-- each node's (over dblink, search_path pinned), node by node. A node's
-- change is closed as soon as the node answers, so a node that cannot be
-- reached fails the call, naming it, and a second call closes what is
-- left. Afterwards another command may run; the tables that lack the
-- change are for the user to bring in line (check_cluster() shows copies
-- that differ from their template). With undo, the change is reversed
-- where it was applied instead (_abandon_ddl_undo).
CREATE OR REPLACE FUNCTION shardid.abandon_ddl(template text, undo boolean DEFAULT false)
    RETURNS TABLE (node text, change_id bigint, command text, targets_with integer, targets_without integer, without text[])
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    conn   CONSTANT text := 'shardid_abandon_ddl';
    canon  text;
    parts  text[];
    c      shardid.ddl_changes;
    nd     record;
    got    jsonb;
BEGIN
    IF template IS NULL OR undo IS NULL THEN
        RAISE EXCEPTION 'abandon_ddl() arguments must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF undo THEN
        RETURN QUERY SELECT * FROM shardid_internal._abandon_ddl_undo(template);
        RETURN;
    END IF;
    SELECT format('%I.%I', n.nspname, k.relname) INTO canon
      FROM pg_class AS k JOIN pg_namespace AS n ON n.oid = k.relnamespace WHERE k.oid = to_regclass(template);
    IF canon IS NULL THEN
        parts := parse_ident(template);
        IF cardinality(parts) <> 2 THEN
            RAISE EXCEPTION 'template "%" must be schema-qualified (no such table here)', template
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        canon := format('%I.%I', parts[1], parts[2]);
    END IF;
    SELECT d.* INTO c FROM shardid.ddl_changes AS d WHERE d.template = canon AND d.finished_at IS NULL FOR UPDATE;
    IF shardid_internal._apply_ddl_on_nodes() THEN
        PERFORM shardid_internal._dblink_schema();
        FOR nd IN SELECT n.node FROM shardid.nodes AS n ORDER BY n.node COLLATE "C" LOOP
            PERFORM shardid_internal._node_close(conn);
            PERFORM shardid_internal._apply_ddl_connect(conn, nd.node, NULL);
            got := shardid_internal._node(conn, format('SELECT COALESCE(pg_catalog.jsonb_agg(pg_catalog.to_jsonb(r)), ''[]'')::pg_catalog.text '
                                                       'FROM shardid.abandon_ddl(%L) AS r', canon), nd.node)::jsonb;
            PERFORM shardid_internal._node_close(conn);
            RETURN QUERY SELECT nd.node, x.change_id, x.command, x.targets_with, x.targets_without, x.without
                           FROM jsonb_to_recordset(got) AS x(change_id bigint, command text, targets_with integer,
                                                             targets_without integer, without text[]);
        END LOOP;
        IF c.change_id IS NOT NULL THEN
            UPDATE shardid.ddl_changes AS d SET finished_at = now(), abandoned = true WHERE d.change_id = c.change_id;
            RAISE NOTICE 'abandon_ddl: change % of % abandoned on the router and every node: %', c.change_id, canon, c.command;
        END IF;
        RETURN;
    END IF;
    IF c.change_id IS NULL THEN
        RAISE NOTICE 'abandon_ddl: % has no open change here', canon;
        RETURN;
    END IF;
    PERFORM shardid_internal._apply_ddl_owner(c.table_name);
    UPDATE shardid.ddl_changes AS d SET finished_at = now(), abandoned = true WHERE d.change_id = c.change_id;
    RAISE NOTICE 'abandon_ddl: change % of % abandoned: %', c.change_id, canon, c.command;
    -- the tables that lack it: what a re-CALL would have changed
    RETURN QUERY
        SELECT NULL::text, c.change_id, c.command,
               (1 + (SELECT count(*) FROM shardid.shard_registry))::integer - cardinality(x.without), cardinality(x.without), x.without
          FROM (SELECT ARRAY(SELECT t.target FROM shardid_internal._apply_ddl_targets(c.change_id, NULL) AS t
                              ORDER BY t.shard NULLS FIRST) AS without) AS x;
END
$$;

COMMENT ON FUNCTION shardid.abandon_ddl(text, boolean) IS
    'Closes the open apply_ddl() change of a sharded table without finishing it (on a router: there and on every node), leaving every table as it is; one row per node (NULL here) with the change, how many tables have it and lack it, and which lack it. Then another command may run. With undo => true, reverses the change where it was applied instead, as a change of its own run by apply_ddl() (DROP INDEX [CONCURRENTLY] of the index a CREATE INDEX made and of the invalid ones a failed build left, DROP CONSTRAINT of the constraint an ADD CONSTRAINT added, the previous default or statistics target); a change with no safe inverse is refused (0A000) with the apply_ddl() call that completes it in the HINT.';
-- finish_ddl(): the template and command of an unfinished apply_ddl()
-- change in this database's ledger, by its ID (22023 for an ID that is no
-- unfinished change's).
CREATE OR REPLACE FUNCTION shardid_internal._finish_ddl_change(change_id bigint, OUT template text, OUT command text)
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    SELECT c.template, c.command INTO template, command
      FROM shardid.ddl_changes AS c
     WHERE c.change_id = _finish_ddl_change.change_id AND c.finished_at IS NULL;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'apply_ddl() change % is no unfinished change here', change_id
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'shardid.ddl_changes lists the changes; check_cluster() names the unfinished ones.';
    END IF;
END
$$;

-- EXECUTE stays with PUBLIC: finish_ddl() is apply_ddl() (which checks the caller), by ID.

COMMENT ON FUNCTION shardid_internal._finish_ddl_change(bigint) IS
    'finish_ddl(): the template and command of an unfinished apply_ddl() change here, by its ID (22023 when it is none).';
-- finish_ddl(change_id): finishes an unfinished apply_ddl() change by its
-- ID in this database's ledger (shardid.ddl_changes): CALLs apply_ddl()
-- with the change's own template and command, read from the ledger, so
-- that no text is pasted (check_cluster()'s fix of a change whose text
-- has a control character). As apply_ddl(), it checks the caller and
-- runs every statement as the template's owner. No SET clause (it
-- COMMITs, through apply_ddl()): it holds the call, the work is done by
-- functions that pin search_path. CALL it on its own.
CREATE OR REPLACE PROCEDURE shardid.finish_ddl(change_id bigint)
    LANGUAGE plpgsql
AS $$
DECLARE
    c record;
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid.finish_ddl()',
                                             'after every batch', 'CALL it on its own.');
    c := shardid_internal._finish_ddl_change(change_id);
    CALL shardid.apply_ddl(c.template, c.command);
END
$$;

COMMENT ON PROCEDURE shardid.finish_ddl(bigint) IS
    'Finishes an unfinished apply_ddl() change by its ID in shardid.ddl_changes: apply_ddl() of its own template and command, read from the ledger (check_cluster()''s fix of a change whose text has a control character). CALL it on its own.';
-- What run_on_shards() may run on every copy of a sharded table, read by
-- PostgreSQL's parser (src/pg/shard_command.cpp): the statement for
-- schema.table (%s replaced as for apply_ddl(), src/pg/ddl_template.cpp),
-- its command tag, and whether it is a read. GRANT and REVOKE on the
-- table, COMMENT ON the table, a column or a constraint, and SELECT
-- (without INTO, locking clause or a WITH that writes); 0A000 for other
-- kinds (a definition change: apply_ddl(); rows: the application), 42601
-- for a syntax error or more than one statement, 22023 for %s missing or
-- where the statement does not name the table.
CREATE OR REPLACE FUNCTION shardid_internal._run_on_shards_command(command text, schema_name name, table_name name,
                                                                   OUT statement text, OUT kind text, OUT reads boolean)
    LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_run_on_shards_command';

COMMENT ON FUNCTION shardid_internal._run_on_shards_command(text, name, name) IS
    'Internal: run_on_shards(): the statement for schema.table (%s replaced), its command tag and whether it reads; refuses (0A000) what is not GRANT/REVOKE on the table, COMMENT ON it, its column or constraint, or a read; 42601 or 22023 for a statement list, a syntax error, %s missing or misplaced.';
-- run_on_shards(): the statement for one table, checked by the parser
-- (_run_on_shards_command), with its kind and whether it reads. A syntax
-- error is reported with the statement (the parser's position would point
-- into this function's query).
CREATE OR REPLACE FUNCTION shardid_internal._run_on_shards_check(command text, schema_name name, table_name name,
                                                                 OUT statement text, OUT kind text, OUT reads boolean)
    LANGUAGE plpgsql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    msg text;
BEGIN
    SELECT c.statement, c.kind, c.reads INTO statement, kind, reads
      FROM shardid_internal._run_on_shards_command(command, schema_name, table_name) AS c;
EXCEPTION WHEN syntax_error THEN
    GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT;
    IF msg LIKE 'run_on_shards()%' THEN
        RAISE;
    END IF;
    RAISE EXCEPTION 'run_on_shards() command is not valid SQL: %', msg
        USING ERRCODE = 'syntax_error', DETAIL = format('The command was: %s', command);
END
$$;

COMMENT ON FUNCTION shardid_internal._run_on_shards_check(text, name, name) IS
    'Internal: run_on_shards(): the statement for schema.table made from the command and checked by the parser, with its kind and whether it reads; a syntax error names the command.';
-- run_on_shards() on a node: the sharded table whose template the caller
-- named (42P01 otherwise; NULL when optional and this node has neither
-- such a template nor any shard: a node with only the extension, reached
-- from a router), its template there (55000 when dropped), the caller
-- (as_role: the role the statements are for; 42501 unless it has the
-- privileges of the template's owner) and the command, checked for the
-- template and for a shard's copy (a command that names the template
-- itself rather than %s is refused before anything runs). Returns the
-- sharded table, the command's kind, whether it reads.
CREATE OR REPLACE FUNCTION shardid_internal._run_on_shards_start(template text, command text, as_role name, optional boolean,
                                                                 OUT t shardid.sharded_tables, OUT kind text, OUT reads boolean)
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    owner oid;
    chk   record;
BEGIN
    IF template IS NULL OR command IS NULL THEN
        RAISE EXCEPTION 'run_on_shards() arguments must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    SELECT s.* INTO t FROM shardid.sharded_tables AS s
        JOIN pg_namespace AS n ON n.nspname = s.template_schema
        JOIN pg_class AS c ON c.relnamespace = n.oid AND c.relname = s.template_name
        WHERE c.oid = to_regclass(template);
    IF t.table_name IS NULL THEN
        IF optional AND NOT EXISTS (SELECT FROM shardid.shard_registry)
           AND NOT EXISTS (SELECT FROM shardid.sharded_tables AS s
                            WHERE format('%I.%I', s.template_schema, s.template_name) = template) THEN
            t := NULL;
            RETURN;
        END IF;
        RAISE EXCEPTION '"%" is not the template of a sharded table', template
            USING ERRCODE = 'undefined_table',
                  HINT = 'shardid.sharded_tables lists the templates; name one schema-qualified, as in ''public.photos''.';
    END IF;
    PERFORM shardid_internal._require_template(t);
    SELECT c.relowner INTO owner FROM pg_class AS c WHERE c.oid = to_regclass(template);
    IF NOT pg_has_role(COALESCE(as_role, current_user), owner, 'USAGE') THEN
        RAISE EXCEPTION 'permission denied to run a command on the copies of sharded table %', t.table_name
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = format('run_on_shards() runs it as each copy''s owner; role %I lacks the privileges of the template''s owner %I.',
                                  COALESCE(as_role, current_user), pg_get_userbyid(owner));
    END IF;
    chk := shardid_internal._run_on_shards_check(command, t.template_schema, t.template_name);
    PERFORM shardid_internal._run_on_shards_check(command, 'shard_0000', t.table_name);
    kind := chk.kind;
    reads := chk.reads;
END
$$;

COMMENT ON FUNCTION shardid_internal._run_on_shards_start(text, text, name, boolean) IS
    'Internal: run_on_shards() on a node: the sharded table of a template (42P01; NULL when optional on a node with no such template and no shard), the caller (42501 without the template owner''s privileges) and the command checked for the template and a copy; returns the table, the kind, whether it reads.';
-- run_on_shards() on a node, one batch, in one transaction (the caller's
-- connection commits it): the command on the template (with_template, for
-- what is not a read: new shards are made from it) and on each listed
-- shard's copy, in order, each as the copy's owner in a security-
-- restricted operation (_run_as_owner, the one fence: the owner's code a
-- statement reaches, a function a read calls, has the owner's rights and
-- cannot change the role back; a read runs read-only, _run_as_owner_read,
-- so a function it calls may not write). as_role, when given, is the role the
-- statements are for (the caller's current_user, on a loopback connection
-- that is the caller's session user): a copy whose owner's privileges it
-- lacks is not run. One row per target: shard (NULL: the template),
-- whether it succeeded, and the result: a read's first value, the command
-- tag, or the error with its SQLSTATE (a copy's error does not stop the
-- others). After a GRANT or REVOKE, the shards' schemas and generators
-- get the USAGE the templates' grants need (_align_privileges, the batch
-- at once; after a REVOKE, USAGE nothing needs is revoked); a shard that
-- fails it has its error in its copy's row.
-- optional: nothing to do on a node with neither the template
-- nor a shard (_run_on_shards_start). Executable by PUBLIC (it checks the
-- caller; a loopback connection may be a table owner's).
CREATE OR REPLACE FUNCTION shardid_internal._run_on_shards_batch(template text, command text, shards integer[],
                                                                 with_template boolean, as_role name DEFAULT NULL,
                                                                 optional boolean DEFAULT false)
    RETURNS TABLE (shard integer, success boolean, result text)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    s     record;
    x     record;
    rel   regclass;
    owner oid;
    r     text;
    st    text;
    msg   text;
    -- the rows, kept until the batch's privileges have followed
    o_shard   integer[] := '{}';
    o_success boolean[] := '{}';
    o_result  text[] := '{}';
    i     integer;
BEGIN
    s := shardid_internal._run_on_shards_start(template, command, as_role, optional);
    IF (s.t).table_name IS NULL THEN
        RETURN;
    END IF;
    FOR x IN SELECT NULL::integer AS shard, (s.t).template_schema AS schema_name, (s.t).template_name AS table_name,
                    true AS registered, 0::bigint AS ord
              WHERE with_template AND NOT s.reads
             UNION ALL
             SELECT u.s, g.schema_name, (s.t).table_name, g.shard IS NOT NULL, u.o
               FROM unnest(shards) WITH ORDINALITY AS u(s, o)
               LEFT JOIN shardid.shard_registry AS g ON g.shard = u.s
             ORDER BY ord LOOP
        shard := x.shard;
        success := false;
        IF NOT x.registered THEN
            result := format('shard %s is not registered on this node (SQLSTATE 42704)', x.shard);
            o_shard := o_shard || shard; o_success := o_success || success; o_result := o_result || result;
            CONTINUE;
        END IF;
        rel := to_regclass(format('%I.%I', x.schema_name, x.table_name));
        IF rel IS NULL THEN
            result := format('relation %I.%I does not exist (SQLSTATE 42P01)', x.schema_name, x.table_name);
            o_shard := o_shard || shard; o_success := o_success || success; o_result := o_result || result;
            CONTINUE;
        END IF;
        SELECT c.relowner INTO owner FROM pg_class AS c WHERE c.oid = rel;
        IF as_role IS NOT NULL AND NOT pg_has_role(as_role, owner, 'USAGE') THEN
            result := format('permission denied to run a statement as role %I, the owner of %s (SQLSTATE 42501)',
                             pg_get_userbyid(owner), rel);
            o_shard := o_shard || shard; o_success := o_success || success; o_result := o_result || result;
            CONTINUE;
        END IF;
        BEGIN
            -- a read runs read-only: it may not write through a function
            IF s.reads THEN
                r := shardid_internal._run_as_owner_read(owner::regrole,
                                                         (shardid_internal._run_on_shards_check(command, x.schema_name, x.table_name)).statement);
            ELSE
                r := shardid_internal._run_as_owner(owner::regrole,
                                                    (shardid_internal._run_on_shards_check(command, x.schema_name, x.table_name)).statement);
            END IF;
            success := true;
            result := CASE WHEN s.reads THEN r ELSE s.kind END;
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
            result := format('%s (SQLSTATE %s)', msg, st);
        END;
        o_shard := o_shard || shard; o_success := o_success || success; o_result := o_result || result;
    END LOOP;
    -- privileges follow the shards: after a GRANT or REVOKE, the schemas'
    -- and generators' USAGE the templates' grants need (tidied after a
    -- REVOKE), for the batch at once; if that fails, shard by shard, a
    -- shard's error in its row
    IF s.kind IN ('GRANT', 'REVOKE') THEN
        BEGIN
            PERFORM shardid_internal._align_privileges(
                ARRAY(SELECT o_shard[k] FROM generate_subscripts(o_shard, 1) AS k WHERE o_success[k] AND o_shard[k] IS NOT NULL),
                NULL, true, s.kind = 'REVOKE', as_role);
        EXCEPTION WHEN OTHERS THEN
            FOR i IN 1 .. cardinality(o_shard) LOOP
                CONTINUE WHEN o_shard[i] IS NULL OR NOT o_success[i];
                BEGIN
                    PERFORM shardid_internal._align_privileges(ARRAY[o_shard[i]], NULL, true, s.kind = 'REVOKE', as_role);
                EXCEPTION WHEN OTHERS THEN
                    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
                    o_success[i] := false;
                    o_result[i] := format('%s (SQLSTATE %s)', msg, st);
                END;
            END LOOP;
        END;
    END IF;
    FOR i IN 1 .. cardinality(o_shard) LOOP
        shard := o_shard[i];
        success := o_success[i];
        result := o_result[i];
        RETURN NEXT;
    END LOOP;
END
$$;

COMMENT ON FUNCTION shardid_internal._run_on_shards_batch(text, text, integer[], boolean, name, boolean) IS
    'Internal: run_on_shards() on a node, one batch in one transaction: the command on the template (not for a read) and each listed shard''s copy, each as the copy''s owner in the fence (_run_as_owner; a read read-only, _run_as_owner_read); a row per target with success and result (a read''s value, the command tag, or the error and its SQLSTATE). Executable by PUBLIC (it checks the caller).';
-- run_on_shards(): one batch on the dblink connection conn (to this
-- database, or from the router to node), in one transaction there
-- (_run_on_shards_batch, committed when it returns), waited for so that a
-- cancel of this session (a statement_timeout, Ctrl-C) cancels the batch
-- at the other end too (_apply_ddl_busy); returns its rows as a JSON
-- array (shard, success, result). An error of the batch as a whole is
-- raised, naming node.
CREATE OR REPLACE FUNCTION shardid_internal._run_on_shards_send(conn text, node text, template text, command text,
                                                                shards integer[], with_template boolean, as_role name,
                                                                optional boolean)
    RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM shardid_internal._node_send(conn,
        format('SELECT pg_catalog.jsonb_agg(b) FROM shardid_internal._run_on_shards_batch(%L, %L, %L, %L, %L, %L) AS b',
               template, command, COALESCE(shards, '{}'), with_template, as_role, optional));
    WHILE shardid_internal._apply_ddl_busy(conn) LOOP
    END LOOP;
    RETURN COALESCE(shardid_internal._node_wait(conn, node)::jsonb, '[]');
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._run_on_shards_send(text, text, text, text, integer[], boolean, name, boolean) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._run_on_shards_send(text, text, text, text, integer[], boolean, name, boolean) IS
    'Internal: run_on_shards(), one batch on a dblink connection (this database or a node) in one transaction there, waited for so that a cancel of this session cancels it there too; its rows as a JSON array.';
-- run_on_shards() on a node: the command checked here (_run_on_shards_start),
-- then the template and every registered shard's copy in batches of
-- batch_size, each batch one transaction on a dblink connection to this
-- database itself (_apply_ddl_connect: loopback, or this server's socket,
-- port, database and session user; search_path pinned), committed there
-- whatever becomes of the caller's transaction, so that no transaction
-- holds a lock on every copy. The statements are for the caller's
-- current_user (as_role): a copy whose owner's privileges it lacks is not
-- run, whoever the loopback connects as. Refused (25001) in a transaction
-- that holds a lock a batch could wait for, which would wait forever. One
-- row per target (node NULL): see _run_on_shards_batch.
CREATE OR REPLACE FUNCTION shardid_internal._run_on_shards_here(template text, command text, batch_size integer, loopback text)
    RETURNS TABLE (shard integer, node text, success boolean, result text)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    conn  CONSTANT text := 'shardid_run_on_shards';
    s     record;
    canon text;
    after integer := -1;
    batch integer[];
    first boolean := true;
    got   jsonb;
BEGIN
    s := shardid_internal._run_on_shards_start(template, command, current_user, false);
    canon := format('%I.%I', (s.t).template_schema, (s.t).template_name);
    IF pg_current_xact_id_if_assigned() IS NOT NULL
       OR EXISTS (SELECT FROM pg_locks AS l
                   WHERE l.pid = pg_backend_pid() AND l.locktype = 'relation'
                     AND l.mode NOT IN ('AccessShareLock', 'RowShareLock')) THEN
        RAISE EXCEPTION 'run_on_shards() cannot run in a transaction that has written or locked tables'
            USING ERRCODE = 'active_sql_transaction',
                  DETAIL = 'It runs each batch on a connection of its own to this database, which could wait for this transaction''s locks forever.',
                  HINT = 'Run it on its own, or after COMMIT.';
    END IF;
    IF NOT EXISTS (SELECT FROM pg_extension AS e WHERE e.extname = 'dblink') THEN
        RAISE EXCEPTION 'run_on_shards() needs the dblink extension'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'It commits each batch of copies on a connection of its own to this database, so that no transaction holds a lock on every copy.',
                  HINT = 'CREATE EXTENSION dblink; in this database (contrib, shipped with PostgreSQL).';
    END IF;
    PERFORM shardid_internal._apply_ddl_connect(conn, NULL, loopback);
    PERFORM shardid_internal._node(conn, 'SET application_name = ''shardid_run_on_shards''');
    LOOP
        SELECT array_agg(g.shard ORDER BY g.shard) INTO batch
          FROM (SELECT r.shard FROM shardid.shard_registry AS r WHERE r.shard > after ORDER BY r.shard LIMIT batch_size) AS g;
        EXIT WHEN batch IS NULL AND NOT first;
        got := shardid_internal._run_on_shards_send(conn, NULL, canon, command, batch, first, current_user, false);
        RETURN QUERY SELECT b.shard, NULL::text, b.success, b.result
                       FROM jsonb_to_recordset(got) AS b(shard integer, success boolean, result text);
        first := false;
        EXIT WHEN batch IS NULL;
        after := batch[cardinality(batch)];
    END LOOP;
    PERFORM shardid_internal._node_close(conn);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._run_on_shards_here(text, text, integer, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._run_on_shards_here(text, text, integer, text) IS
    'Internal: run_on_shards() on a node: the template and every registered copy in batches, each batch committed on a dblink connection to this database (loopback); the statements for the caller''s role; 25001 in a transaction holding locks a batch could wait for.';
-- run_on_shards() on the router: the caller checked (an administrator, who
-- may read shardid.nodes), dblink, the template's name (schema-qualified:
-- the router has no search_path of the nodes) and the command, then every
-- node in name order over one dblink connection (_node_session, as
-- apply_ddl()'s: search_path pinned): its template, then the shards placed on it, in
-- batches of batch_size, each batch one transaction there
-- (_run_on_shards_batch, committed when it returns), for the caller's
-- role (as_role: a role of that name there must have the privileges of
-- each copy's owner, as on a node). The router writes
-- nothing: this is a function, and its rows are the nodes' rows with the
-- node's name. A node it cannot reach, or whose batch fails as a whole
-- (no such template there, a refusal), gives one row (shard NULL, success
-- false, the error) and the next node goes on; a cancel stops it all.
-- A node with neither the template nor a shard gives no row.
CREATE OR REPLACE FUNCTION shardid_internal._run_on_shards_router(template text, command text, batch_size integer)
    RETURNS TABLE (shard integer, node text, success boolean, result text)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    conn  CONSTANT text := 'shardid_run_on_shards';
    parts text[];
    canon text;
    n     text;
    after integer;
    batch integer[];
    first boolean;
    got   jsonb;
    st    text;
    msg   text;
BEGIN
    parts := shardid_internal._router_template('run_on_shards()', 'run a command', template, command);
    canon := format('%I.%I', parts[1], parts[2]);
    PERFORM shardid_internal._run_on_shards_check(command, parts[1], parts[2]);
    PERFORM shardid_internal._run_on_shards_check(command, 'shard_0000', parts[2]);
    FOR n IN SELECT d.node FROM shardid.nodes AS d ORDER BY d.node LOOP
        after := -1;
        first := true;
        BEGIN
            -- a batch there ends within a second of this session's end
            PERFORM shardid_internal._node_session(conn, n, 'shardid_run_on_shards');
            LOOP
                SELECT array_agg(g.shard ORDER BY g.shard) INTO batch
                  FROM (SELECT p.shard FROM shardid.shard_placement AS p
                         WHERE p.node = n AND p.shard > after ORDER BY p.shard LIMIT batch_size) AS g;
                EXIT WHEN batch IS NULL AND NOT first;
                got := shardid_internal._run_on_shards_send(conn, n, canon, command, batch, first, current_user, true);
                RETURN QUERY SELECT b.shard, n, b.success, b.result
                               FROM jsonb_to_recordset(got) AS b(shard integer, success boolean, result text);
                first := false;
                EXIT WHEN batch IS NULL;
                after := batch[cardinality(batch)];
            END LOOP;
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
            PERFORM shardid_internal._node_close(conn);
            RETURN QUERY SELECT NULL::integer, n, false, format('%s (SQLSTATE %s)', msg, st);
        END;
    END LOOP;
    PERFORM shardid_internal._node_close(conn);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._run_on_shards_router(text, text, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._run_on_shards_router(text, text, integer) IS
    'Internal: run_on_shards() on the router: checks caller, dblink, template name and command, then runs it on every node in name order (its template, then its placed shards, a node transaction per batch); a row per target, one failed row for a node that fails as a whole.';
-- run_on_shards(template, command): one statement that changes no
-- definition the copies share (GRANT or REVOKE on the table, COMMENT ON
-- it, a column or a constraint, or a read: SELECT ... FROM %s) on a
-- sharded table's copy in every shard (%s = the copy's schema-qualified
-- name, replaced where the parser finds the table's name), as each copy's
-- owner in a security-restricted operation; a GRANT, REVOKE or COMMENT on
-- the template too (new shards are made from it). A node runs it in
-- batches over a dblink connection to itself (_run_on_shards_here), a
-- router on every node (_run_on_shards_router); each batch commits on its
-- own, so a function can return the rows: one per copy (and template),
-- with whether it succeeded and its result. Definition changes are
-- apply_ddl()'s.
CREATE OR REPLACE FUNCTION shardid.run_on_shards(template text, command text, batch_size integer DEFAULT 256,
                                                 loopback text DEFAULT NULL)
    RETURNS TABLE (shard integer, node text, success boolean, result text)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM shardid_internal._require_batch_size(batch_size);
    IF shardid_internal._apply_ddl_on_nodes() THEN
        RETURN QUERY SELECT * FROM shardid_internal._run_on_shards_router(template, command, batch_size);
    ELSIF NOT has_function_privilege('shardid_internal._run_on_shards_here(text,text,integer,text)', 'EXECUTE') THEN
        RAISE EXCEPTION 'permission denied to run a command on every shard of this node'
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'On a node, run_on_shards() commits each batch on a dblink connection to this database: it is for superusers, and roles granted EXECUTE on shardid_internal._run_on_shards_here() and the connection helpers it calls.';
    ELSE
        RETURN QUERY SELECT * FROM shardid_internal._run_on_shards_here(template, command, batch_size, loopback);
    END IF;
END
$$;

COMMENT ON FUNCTION shardid.run_on_shards(text, text, integer, text) IS
    'Node or router: runs one statement that changes no shared definition (GRANT/REVOKE on the table, COMMENT ON it or its column or constraint, or a read: SELECT ... FROM %s) on every shard''s copy of a sharded table (%s = its schema-qualified name) as the copy''s owner, and a GRANT, REVOKE or COMMENT on the template too; on a router, on every node. Batches commit on their own (dblink: to this database, loopback, or to each node). One row per copy: shard (NULL: the template), node, success, result (a read''s first value, the command tag, or the error with its SQLSTATE). Definition changes: apply_ddl().';
-- grant_shards() and revoke_shards(): their arguments checked, and the
-- one GRANT or REVOKE on %s they stand for, for run_on_shards(). NULL
-- arguments 22004; privileges: the table privileges (SELECT, INSERT,
-- UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER, or ALL), any case, at
-- least one (22023); the role is a name, quoted, never pasted.
CREATE OR REPLACE FUNCTION shardid_internal._grant_shards_command(fn text, grant_it boolean, template text, role name,
                                                                  privileges text[])
    RETURNS text
    LANGUAGE plpgsql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    privs text[];
    bad   text;
BEGIN
    IF template IS NULL OR role IS NULL OR privileges IS NULL THEN
        RAISE EXCEPTION '% arguments must not be NULL', fn USING ERRCODE = 'null_value_not_allowed';
    END IF;
    SELECT array_agg(DISTINCT upper(btrim(p)) ORDER BY upper(btrim(p))) INTO privs FROM unnest(privileges) AS p;
    SELECT p INTO bad FROM unnest(COALESCE(privs, '{}')) AS p
     WHERE p IS NULL OR p NOT IN ('SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'REFERENCES', 'TRIGGER', 'ALL')
     LIMIT 1;
    IF privs IS NULL OR bad IS NOT NULL OR (cardinality(privs) > 1 AND 'ALL' = ANY (privs)) THEN
        RAISE EXCEPTION '%() takes table privileges, not %', fn, COALESCE(quote_literal(bad), quote_literal(privileges::text))
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'A table privilege is SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES or TRIGGER (or ALL, alone); at least one.',
                  HINT = format('For example: shardid.%s(%L, %L, ARRAY[''SELECT'', ''INSERT''])', fn, template, role);
    END IF;
    IF grant_it THEN
        RETURN format('GRANT %s ON %%s TO %I', array_to_string(privs, ', '), role);
    END IF;
    RETURN format('REVOKE %s ON %%s FROM %I', array_to_string(privs, ', '), role);
END
$$;

COMMENT ON FUNCTION shardid_internal._grant_shards_command(text, boolean, text, name, text[]) IS
    'Internal: grant_shards() and revoke_shards(): the arguments checked (22004, 22023 for what is not a list of table privileges) and the GRANT or REVOKE on %s they stand for. Executable by PUBLIC (grant_shards() calls it as the caller).';
-- grant_shards(template, role, privileges): gives a role privileges on a
-- sharded table everywhere it is, in one call: the template (the record:
-- shards made later are made with its privileges, _create_shard_table),
-- every shard's copy, USAGE on every shard's schema and, for INSERT, on
-- every shard's generator (next_id() needs it). It is run_on_shards() with
-- a GRANT it composes (_grant_shards_command): on a node in batches over
-- a dblink connection to itself, on a router on every node, each
-- statement as the owner of what it touches in a security-restricted
-- operation; the caller needs the privileges of the template's owner
-- (42501). One row per template and copy, as run_on_shards() gives them.
CREATE OR REPLACE FUNCTION shardid.grant_shards(template text, role name, privileges text[] DEFAULT ARRAY['SELECT'],
                                                batch_size integer DEFAULT 256, loopback text DEFAULT NULL)
    RETURNS TABLE (shard integer, node text, success boolean, result text)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN QUERY SELECT * FROM shardid.run_on_shards(
        template, shardid_internal._grant_shards_command('grant_shards', true, template, role, privileges), batch_size, loopback);
END
$$;

COMMENT ON FUNCTION shardid.grant_shards(text, name, text[], integer, text) IS
    'Node or router: gives a role table privileges on a sharded table''s template and every shard''s copy, USAGE on every shard''s schema and, with INSERT, on every shard''s generator; recorded on the template, so shards made later get them and check_cluster() reports a copy or schema that lacks them. run_on_shards() with the GRANT it composes: one row per template and copy (shard NULL: the template), on a router on every node.';
-- revoke_shards(template, role, privileges): grant_shards() undone: the
-- privileges revoked from the role on the template and every shard's copy
-- (run_on_shards() with a REVOKE it composes, each statement as the owner
-- of what it touches in a security-restricted operation), then the USAGE
-- on a shard's schema and generator that no template's grant and no
-- privilege on that shard's relations needs any more.
CREATE OR REPLACE FUNCTION shardid.revoke_shards(template text, role name, privileges text[] DEFAULT ARRAY['ALL'],
                                                 batch_size integer DEFAULT 256, loopback text DEFAULT NULL)
    RETURNS TABLE (shard integer, node text, success boolean, result text)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN QUERY SELECT * FROM shardid.run_on_shards(
        template, shardid_internal._grant_shards_command('revoke_shards', false, template, role, privileges), batch_size, loopback);
END
$$;

COMMENT ON FUNCTION shardid.revoke_shards(text, name, text[], integer, text) IS
    'Node or router: revokes a role''s table privileges on a sharded table''s template and every shard''s copy, then the USAGE on shards'' schemas and generators nothing needs any more. run_on_shards() with the REVOKE it composes: one row per template and copy, on a router on every node.';
-- shardid, area shards: logical shards as schemas.
--
-- A logical shard is a schema (shard_0005) holding one generator sequence
-- (shard_0005.id_seq) and a copy of every sharded table, whose id column
-- defaults to shardid.next_id(5, 'shard_0005.id_seq'::regclass). One
-- generator per shard makes IDs unique across every table of the shard,
-- and the shard field makes them unique across shards.
--
-- The functions are SECURITY INVOKER: the schemas, sequences and tables
-- belong to the caller, who needs CREATE on the database and INSERT,
-- UPDATE, DELETE on the registry (granted by the extension's owner; see
-- README "Logical shards"). Every function pins search_path to pg_catalog,
-- pg_temp and qualifies every name it builds. The *_proc procedures commit
-- in batches, for more shards than one transaction can lock; a SET clause
-- would forbid their COMMIT, so their bodies only call such functions
-- (qualified) and COMMIT, starting with _require_commit(_commit_allowed(),
-- ...), as every procedure does.
--
-- Time partitions of tables keyed by ID: IDs sort by time, so PARTITION BY
-- RANGE (id) with time_to_id() bounds is partitioning by time, and WHERE
-- id >= time_to_id(a) AND id < time_to_id(b) prunes to the partitions of
-- [a, b) (create_time_partitions()).

-- The schema name of a shard number: shard_ and the number zero-padded to
-- 4 digits, or to the width of the layout's largest shard if that is wider.
CREATE OR REPLACE FUNCTION shardid_internal._shard_schema_name(shard integer) RETURNS name
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT pg_catalog.concat('shard_',
               pg_catalog.lpad($1::text,
                               GREATEST(4, pg_catalog.length(((shardid.layout()).max_shard)::text)),
                               '0'))::name
$$;

COMMENT ON FUNCTION shardid_internal._shard_schema_name(integer) IS
    'The schema name create_shard() uses for a shard: shard_ and the number zero-padded to 4 digits (more if the layout has more shards).';
-- Refuses a shard number the layout cannot hold.
CREATE OR REPLACE FUNCTION shardid_internal._require_shard(shard integer) RETURNS void
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

COMMENT ON FUNCTION shardid_internal._require_shard(integer) IS
    'Raises 22023 if a shard number is outside the layout.';
-- Refuses a range of shards first..last that is empty or that the layout
-- cannot hold, for every function that takes one. Callers have refused
-- NULL arguments with their own name in the message.
CREATE OR REPLACE FUNCTION shardid_internal._require_shard_range(first integer, last integer) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF first > last THEN
        RAISE EXCEPTION 'empty shard range % .. %', first, last
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give the first shard, then the last (inclusive).';
    END IF;
    PERFORM shardid_internal._require_shard(first);
    PERFORM shardid_internal._require_shard(last);
END
$$;

COMMENT ON FUNCTION shardid_internal._require_shard_range(integer, integer) IS
    'Raises 22023 if the shard range first..last is empty or outside the layout.';
-- Refuses a caller who may not change the registry, before anything is created.
CREATE OR REPLACE FUNCTION shardid_internal._require_registry_privileges(action text, need_create boolean) RETURNS void
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

COMMENT ON FUNCTION shardid_internal._require_registry_privileges(text, boolean) IS
    'Raises 42501 unless the caller may write the shard registry (and, if asked, create schemas).';
-- Refuses a sequence that next_id() would refuse, with the same SQLSTATEs.
CREATE OR REPLACE FUNCTION shardid_internal._require_generator(seq regclass) RETURNS void
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

COMMENT ON FUNCTION shardid_internal._require_generator(regclass) IS
    'Raises 42809 or 55000 for a relation next_id() cannot keep its state in.';
-- Node: a table's indexes in creation order, each as {name, shape, def,
-- constraint}: shape is its definition (_index_statement(): from the
-- catalog, search_path pinned) without its name and table, so that the same index of two tables
-- (a template and a shard's copy, or a shard on two nodes) compares equal
-- whatever each is named; constraint says a constraint owns it.
CREATE OR REPLACE FUNCTION shardid_internal._index_list(rel regclass) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT COALESCE(jsonb_agg(jsonb_build_object(
               'name', i.relname,
               'shape', shardid_internal._index_statement(i.oid),
               'def', pg_get_indexdef(i.oid),
               'constraint', EXISTS (SELECT FROM pg_constraint AS k WHERE k.conindid = i.oid AND k.conrelid = t.oid))
             ORDER BY i.oid), '[]')
      FROM pg_index AS x
      JOIN pg_class AS i ON i.oid = x.indexrelid
      JOIN pg_class AS t ON t.oid = x.indrelid
     WHERE x.indrelid = rel
$$;

-- EXECUTE stays with PUBLIC: _create_shard_table() calls it with the caller's rights.

COMMENT ON FUNCTION shardid_internal._index_list(regclass) IS
    'Node: a table''s indexes as {name, shape (definition without name and table), def, constraint}, in creation order.';
-- Node: gives a table's indexes the names of the same indexes (equal
-- shape, _index_list()) of another table's list: CREATE TABLE ... LIKE
-- lets PostgreSQL name the copies, but apply_ddl() names an index in every
-- shard, and a move keeps the source's names. Indexes pair in creation
-- order within one shape; a name taken by anything else is left alone (a
-- comparison reports it); two passes, so names may be swapped. Returns how
-- many were renamed. The caller owns the table or is a superuser.
CREATE OR REPLACE FUNCTION shardid_internal._name_indexes(rel regclass, wanted jsonb) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nsp   name := (SELECT n.nspname FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace WHERE c.oid = rel);
    have  name[];
    want  name[];
    keep  boolean[];
    i     integer;
    n     integer := 0;
BEGIN
    SELECT array_agg(h.name ORDER BY h.name), array_agg(w.name ORDER BY h.name) INTO have, want
      FROM (SELECT e->>'name' AS name, e->>'shape' AS shape,
                   row_number() OVER (PARTITION BY e->>'shape' ORDER BY o) AS k
              FROM jsonb_array_elements(shardid_internal._index_list(rel)) WITH ORDINALITY AS a(e, o)) AS h
      JOIN (SELECT e->>'name' AS name, e->>'shape' AS shape,
                   row_number() OVER (PARTITION BY e->>'shape' ORDER BY o) AS k
              FROM jsonb_array_elements(wanted) WITH ORDINALITY AS a(e, o)) AS w
        ON w.shape = h.shape AND w.k = h.k
     WHERE w.name <> h.name;
    IF have IS NULL THEN
        RETURN 0;
    END IF;
    -- a wanted name taken by a relation that is not renamed here stays taken
    keep := array_fill(true, ARRAY[cardinality(have)]);
    LOOP
        n := 0;
        FOR i IN 1 .. cardinality(have) LOOP
            IF keep[i] AND to_regclass(format('%I.%I', nsp, want[i])) IS NOT NULL
               AND NOT EXISTS (SELECT FROM generate_subscripts(have, 1) AS j WHERE keep[j] AND have[j] = want[i]) THEN
                keep[i] := false;
                n := n + 1;
            END IF;
        END LOOP;
        EXIT WHEN n = 0;
    END LOOP;
    n := 0;
    FOR i IN 1 .. cardinality(have) LOOP
        CONTINUE WHEN NOT keep[i];
        EXECUTE format('ALTER INDEX %I.%I RENAME TO %I', nsp, have[i], 'shardid_renaming_' || i);
    END LOOP;
    FOR i IN 1 .. cardinality(have) LOOP
        CONTINUE WHEN NOT keep[i];
        EXECUTE format('ALTER INDEX %I.%I RENAME TO %I', nsp, 'shardid_renaming_' || i, want[i]);
        n := n + 1;
    END LOOP;
    RETURN n;
END
$$;

-- EXECUTE stays with PUBLIC: _create_shard_table() calls it; ALTER INDEX checks ownership.

COMMENT ON FUNCTION shardid_internal._name_indexes(regclass, jsonb) IS
    'Node: renames a table''s indexes to the names of the same indexes (equal shape) in a list from _index_list(); returns how many.';
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
-- Creates the sharded tables of one shard (all of them, or only those it
-- lacks). Callers have checked the shard, its schema and the templates.
CREATE OR REPLACE FUNCTION shardid_internal._create_shard_tables(shard integer, only_missing boolean DEFAULT false)
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
        PERFORM shardid_internal._create_shard_table(r, t);
        made := made + 1;
    END LOOP;
    RETURN made;
END
$$;

COMMENT ON FUNCTION shardid_internal._create_shard_tables(integer, boolean) IS
    'Creates the registered sharded tables (all, or only the missing ones) in one shard.';
CREATE OR REPLACE FUNCTION shardid.create_shard(shard integer) RETURNS name
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nsp         name;
    other       shardid.shard_registry;
BEGIN
    PERFORM shardid_internal._require_shard(shard);
    PERFORM shardid_internal._require_registry_privileges('create shards', true);
    -- One registry writer at a time: two sessions cannot create one shard.
    LOCK TABLE shardid.shard_registry, shardid.sharded_tables IN SHARE ROW EXCLUSIVE MODE;
    nsp := shardid_internal._shard_schema_name(shard);
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
    PERFORM shardid_internal._require_templates();

    EXECUTE pg_catalog.format('CREATE SCHEMA %I', nsp);
    EXECUTE pg_catalog.format('CREATE SEQUENCE %I.id_seq AS bigint', nsp);
    EXECUTE pg_catalog.format('COMMENT ON SEQUENCE %I.id_seq IS %L', nsp,
                              pg_catalog.format('Generator of shard %s: state = ms since the layout epoch << seq_bits | counter. Do not setval() it lower.', shard));
    INSERT INTO shardid.shard_registry (shard, schema_name, sequence_schema, sequence_name)
        VALUES (shard, nsp, nsp, 'id_seq');
    PERFORM shardid_internal._create_shard_tables(shard);
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
    PERFORM shardid_internal._require_shard_range(first, last);
    PERFORM shardid_internal._require_registry_privileges('create shards', true);
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
                       WHERE n.nspname = shardid_internal._shard_schema_name(g));
    IF taken IS NOT NULL THEN
        RAISE EXCEPTION 'schema "%" already exists', shardid_internal._shard_schema_name(taken)
            USING ERRCODE = 'duplicate_schema',
                  DETAIL = pg_catalog.format('No shard of %s .. %s was created.', first, last);
    END IF;
    -- Every shard of the range, in one batch (53200 names create_shards_proc()).
    RETURN shardid_internal._create_shards_batch(first, last, NULL);
END
$$;

COMMENT ON FUNCTION shardid.create_shards(integer, integer) IS
    'Creates shards first..last (inclusive) in one transaction, after checking that none exists; returns how many. For more shards than one transaction can lock, CALL create_shards_proc().';
-- The checks create_shards_proc() makes before its first batch, the same as
-- create_shards() but that registered shards are skipped; returns how many
-- shards of first..last are missing.
CREATE OR REPLACE FUNCTION shardid_internal._create_shards_start(first integer, last integer, batch_size integer)
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
    PERFORM shardid_internal._require_batch_size(batch_size);
    PERFORM shardid_internal._require_shard_range(first, last);
    PERFORM shardid_internal._require_registry_privileges('create shards', true);
    PERFORM shardid_internal._require_templates();
    -- A schema of the range that is not a registered shard stops the run
    -- before anything is created, as in create_shards().
    SELECT min(g) INTO taken FROM pg_catalog.generate_series(first, last) AS g
        WHERE NOT EXISTS (SELECT FROM shardid.shard_registry AS s WHERE s.shard = g)
          AND EXISTS (SELECT FROM pg_catalog.pg_namespace AS n
                       WHERE n.nspname = shardid_internal._shard_schema_name(g));
    IF taken IS NOT NULL THEN
        RAISE EXCEPTION 'schema "%" already exists', shardid_internal._shard_schema_name(taken)
            USING ERRCODE = 'duplicate_schema',
                  DETAIL = pg_catalog.format('Shard %s is not registered. No shard of %s .. %s was created.', taken, first, last),
                  HINT = pg_catalog.format('If it holds shard %s (restored from a dump), register it with shardid.attach_shard(%s).', taken, taken);
    END IF;
    SELECT count(*) INTO missing FROM pg_catalog.generate_series(first, last) AS g
        WHERE NOT EXISTS (SELECT FROM shardid.shard_registry AS s WHERE s.shard = g);
    RETURN missing;
END
$$;

COMMENT ON FUNCTION shardid_internal._create_shards_start(integer, integer, integer) IS
    'The checks of create_shards_proc() before its first batch; returns how many shards of first..last are not registered.';
-- The batches of create_shards(_proc)() and create_table(_proc)(), when
-- the server's lock table ran out (53200 with max_locks_per_transaction in
-- its hint) after made items (item: shard or table), every one created in
-- this transaction holding its locks until it ends (holds: which): raises
-- 53200 saying so. With batch_size NULL (the one-transaction function,
-- what: its call), nothing was created and the HINT names the procedure
-- (proc: its call without the closing parenthesis) that commits in
-- batches; otherwise the earlier batches are committed, and the HINT goes
-- on with batches a quarter of the size (batch: how a batch's items are
-- named).
CREATE OR REPLACE FUNCTION shardid_internal._raise_out_of_locks(what text, item text, batch text, holds text, proc text,
                                                                made integer, batch_size integer) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF batch_size IS NULL THEN
        RAISE EXCEPTION '% needs more locks than one transaction can hold', what
            USING ERRCODE = 'out_of_memory',
                  DETAIL = format('The server''s lock table ran out after %s %ss (max_locks_per_transaction = %s): %s until the transaction ends. No %s was created.',
                                  made, item, current_setting('max_locks_per_transaction'), holds, item),
                  HINT = format('CALL %s); creates the %ss in batches that commit.', proc, item);
    END IF;
    RAISE EXCEPTION 'a batch of % % needs more locks than the server''s lock table has free', batch_size, batch
        USING ERRCODE = 'out_of_memory',
              DETAIL = format('It ran out after %s %ss (max_locks_per_transaction = %s); they were rolled back. The %ss of earlier batches are committed.',
                              made, item, current_setting('max_locks_per_transaction'), item),
              HINT = format('Go on with smaller batches: CALL %s, %s);', proc, GREATEST(1, batch_size / 4));
END
$$;

COMMENT ON FUNCTION shardid_internal._raise_out_of_locks(text, text, text, text, text, integer, integer) IS
    'create_shards(_proc)() and create_table(_proc)(): raises 53200 when the lock table ran out after made items, with the procedure that commits in batches (or smaller batches) in the HINT. Executable by PUBLIC (the batches of shard administrators call it; it only raises).';
-- One batch of create_shards_proc(): creates the next batch_size shards of
-- first..last that are not registered yet, in order, and returns how many
-- (0: none is missing). The caller commits after each batch. With
-- batch_size NULL, create_shards(): all of them, in the caller's one
-- transaction, which has checked that none is registered.
CREATE OR REPLACE FUNCTION shardid_internal._create_shards_batch(first integer, last integer, batch_size integer)
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
        PERFORM shardid_internal._raise_out_of_locks(format('create_shards(%s, %s)', first, last), 'shard', 'shards',
                                                     'each shard created holds its locks, and those of its tables,',
                                                     format('shardid.create_shards_proc(%s, %s', first, last), made, batch_size);
    END;
    RETURN made;
END
$$;

COMMENT ON FUNCTION shardid_internal._create_shards_batch(integer, integer, integer) IS
    'One batch of create_shards_proc(): creates up to batch_size unregistered shards of first..last, in order; returns how many. With batch_size NULL, all of them, for create_shards().';
-- create_shards_proc(): the NOTICE that ends it: the shards of first..last
-- it created (done) and those that existed already.
CREATE OR REPLACE FUNCTION shardid_internal._create_shards_done(first integer, last integer, done integer) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE NOTICE 'create_shards_proc: shards % .. %: % created, % existed already', first, last, done, (last - first + 1) - done;
END
$$;

COMMENT ON FUNCTION shardid_internal._create_shards_done(integer, integer, integer) IS
    'create_shards_proc(): the NOTICE that ends it: shards created, and how many existed already. Executable by PUBLIC (the procedure calls it).';
-- create_shards() in batches that commit, for ranges one transaction cannot
-- lock (8192 shards on a server with default settings), in pg_partman's
-- *_proc convention: the loop of the area's batch procedures
-- (_batch_run). A procedure that COMMITs may have no SET clause (it would
-- make it atomic): the work and the NOTICEs are functions that pin
-- search_path.
CREATE OR REPLACE PROCEDURE shardid.create_shards_proc(first integer, last integer, batch_size integer DEFAULT 256)
    LANGUAGE plpgsql
AS $$
DECLARE
    todo integer;
    done integer[] := '{0,0}';  -- shards, batches
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid.create_shards_proc()',
                                             'after every batch',
                                             'CALL it on its own, or use shardid.create_shards() for a range that fits one transaction.');
    todo := shardid_internal._create_shards_start(first, last, batch_size);
    RAISE NOTICE 'create_shards_proc: % shards of % .. % to create, in batches of %', todo, first, last, batch_size;
    CALL shardid_internal._batch_run('create_shards_proc', 'shards', pg_catalog.jsonb_build_object('first', first, 'last', last),
                                     batch_size, todo, done);
    PERFORM shardid_internal._create_shards_done(first, last, done[1]);
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
    t := shardid_internal._register_table('create_table()', template, id_column, false);
    -- Every shard, in one batch (53200 names create_table_proc()).
    RETURN shardid_internal._create_table_batch(t.table_name, NULL);
END
$$;

COMMENT ON FUNCTION shardid.create_table(regclass, name) IS
    'Creates <shard schema>.<template name> (LIKE template INCLUDING ALL) in every shard, in one transaction, id_column DEFAULT shardid.next_id(shard, shard''s id_seq); shards created later get it too. Returns the number of tables created. For more shards than one transaction can lock, CALL create_table_proc().';
-- The first step of create_table_proc(): the checks of create_table(), then
-- the table's registration (or, re-run, the same registration found again).
-- Returns the table's name, how many shards lack it and how many there are.
CREATE OR REPLACE FUNCTION shardid_internal._create_table_start(template regclass, id_column name, batch_size integer,
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
    PERFORM shardid_internal._require_batch_size(batch_size);
    t := shardid_internal._register_table('create_table_proc()', template, id_column, true);
    table_name := t.table_name;
    SELECT count(*),
           count(*) FILTER (WHERE pg_catalog.to_regclass(pg_catalog.format('%I.%I', s.schema_name, t.table_name)) IS NULL)
        INTO shards, todo
        FROM shardid.shard_registry AS s;
END
$$;

COMMENT ON FUNCTION shardid_internal._create_table_start(regclass, name, integer) IS
    'The checks and registration of create_table_proc() before its first batch; returns the table name, how many shards lack it and how many shards there are.';
-- One batch of create_table_proc(): creates the registered sharded table in
-- the next batch_size shards that lack it, in shard order, and returns how
-- many (0: every shard has it). The caller commits after each batch. With
-- batch_size NULL, create_table(): every shard, in the caller's one
-- transaction, which has just registered the table.
CREATE OR REPLACE FUNCTION shardid_internal._create_table_batch(table_name name, batch_size integer)
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
    PERFORM shardid_internal._require_template(t);
    BEGIN
        -- One catalog lookup per shard, in shard order, until the batch is
        -- full: a join with pg_class could be planned as a nested loop over
        -- every shard's copy, once per shard.
        FOR r IN SELECT s.* FROM shardid.shard_registry AS s
                  WHERE pg_catalog.to_regclass(pg_catalog.format('%I.%I', s.schema_name, t.table_name)) IS NULL
                  ORDER BY s.shard LIMIT batch_size LOOP
            PERFORM shardid_internal._create_shard_table(r, t);
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
        PERFORM shardid_internal._raise_out_of_locks(format('create_table() over %s shards', (SELECT count(*) FROM shardid.shard_registry)),
                                                     'table', 'shard tables',
                                                     'each table created holds locks on itself, its indexes, TOAST table and constraints',
                                                     format('shardid.create_table_proc(%L, %L', format('%I.%I', t.template_schema, t.template_name),
                                                            t.id_column),
                                                     made, batch_size);
    END;
    RETURN made;
END
$$;

COMMENT ON FUNCTION shardid_internal._create_table_batch(name, integer) IS
    'One batch of create_table_proc(): creates the sharded table in up to batch_size shards that lack it, in shard order; returns how many. With batch_size NULL, every shard, for create_table().';
-- The batch procedures of this area (create_shards_proc(),
-- create_table_proc()), one list: the next batch of job, with its
-- arguments (args: first and last, or table_name), application_name
-- showing the progress (done of todo); how many shards or tables it
-- created, NULL when none was left. _batch_run() calls it between its
-- commits.
CREATE OR REPLACE FUNCTION shardid_internal._batch_next(job text, args jsonb, batch_size integer, done integer, todo integer)
    RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    made integer;
BEGIN
    PERFORM set_config('application_name', concat_ws(' ', 'shardid', job, args->>'table_name', format('%s/%s', done, todo)), true);
    CASE job
        WHEN 'create_shards_proc' THEN
            made := shardid_internal._create_shards_batch((args->>'first')::integer, (args->>'last')::integer, batch_size);
        WHEN 'create_table_proc' THEN
            made := shardid_internal._create_table_batch((args->>'table_name')::name, batch_size);
    END CASE;
    RETURN NULLIF(made, 0);
END
$$;

COMMENT ON FUNCTION shardid_internal._batch_next(text, jsonb, integer, integer, integer) IS
    'create_shards_proc() and create_table_proc(): the next batch of a job with its arguments, application_name showing the progress; how many it created, NULL when none was left. Executable by PUBLIC (the procedures call it).';
-- The loop of the batch procedures of this area (create_shards_proc(),
-- create_table_proc()), in pg_partman's *_proc convention: the next batch
-- (_batch_next), committed, then counted and reported (_batch_progress),
-- until none is left; done counts the items and batches ({items,
-- batches}). No SET clause (it COMMITs): it holds the loop and its
-- COMMITs; executable by PUBLIC as the procedures are (their batches
-- check the caller).
CREATE OR REPLACE PROCEDURE shardid_internal._batch_run(job text, items text, args jsonb, batch_size integer, todo integer,
                                                        INOUT done integer[])
    LANGUAGE plpgsql
AS $$
DECLARE
    made integer;
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), pg_catalog.format('shardid.%s()', job),
                                             'after every batch');
    LOOP
        made := shardid_internal._batch_next(job, args, batch_size, done[1], todo);
        EXIT WHEN made IS NULL;
        COMMIT;
        done := shardid_internal._batch_progress(job, items, done, made, todo);
    END LOOP;
END
$$;

COMMENT ON PROCEDURE shardid_internal._batch_run(text, text, jsonb, integer, integer, integer[]) IS
    'The loop of create_shards_proc() and create_table_proc(): the next batch, committed, counted and reported, until none is left. Executable by PUBLIC (the procedures call it; their batches check the caller).';
-- create_table_proc(): the NOTICE that ends it: the shards that got the
-- table (done) and those that had it already.
CREATE OR REPLACE FUNCTION shardid_internal._create_table_done(table_name name, done integer, shards integer) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE NOTICE 'create_table_proc: table %: % created, % of % shards had it already', table_name, done, shards - done, shards;
END
$$;

COMMENT ON FUNCTION shardid_internal._create_table_done(name, integer, integer) IS
    'create_table_proc(): the NOTICE that ends it: tables created, and how many shards had it already. Executable by PUBLIC (the procedure calls it).';
-- create_table() in batches that commit, for more shards than one
-- transaction can lock (8192 on a server with default settings), in
-- pg_partman's *_proc convention: the loop of the area's batch procedures
-- (_batch_run). No SET clause (a procedure with one cannot COMMIT): the
-- work and the NOTICEs are functions that pin search_path.
CREATE OR REPLACE PROCEDURE shardid.create_table_proc(template regclass, id_column name DEFAULT 'id', batch_size integer DEFAULT 256)
    LANGUAGE plpgsql
AS $$
DECLARE
    s    record;
    done integer[] := '{0,0}';  -- tables, batches
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid.create_table_proc()',
                                             'after every batch',
                                             'CALL it on its own, or use shardid.create_table() when every shard''s table fits one transaction.');
    SELECT * INTO s FROM shardid_internal._create_table_start(template, id_column, batch_size) AS x;
    RAISE NOTICE 'create_table_proc: % of % shards to get table %, in batches of %', s.todo, s.shards, s.table_name, batch_size;
    CALL shardid_internal._batch_run('create_table_proc', 'tables', pg_catalog.jsonb_build_object('table_name', s.table_name),
                                     batch_size, s.todo, done);
    PERFORM shardid_internal._create_table_done(s.table_name, done[1], s.shards);
END
$$;

COMMENT ON PROCEDURE shardid.create_table_proc(regclass, name, integer) IS
    'create_table() in batches: registers the sharded table, then creates it in the shards that lack it, committing every batch_size tables; re-run it after an interruption to finish. Progress: NOTICEs, and application_name in pg_stat_activity. CALL it on its own, not in a transaction block.';
-- The undo of create_table(): drops the sharded table made from a template
-- in every registered shard of this database and unregisters it, so shards
-- created later no longer get it; the template itself is left to its owner
-- (the event trigger shardid_template_drop lets it be dropped from then
-- on). Runs with the caller's rights: it needs the registry privileges of
-- create_table(), ownership of the template, and DROP TABLE refuses copies
-- the caller does not own. One transaction: over thousands of shards it
-- takes one lock per copy (max_locks_per_transaction). Returns how many
-- copies it dropped.
CREATE OR REPLACE FUNCTION shardid.drop_table(template regclass) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c       pg_catalog.pg_class;
    nsp     name;
    t       shardid.sharded_tables;
    s       record;
    dropped integer := 0;
BEGIN
    IF template IS NULL THEN
        RAISE EXCEPTION 'template must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    SELECT * INTO c FROM pg_catalog.pg_class AS x WHERE x.oid = template;
    SELECT n.nspname INTO nsp FROM pg_catalog.pg_namespace AS n WHERE n.oid = c.relnamespace;
    PERFORM shardid_internal._require_registry_privileges('drop sharded tables', false);
    IF NOT pg_catalog.pg_has_role(c.relowner, 'USAGE') THEN
        RAISE EXCEPTION 'must be owner of table %', template
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'Only the template''s owner may drop the sharded table made from it.';
    END IF;
    LOCK TABLE shardid.shard_registry, shardid.sharded_tables IN SHARE ROW EXCLUSIVE MODE;
    SELECT * INTO t FROM shardid.sharded_tables AS x
     WHERE x.template_schema = nsp AND x.template_name = c.relname;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'table % is not the template of a sharded table', template
            USING ERRCODE = 'undefined_object',
                  HINT = 'shardid.sharded_tables lists the sharded tables and their templates.';
    END IF;
    FOR s IN SELECT r.shard, r.schema_name FROM shardid.shard_registry AS r ORDER BY r.shard LOOP
        IF pg_catalog.to_regclass(pg_catalog.format('%I.%I', s.schema_name, t.table_name)) IS NOT NULL THEN
            EXECUTE pg_catalog.format('DROP TABLE %I.%I', s.schema_name, t.table_name);
            dropped := dropped + 1;
        END IF;
    END LOOP;
    DELETE FROM shardid.sharded_tables AS x WHERE x.table_name = t.table_name;
    RETURN dropped;
END
$$;

COMMENT ON FUNCTION shardid.drop_table(regclass) IS
    'Drops the sharded table made from a template in every shard, in one transaction, and unregisters it; leaves the template, which may then be dropped. Returns the number of tables dropped.';
-- Event trigger (sql_drop, shardid_template_drop): a registered template
-- is the definition every shard's copy was made from and shards created
-- later are made from, so dropping it (DROP TABLE, DROP SCHEMA ... CASCADE,
-- DROP OWNED) is refused, naming drop_table(). Unrelated drops cost a scan
-- of the dropped objects. It is an extension member: pg_dump leaves it out
-- (CREATE EXTENSION brings it), and DROP EXTENSION drops it.
CREATE OR REPLACE FUNCTION shardid_internal._refuse_template_drop() RETURNS event_trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t      shardid.sharded_tables;
    copies bigint;
BEGIN
    SELECT s.* INTO t
      FROM pg_catalog.pg_event_trigger_dropped_objects() AS d
      JOIN shardid.sharded_tables AS s
        ON s.template_schema = d.schema_name AND s.template_name = d.object_name
     WHERE d.object_type = 'table'
     ORDER BY s.position LIMIT 1;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    SELECT count(*) INTO copies FROM shardid.shard_registry AS r
     WHERE pg_catalog.to_regclass(pg_catalog.format('%I.%I', r.schema_name, t.table_name)) IS NOT NULL;
    -- _raise: the error is the DROP's, with no CONTEXT line of this function
    PERFORM shardid_internal._raise('2BP01',
        pg_catalog.format('cannot drop table %I.%I: it is the template of sharded table %I',
                          t.template_schema, t.template_name, t.table_name),
        pg_catalog.format('Shards of this database with a copy of it: %s; shards created later are made from it.', copies),
        pg_catalog.format('Drop the sharded table first: SELECT shardid.drop_table(%L); drops its copy in every shard and unregisters it.',
                          pg_catalog.format('%I.%I', t.template_schema, t.template_name)));
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._refuse_template_drop() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._refuse_template_drop() IS
    'Event trigger shardid_template_drop (sql_drop): refuses dropping the template of a sharded table (2BP01), naming drop_table().';
-- A registered template cannot be dropped (_refuse_template_drop). An
-- event trigger is not re-created by CREATE OR REPLACE: the install script
-- and the update part that brings it include this file once each.
CREATE EVENT TRIGGER shardid_template_drop ON sql_drop
    EXECUTE FUNCTION shardid_internal._refuse_template_drop();

COMMENT ON EVENT TRIGGER shardid_template_drop IS
    'Refuses dropping the template of a sharded table: SELECT shardid.drop_table(template) first.';
CREATE OR REPLACE FUNCTION shardid.attach_shard(shard integer, schema_name name DEFAULT NULL) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nsp    name := COALESCE(schema_name, shardid_internal._shard_schema_name(shard));
    other  shardid.shard_registry;
    seq    regclass;
    l      shardid.layout_report := shardid.layout();
    t      shardid.sharded_tables;
    state  bigint;
    max_id bigint;
    ahead  timestamptz := pg_catalog.clock_timestamp() + '1 day'::interval;
    layout_text text;
BEGIN
    PERFORM shardid_internal._require_shard(shard);
    PERFORM shardid_internal._require_registry_privileges('attach shards', false);
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
    PERFORM shardid_internal._require_generator(seq);
    PERFORM shardid_internal._require_templates();

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
    RETURN shardid_internal._create_shard_tables(shard, true);
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
    PERFORM shardid_internal._require_registry_privileges('detach shards', false);
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
    PERFORM shardid_internal._require_shard(shard);
    SELECT * INTO c FROM pg_catalog.pg_class WHERE oid = tbl;
    IF c.relkind NOT IN ('r', 'p') THEN
        RAISE EXCEPTION '"%" is not a table', tbl USING ERRCODE = 'wrong_object_type';
    END IF;
    SELECT n.nspname INTO tblnsp FROM pg_catalog.pg_namespace AS n WHERE n.oid = c.relnamespace;
    PERFORM shardid_internal._require_generator(seq);
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
    PERFORM shardid_internal._require_registry_privileges('adopt tables', false);
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
        part := shardid_internal._fit_name(relname, to_char(t, fmt));
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
-- On the old node after a move: any write that still reaches the retired
-- copy of a shard fails instead of being lost there.
CREATE OR REPLACE FUNCTION shardid_internal._refuse_retired_write() RETURNS trigger
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
REVOKE ALL ON FUNCTION shardid_internal._refuse_retired_write() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._refuse_retired_write() IS
    'Trigger on the retired copy of a moved shard: refuses writes (25006, retry through the router).';
-- On the source node during a move's cut-over: writes to the shard fail
-- at once with 25006 (retry), instead of waiting behind a lock. A lease
-- freeze (third argument 'lease') lapses when the session that froze the
-- shard holds the advisory lock on the fourth argument, a random key, no
-- more: the write goes through then (see freeze_shard_tables). (A lease
-- frozen by 0.2 has no fourth argument and its key is (1936222564, shard).)
CREATE OR REPLACE FUNCTION shardid_internal._refuse_frozen_write() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF TG_NARGS >= 3 AND TG_ARGV[2] = 'lease'
       AND (CASE WHEN TG_NARGS >= 4 THEN pg_try_advisory_xact_lock_shared(TG_ARGV[3]::bigint)
                 ELSE pg_try_advisory_xact_lock_shared(1936222564, TG_ARGV[0]::integer) END) THEN
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
REVOKE ALL ON FUNCTION shardid_internal._refuse_frozen_write() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._refuse_frozen_write() IS
    'Trigger on the tables of a shard during a move''s cut-over: refuses writes at once (25006, retry); a lease freeze lapses with the session that froze the shard.';
-- shardid, area generator: next_id(), and generators raised above rows
-- that arrived without them (logical replication, a data restore:
-- sync_generators()); the view shardid.generators reports the health of
-- every generator for dashboards and alerts (docs/monitoring.md), readable
-- by pg_monitor. Its C++ half is src/pg/next_id.cpp over src/core.

CREATE OR REPLACE FUNCTION shardid.next_id(shard integer, seq regclass) RETURNS bigint
    LANGUAGE c VOLATILE STRICT PARALLEL UNSAFE AS 'MODULE_PATHNAME', 'shardid_next_id';

COMMENT ON FUNCTION shardid.next_id(integer, regclass) IS
    'The next ID of the generator kept in sequence seq, for logical shard shard: unique and strictly increasing per sequence, clock- and crash-safe. Use it as a column DEFAULT.';
-- A generator's state is time << seq_bits | counter (src/core/generator.hpp).
-- Views that report generators decode it here rather than re-derive the
-- formula in SQL. Plain arithmetic on a value the caller already holds;
-- executable by pg_monitor, who reads shardid.generators (a view's
-- functions run with its reader's privileges), not by PUBLIC (issue 19:
-- internal functions only for the roles that need them).
CREATE OR REPLACE FUNCTION shardid_internal._state_decode(state bigint, OUT ts timestamptz, OUT seq integer)
    LANGUAGE c STABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_state_decode';

REVOKE ALL ON FUNCTION shardid_internal._state_decode(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION shardid_internal._state_decode(bigint) TO pg_monitor;

COMMENT ON FUNCTION shardid_internal._state_decode(bigint) IS
    'Internal: the time and counter (seq) of a generator state under this database''s layout: the time and seq of the last ID it issued. NULL for a state outside the layout (negative, or past its end).';
-- Raises a generator to at least a state, never lower, as sync_generators()
-- needs it: under the sequence's buffer lock, holding only the lock writers
-- hold themselves (see src/pg/sequence_state.cpp).
CREATE OR REPLACE FUNCTION shardid_internal._raise_generator(seq regclass, state bigint) RETURNS boolean
    LANGUAGE c VOLATILE STRICT PARALLEL UNSAFE AS 'MODULE_PATHNAME', 'shardid_raise_generator';

COMMENT ON FUNCTION shardid_internal._raise_generator(regclass, bigint) IS
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
-- Other DEFAULTs are returned as 'untrusted' and their tables never read.
--
-- Every generator on its own: one call raises all it can. A trusted
-- column that cannot be used (a negative ID, an ID of another shard, a
-- table the caller may not read, a policy in the way) is returned as
-- 'failed', with the error in detail, and its generator is left as it was;
-- so is a generator whose raise fails. No bad row in any table makes the
-- call fail or keeps another generator from being raised. Temporary tables
-- (another session's cannot be read; no replicated row lands in one) and
-- temporary or unlogged sequences (next_id() refuses them) are passed over;
-- a column that is not bigint is returned as 'skipped' (its type's ordering
-- could be its owner's code).
--
-- Reading runs as the caller, with row_security off: a policy that hid rows
-- would make the largest ID too low, so such a table fails (42501) instead.
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
    failed     boolean := false;
    e_msg      text;
    e_detail   text;
    e_state    text;
BEGIN
    -- Every column DEFAULT that calls next_id(), by generator (found in
    -- the catalog, without the registry: shardid_internal._next_id_defaults). A
    -- NULL row ends the last generator.
    FOR c IN
        SELECT x.* FROM (
            SELECT s.oid::pg_catalog.regclass AS seq, nd.rel::pg_catalog.regclass AS tbl, a.attname AS col,
                   nd.shard,
                   a.atttypid = 'pg_catalog.int8'::pg_catalog.regtype AS is_bigint,
                   pg_catalog.format_type(a.atttypid, a.atttypmod) AS col_type,
                   t.relowner AS owner,
                   tn.nspname AS tbl_schema, sn.nspname AS seq_schema, s.relname AS seq_name
              FROM shardid_internal._next_id_defaults AS nd
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
        IF cur_seq IS DISTINCT FROM c.seq AND wanted IS NOT NULL AND NOT failed THEN
            BEGIN
                IF shardid_internal._raise_generator(cur_seq, wanted) THEN
                    generator := cur_seq; action := 'raised'; table_name := wanted_tbl; column_name := wanted_col;
                    max_id := wanted_id; detail := NULL;
                    RETURN NEXT;
                END IF;
            EXCEPTION WHEN OTHERS THEN
                GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_msg = MESSAGE_TEXT;
                generator := cur_seq; action := 'failed'; table_name := wanted_tbl; column_name := wanted_col;
                max_id := wanted_id;
                detail := pg_catalog.format('%s (SQLSTATE %s); the generator is left as it was', e_msg, e_state);
                RETURN NEXT;
            END;
        END IF;
        IF cur_seq IS DISTINCT FROM c.seq THEN
            cur_seq := c.seq;
            wanted := NULL;
            failed := false;
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
        -- min() and max() of an indexed column are two index lookups; any
        -- error reading or checking them is this generator's alone
        BEGIN
            EXECUTE pg_catalog.format('SELECT pg_catalog.min(%1$I), pg_catalog.max(%1$I) FROM %2$s', c.col, c.tbl)
                INTO lo, hi;
            IF lo < 0 THEN
                RAISE EXCEPTION 'column "%" of table "%" holds a negative ID', c.col, c.tbl
                    USING ERRCODE = 'invalid_parameter_value',
                          DETAIL = pg_catalog.format('For example %s. IDs of this layout are positive 63-bit values.', lo);
            END IF;
            IF c.shard IS NOT NULL AND shardid.id_shard(hi) <> c.shard THEN
                RAISE EXCEPTION 'the largest ID of "%"."%" is not of shard %', c.tbl, c.col, c.shard
                    USING ERRCODE = 'object_not_in_prerequisite_state',
                          DETAIL = pg_catalog.format('ID %s decodes to shard %s under this layout (%s shard bits, %s seq bits); the column DEFAULT issues shard %s.',
                                                     hi, shardid.id_shard(hi), l.shard_bits, l.seq_bits, c.shard);
            END IF;
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_msg = MESSAGE_TEXT, e_detail = PG_EXCEPTION_DETAIL;
            failed := true;
            generator := c.seq; action := 'failed'; table_name := c.tbl; column_name := c.col; max_id := NULL;
            detail := pg_catalog.format('%s%s (SQLSTATE %s); the generator is left as it was', e_msg,
                                        COALESCE(': ' OPERATOR(pg_catalog.||) NULLIF(e_detail, ''), ''), e_state);
            RETURN NEXT;
            CONTINUE;
        END;
        CONTINUE WHEN hi IS NULL;
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
    'Raises each generator named in a column DEFAULT shardid.next_id(shard, seq) to at least the state of the largest ID in the columns it serves (after logical replication or a data restore); never lowers one, takes no lock writers wait for. Trusts only registered tables of the generator''s shard and tables whose owner may UPDATE the sequence; returns a row per generator raised and per DEFAULT it did not read (untrusted, skipped). Every generator on its own: a column it cannot use (a negative ID, another shard''s ID, a table it cannot read) is returned as failed and leaves that generator as it was; every other generator is still raised. The caller needs SELECT on the tables and UPDATE on the generators it raises: a superuser, or the owner of all of them.';
-- Whether a generator will make its failover move at its next ID: its
-- sequence page was last WAL-logged before this server's timeline began (a
-- promotion, a point-in-time restore), compared with the switch point
-- next_id() uses (src/pg/sequence_state.cpp). Reads the page's LSN, not
-- the state. For _generator_states(), which runs as the extension owner;
-- not executable by PUBLIC.
CREATE OR REPLACE FUNCTION shardid_internal._failover_pending(seq pg_catalog.regclass)
    RETURNS boolean
    LANGUAGE c VOLATILE STRICT AS 'MODULE_PATHNAME', 'shardid_failover_pending';

REVOKE ALL ON FUNCTION shardid_internal._failover_pending(pg_catalog.regclass) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._failover_pending(pg_catalog.regclass) IS
    'Internal (for _generator_states()): true when generator seq was last WAL-logged on an earlier timeline (before this server''s promotion or restore), so its next ID moves it past the old timeline''s IDs; NULL in recovery or for a sequence that is not permanent.';
-- Every generator that a column DEFAULT names, with the tables it serves,
-- its state and whether its next ID makes a failover move
-- (shardid_internal._failover_pending). The catalog finds the DEFAULTs
-- shardid.next_id(shard, seq) without the shard registry
-- (shardid_internal._next_id_defaults); a generator's shard is NULL unless
-- every DEFAULT naming it has the same literal. Partitions count as their
-- partitioned table.
--
-- SECURITY DEFINER so that a monitoring role (pg_monitor) reads the states
-- without a privilege on each sequence, and only to that role: it reads the
-- state of these sequences and of no other, and takes no argument. States
-- of temporary and unlogged sequences (next_id() refuses them) are not read.
CREATE OR REPLACE FUNCTION shardid_internal._generator_states()
    RETURNS TABLE (schema name, sequence name, shard integer, tables pg_catalog.regclass[], state bigint,
                   failover_pending boolean)
    LANGUAGE sql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT n.nspname, s.relname,
           CASE WHEN pg_catalog.count(g.shard) = pg_catalog.count(*)
                 AND pg_catalog.min(g.shard) = pg_catalog.max(g.shard)
                THEN pg_catalog.min(g.shard) END,
           pg_catalog.array_agg(DISTINCT g.tbl),
           CASE WHEN s.relpersistence = 'p'
                THEN pg_catalog.pg_sequence_last_value(s.oid::pg_catalog.regclass) END,
           CASE WHEN s.relpersistence = 'p'
                THEN shardid_internal._failover_pending(s.oid::pg_catalog.regclass) END
      FROM (SELECT nd.seq,
                   COALESCE(pg_catalog.pg_partition_root(nd.rel), nd.rel::pg_catalog.regclass) AS tbl,
                   nd.shard
              FROM shardid_internal._next_id_defaults AS nd
              JOIN pg_catalog.pg_attribute AS a
                ON a.attrelid = nd.rel AND a.attnum = nd.attnum
              JOIN pg_catalog.pg_class AS t ON t.oid = nd.rel
             WHERE t.relkind IN ('r', 'p') AND NOT a.attisdropped) AS g
      JOIN pg_catalog.pg_class AS s
        ON s.oid = g.seq AND s.relkind = 'S'
      JOIN pg_catalog.pg_namespace AS n ON n.oid = s.relnamespace
     GROUP BY n.nspname, s.relname, s.oid, s.relpersistence
$$;

REVOKE ALL ON FUNCTION shardid_internal._generator_states() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION shardid_internal._generator_states() TO pg_monitor;

COMMENT ON FUNCTION shardid_internal._generator_states() IS
    'Internal (for shardid.generators): every generator sequence a column DEFAULT shardid.next_id(shard, seq) names, its shard, the tables it serves, its raw state and whether its next ID makes a failover move; read as the extension owner, executable by pg_monitor.';
-- Generator health, for monitoring: one row per generator that a column
-- DEFAULT names. A burst of more than ids_per_ms IDs in a millisecond
-- carries a generator's state ahead of the clock (lead), up to
-- shardid.max_drift, where next_id() starts to wait; a lead beyond it means
-- the clock stepped back or a failover moved the generator.
-- failover_pending: the generator was last logged before this server's
-- timeline began (a promotion, a restore), so its next ID makes that move.
-- time_left is how long the layout can still issue IDs. Times are measured
-- from now(), the start of the transaction. The retired copy of a moved
-- shard (its tables carry retire_shard()'s trigger, known by its function)
-- issues no ID and is not a generator of its shard: shardid.retired_copies
-- lists those on the router.
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
       g.failover_pending,
       st.seq::bigint OPERATOR(pg_catalog.+) 1 AS ids_in_ms,
       l.ids_per_ms,
       l.last_time AS layout_end,
       l.last_time OPERATOR(pg_catalog.-) pg_catalog.now() AS time_left
  FROM shardid_internal._generator_states() AS g
 CROSS JOIN shardid.layout() AS l
 CROSS JOIN LATERAL shardid_internal._state_decode(g.state) AS st
 WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_trigger AS t
                    WHERE t.tgrelid::pg_catalog.regclass OPERATOR(pg_catalog.=) ANY (g.tables)
                      AND t.tgfoid OPERATOR(pg_catalog.=) 'shardid_internal._refuse_retired_write()'::pg_catalog.regprocedure);

REVOKE ALL ON shardid.generators FROM PUBLIC;
GRANT SELECT ON shardid.generators TO pg_monitor;

COMMENT ON VIEW shardid.generators IS
    'Generator health: every generator a column DEFAULT shardid.next_id(shard, seq) names (but retired copies of moved shards), its shard and tables, the time of its last ID, its lead over now() (left by bursts or a failover move), whether its next ID makes a failover move, the IDs it issued in that millisecond, and the layout''s end. Readable by pg_monitor.';
COMMENT ON COLUMN shardid.generators.schema IS 'Schema of the generator sequence.';
COMMENT ON COLUMN shardid.generators.sequence IS 'The generator sequence.';
COMMENT ON COLUMN shardid.generators.shard IS 'The shard its DEFAULTs issue IDs for (NULL unless they all name the same literal shard).';
COMMENT ON COLUMN shardid.generators.tables IS 'The tables whose column DEFAULT names the generator (partitions as their partitioned table).';
COMMENT ON COLUMN shardid.generators.last_time IS 'Time of the generator''s state: of the last ID it issued (NULL before the first, or for a state outside the layout).';
COMMENT ON COLUMN shardid.generators.lead IS 'How far last_time is ahead of now(): the drift a burst left (0 when not ahead). Capped by shardid.max_drift unless the clock stepped back or a failover moved the generator.';
COMMENT ON COLUMN shardid.generators.failover_pending IS 'True when the generator was last WAL-logged on an earlier timeline (before this server''s promotion or point-in-time restore): its next ID moves it shardid.max_clock_skew + shardid.max_drift ahead, past the old timeline''s IDs. NULL on a standby (in recovery).';
COMMENT ON COLUMN shardid.generators.ids_in_ms IS 'IDs issued in the millisecond of last_time, out of ids_per_ms.';
COMMENT ON COLUMN shardid.generators.ids_per_ms IS 'IDs a generator can issue per millisecond (2^seq_bits).';
COMMENT ON COLUMN shardid.generators.layout_end IS 'The last time the layout can represent: no ID can be issued after it.';
COMMENT ON COLUMN shardid.generators.time_left IS 'layout_end - now(): how long the layout can still issue IDs.';
-- shardid, area nodes, on the router (router/): the data nodes and the
-- placement of every logical shard.
--
-- On a router, shardid.nodes names the data nodes and shardid.shard_placement
-- says which node holds each logical shard (both in common/router/, which
-- the moves read too). Applications route with them (the shard maps of
-- clients/ read shardid.placement); a router needs only dblink (for moves)
-- and shardid. On a router that also has PL/Proxy, refresh_cluster() keeps
-- the PL/Proxy cluster 'shardid' as an SQL/MED server: one partition per
-- logical shard (partition number = shard number, max_shard + 1 of them, a
-- power of two as PL/Proxy requires), so proxy functions say
-- CLUSTER 'shardid'; RUN ON shardid.id_shard(i_id);  or  RUN ON i_shard;
-- Every function that changes the placement calls _refresh_proxy(), which
-- does nothing where PL/Proxy is not installed.
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
-- (EXECUTE revoked from PUBLIC). add_node() and place_shards() refuse a
-- node that check_cluster() would report (_require_node()).
--
-- Secrets: connect strings never hold a password (add_node refuses one, a
-- CHECK enforces it): the foreign server's options are readable by every
-- role, and so is whatever pg_dump copies. Passwords belong in .pgpass (or a
-- passfile / service file) of the OS user that connects; libpq itself
-- parses them for the check (src/pg/connstr.cpp). shardid.nodes is
-- readable by administrators only; placement and shard_moves by everyone.

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
-- Router: where the PL/Proxy cluster 'shardid' (the partition options pN of
-- its SQL/MED server) differs from the placement (partition_connstrs()):
-- one row per partition option to ADD, SET or DROP (the ALTER SERVER
-- action), with the shard it stands for and the connect string it wants.
-- Other options of the server (connection_lifetime, ...) are the
-- administrator's and are not compared. Without the server every
-- partition is to ADD. Shared by refresh_cluster(), which applies it (once
-- the server exists), and check_cluster(), which reports it
-- (proxy_out_of_step).
CREATE OR REPLACE FUNCTION shardid_internal._proxy_diff()
    RETURNS TABLE (option_name text, shard integer, action text, connstr text)
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    WITH cur AS (
        SELECT o.option_name AS k, o.option_value AS v
          FROM pg_foreign_server AS s, pg_options_to_table(s.srvoptions) AS o
         WHERE s.srvname = 'shardid' AND o.option_name ~ '^p[0-9]+$'
    ), want AS (
        SELECT 'p' || c.shard AS k, c.connstr AS v, c.shard
          FROM shardid.partition_connstrs() AS c
    )
    SELECT COALESCE(want.k, cur.k), COALESCE(want.shard, substr(cur.k, 2)::integer),
           CASE WHEN cur.k IS NULL THEN 'ADD' WHEN want.k IS NULL THEN 'DROP' ELSE 'SET' END, want.v
      FROM want FULL JOIN cur ON cur.k = want.k
     WHERE cur.v IS DISTINCT FROM want.v
     ORDER BY 2, 1
$$;

REVOKE ALL ON FUNCTION shardid_internal._proxy_diff() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._proxy_diff() IS
    'Router: the partition options of the PL/Proxy cluster ''shardid'' that differ from the placement: the ALTER SERVER action (ADD, SET, DROP), the shard and the wanted connect string; every partition (ADD) without the cluster.';
-- Rebuilds the SQL/MED server 'shardid' (the PL/Proxy cluster) from the
-- placement: creates it, or alters only the partitions that changed. Called
-- by itself it needs PL/Proxy; the functions that change the placement call
-- it through _refresh_proxy(), which skips it on a router without PL/Proxy.
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
                  DETAIL = 'The PL/Proxy cluster ''shardid'' is a foreign server of the plproxy wrapper. A router without PL/Proxy needs no cluster: applications route with shardid.placement.',
                  HINT = 'To route with PL/Proxy, on the router: CREATE EXTENSION plproxy; (Debian package postgresql-NN-plproxy), then SELECT shardid.refresh_cluster(); again. Data nodes need only shardid.';
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

    -- Only the partition options that differ (_proxy_diff()); other options
    -- (connection_lifetime, query_timeout, ...) are the administrator's.
    SELECT pg_catalog.string_agg(CASE d.action WHEN 'DROP' THEN pg_catalog.format('DROP %s', d.option_name)
                                                ELSE pg_catalog.format('%s %s %L', d.action, d.option_name, d.connstr) END,
                                 ', ' ORDER BY d.shard, d.option_name),
           pg_catalog.count(*)
      INTO opts, changes
      FROM shardid_internal._proxy_diff() AS d;
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
-- missing; nothing on a router without PL/Proxy: _refresh_proxy()).
-- Returns the number of partitions changed (0 or 1).
CREATE OR REPLACE FUNCTION shardid_internal._refresh_partition(shard integer) RETURNS integer
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
        RETURN shardid_internal._refresh_proxy();
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

REVOKE ALL ON FUNCTION shardid_internal._refresh_partition(integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._refresh_partition(integer) IS
    'Router: updates the PL/Proxy partition of one shard from the placement (one ALTER SERVER option); returns 0 or 1.';
-- The PL/Proxy cluster follows the placement only on a router that has
-- PL/Proxy. Applications may route themselves (the shard maps read
-- shardid.placement) and a router without PL/Proxy (PostgreSQL 19, where
-- Debian packages none) still registers nodes, places and moves shards:
-- there is no cluster to keep, so this does nothing. refresh_cluster(),
-- called by itself, still reports the missing prerequisite; once PL/Proxy
-- is installed it builds the cluster from the placement. Only a superuser
-- can create the wrapper this looks for.
CREATE OR REPLACE FUNCTION shardid_internal._refresh_proxy() RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_foreign_data_wrapper AS w
                    WHERE w.fdwname = 'plproxy') THEN
        RETURN 0;
    END IF;
    RETURN shardid.refresh_cluster();
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._refresh_proxy() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._refresh_proxy() IS
    'Router: refresh_cluster() when the router has PL/Proxy (the wrapper plproxy exists); 0, doing nothing, when it has not.';
-- Registers a data node. connstr is libpq key=value form, as libpq parses
-- it; it must not hold a password (in any keyword libpq keeps secret, also
-- inside a dbname that libpq reads as a connect string), nor such a dbname,
-- nor set options (a frozen shard's connect string appends its own).
-- With dblink on the router it also refuses a node it cannot reach, one
-- without shardid and one with another layout (_require_node()), unless
-- force (a bootstrap that registers nodes before they are ready).
CREATE OR REPLACE FUNCTION shardid.add_node(name text, connstr text, force boolean DEFAULT false) RETURNS void
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
        PERFORM FROM shardid_internal._connstr_options(connstr);
    EXCEPTION WHEN invalid_parameter_value THEN
        RAISE EXCEPTION 'invalid connect string for node %: %', name,
                CASE WHEN connstr ~* '^\s*postgres(ql)?:' THEN 'a URI libpq cannot parse'
                     ELSE SQLERRM END
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give a libpq key=value connect string, e.g. ''host=10.0.0.5 port=5432 dbname=app''.';
    END;
    secret := shardid_internal._connstr_secret(connstr);
    IF secret IS NOT NULL AND secret <> 'a dbname libpq cannot parse' THEN
        RAISE EXCEPTION 'the connect string of node % must not hold a password', name
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = pg_catalog.format('It sets %s. Connect strings are copied by pg_dump and, on a router with PL/Proxy, stored in the cluster''s options, which every role can read.', secret),
                  HINT = 'Put the password in ~/.pgpass of the OS user that connects (the router''s and each node''s server user), or name a passfile= or service= in the connect string.';
    END IF;
    IF connstr ~ '^postgres(ql)?://' THEN
        RAISE EXCEPTION 'invalid connect string for node %: a URI', name
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'Freezing a shard for a move appends options=''-c default_transaction_read_only=on'' to it, which needs key=value form.',
                  HINT = 'Give a libpq key=value connect string, e.g. ''host=10.0.0.5 port=5432 dbname=app''.';
    END IF;
    IF EXISTS (SELECT FROM shardid_internal._connstr_options(connstr) AS o
                WHERE o.keyword = 'dbname'
                  AND (o.value ~ '^postgres(ql)?://'
                       OR pg_catalog.strpos(o.value, '=') > 0)) THEN
        RAISE EXCEPTION 'the dbname in the connect string of node % is itself a connect string', name
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'libpq reads a dbname with "=" or a URI as a connect string of its own.',
                  HINT = 'Give its settings as keywords of the connect string itself.';
    END IF;
    IF EXISTS (SELECT FROM shardid_internal._connstr_options(connstr) AS o WHERE o.keyword = 'options') THEN
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
    IF NOT force THEN
        PERFORM shardid_internal._require_node(name);
    END IF;
    PERFORM shardid_internal._refresh_proxy();
END
$$;

REVOKE ALL ON FUNCTION shardid.add_node(text, text, boolean) FROM PUBLIC;

COMMENT ON FUNCTION shardid.add_node(text, text, boolean) IS
    'Router: registers a data node (name, libpq key=value connect string); on a router with PL/Proxy, also creates the cluster ''shardid'' if needed. With dblink, refuses a node it cannot reach, without shardid or with another layout, unless force.';
-- Router: changes what is set per node: accepts_shards (false: rebalance
-- and drain plans move no shard onto the node, and a rebalance moves its
-- shards off it, as Citus's shouldhaveshards = false; drain_node() sets
-- it for the node it empties; true takes the node back). An argument left
-- NULL keeps its setting. Moves by hand (move_shard()) are not refused:
-- this steers the planner only. Returns the node's settings.
CREATE OR REPLACE FUNCTION shardid.set_node(node text, accepts_shards boolean DEFAULT NULL)
    RETURNS TABLE (node_name text, node_accepts_shards boolean)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF node IS NULL THEN
        RAISE EXCEPTION 'set_node() needs a node' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    UPDATE shardid.nodes AS n
       SET accepts_shards = COALESCE(set_node.accepts_shards, n.accepts_shards)
     WHERE n.node = set_node.node
    RETURNING n.node, n.accepts_shards INTO node_name, node_accepts_shards;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'node "%" does not exist', node USING ERRCODE = 'undefined_object',
            HINT = 'The nodes are the rows of shardid.nodes (add_node()).';
    END IF;
    RETURN NEXT;
END
$$;

REVOKE ALL ON FUNCTION shardid.set_node(text, boolean) FROM PUBLIC;

COMMENT ON FUNCTION shardid.set_node(text, boolean) IS
    'Router: sets whether a node accepts shards (false: rebalance and drain plans move none onto it, and a rebalance moves its shards off; drain_node() sets it for the node it empties); NULL keeps a setting. Returns the node''s settings.';
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
-- Returns the number of shards newly placed. With dblink on the router, a
-- node that cannot be reached, has another layout or lacks one of the
-- shards is refused (_require_node()), unless force (bootstrap order).
CREATE OR REPLACE FUNCTION shardid.place_shards(node text, first integer, last integer, force boolean DEFAULT false) RETURNS integer
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
    PERFORM shardid_internal._require_shard_range(first, last);
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
    IF NOT force THEN
        PERFORM shardid_internal._require_node(node, first, last);
    END IF;
    INSERT INTO shardid.shard_placement (shard, node)
    SELECT g, place_shards.node FROM pg_catalog.generate_series(first, last) AS g
    ON CONFLICT (shard) DO NOTHING;
    GET DIAGNOSTICS added = ROW_COUNT;
    PERFORM shardid_internal._refresh_proxy();
    RETURN added;
END
$$;

REVOKE ALL ON FUNCTION shardid.place_shards(text, integer, integer, boolean) FROM PUBLIC;

COMMENT ON FUNCTION shardid.place_shards(text, integer, integer, boolean) IS
    'Router: routes shards first..last to a node that already holds them; returns how many were newly placed. Refuses shards placed on another node and, with dblink, a node it cannot reach, with another layout or lacking the shards, unless force.';
-- Router: the undo of place_shards(): shards first..last are routed to no
-- node any more (the placement rows are deleted; the node keeps the data).
-- A shard being moved (a row of shard_moves) or frozen on the router is
-- refused, before anything changes: a move's repoint or rollback needs its
-- placement. Unplaced shards of the range are skipped. On a router with
-- PL/Proxy the cluster follows (_refresh_proxy()), as for place_shards().
-- Returns the number of shards unplaced.
CREATE OR REPLACE FUNCTION shardid.unplace_shards(first integer, last integer) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p       shardid.shard_placement;
    m       shardid.shard_moves;
    removed integer;
BEGIN
    IF first IS NULL OR last IS NULL THEN
        RAISE EXCEPTION 'unplace_shards() arguments must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    PERFORM shardid_internal._require_shard_range(first, last);
    LOCK TABLE shardid.shard_placement IN SHARE ROW EXCLUSIVE MODE;
    SELECT * INTO m FROM shardid.shard_moves AS x
     WHERE x.shard >= first AND x.shard <= last
     ORDER BY x.shard LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'shard % is being moved from node "%" to node "%"', m.shard, m.source, m.target
            USING ERRCODE = 'object_in_use',
                  DETAIL = pg_catalog.format('No shard of %s .. %s was unplaced.', first, last),
                  HINT = pg_catalog.format('Let the move finish, or roll it back with CALL shardid.abort_move(%s); first.', m.shard);
    END IF;
    SELECT * INTO p FROM shardid.shard_placement AS x
     WHERE x.shard >= first AND x.shard <= last AND x.frozen
     ORDER BY x.shard LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'shard % is frozen on node "%"', p.shard, p.node
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = pg_catalog.format('No shard of %s .. %s was unplaced.', first, last),
                  HINT = pg_catalog.format('If no move is running, SELECT shardid.unfreeze_shard(%s); first.', p.shard);
    END IF;
    DELETE FROM shardid.shard_placement AS x WHERE x.shard >= first AND x.shard <= last;
    GET DIAGNOSTICS removed = ROW_COUNT;
    PERFORM shardid_internal._refresh_proxy();
    RETURN removed;
END
$$;

REVOKE ALL ON FUNCTION shardid.unplace_shards(integer, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid.unplace_shards(integer, integer) IS
    'Router: routes shards first..last to no node any more (the nodes keep their data); returns how many were unplaced. Refuses shards being moved or frozen.';
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
    PERFORM shardid_internal._refresh_partition(shard);
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
    PERFORM shardid_internal._refresh_partition(shard);
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
    PERFORM shardid_internal._refresh_partition(shard);
END
$$;

REVOKE ALL ON FUNCTION shardid.repoint_shard(integer, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid.repoint_shard(integer, text) IS
    'Router, last move step: points the partition of a frozen shard, or of a caught-up move to that node, at its new node, writable.';
-- Router: what add_node() and place_shards() refuse of a node, as
-- check_cluster() would report it, when the router has dblink (without it
-- nothing can be read, and nothing is checked): a node that cannot be
-- reached, has no shardid, has another layout than the router, or (first
-- .. last not NULL) does not hold every shard of first .. last. Each
-- refusal hints at force => true, for a bootstrap that registers nodes and
-- placements before the nodes are ready.
CREATE OR REPLACE FUNCTION shardid_internal._require_node(node text, first integer DEFAULT NULL, last integer DEFAULT NULL) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    conn CONSTANT text := 'shardid_check_node';
    force_hint CONSTANT text := 'force => true skips this check (a bootstrap that registers the cluster before the nodes are ready); SELECT * FROM shardid.check_cluster(); then reports what is still wrong.';
    v       text;
    theirs  jsonb;
    mine    jsonb;
    missing text;
    msg     text;
    det     text;
BEGIN
    IF NOT EXISTS (SELECT FROM pg_extension AS e WHERE e.extname = 'dblink') THEN
        RETURN;
    END IF;
    BEGIN
        PERFORM shardid_internal._node_close(conn);  -- not one left open to another node
        PERFORM shardid_internal._node_connect(conn, node);
        PERFORM shardid_internal._node(conn, 'SET search_path = pg_catalog, pg_temp', node);
        v := shardid_internal._node(conn, 'SELECT e.extversion FROM pg_catalog.pg_extension AS e WHERE e.extname OPERATOR(pg_catalog.=) ''shardid''', node);
        IF v IS NOT NULL THEN
            theirs := shardid_internal._node(conn, 'SELECT pg_catalog.jsonb_build_object(''epoch'', pg_catalog.to_char(l.epoch AT TIME ZONE ''UTC'', ''YYYY-MM-DD HH24:MI:SS.MS'') OPERATOR(pg_catalog.||) ''+00'', ''shard_bits'', l.shard_bits, ''seq_bits'', l.seq_bits)::pg_catalog.text FROM shardid.layout() AS l', node)::jsonb;
            IF first IS NOT NULL THEN
                missing := shardid_internal._node(conn, pg_catalog.format(
                    'SELECT pg_catalog.string_agg(g::pg_catalog.text, '', '' ORDER BY g) FROM pg_catalog.generate_series(%s, %s) AS g
                      WHERE NOT EXISTS (SELECT FROM shardid.shard_registry AS r WHERE r.shard OPERATOR(pg_catalog.=) g)', first, last), node);
            END IF;
        END IF;
        PERFORM shardid_internal._node_close(conn);
    EXCEPTION WHEN sqlclient_unable_to_establish_sqlconnection THEN
        GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
        PERFORM shardid_internal._node_close(conn);
        RAISE EXCEPTION '%', msg USING ERRCODE = 'sqlclient_unable_to_establish_sqlconnection', DETAIL = det, HINT = force_hint;
    END;
    IF v IS NULL THEN
        RAISE EXCEPTION 'node "%" does not have the shardid extension', node
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'On the node: CREATE EXTENSION shardid; ' || force_hint;
    END IF;
    SELECT jsonb_build_object('epoch', pg_catalog.to_char(l.epoch AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS') || '+00', 'shard_bits', l.shard_bits, 'seq_bits', l.seq_bits) INTO mine FROM shardid.layout() AS l;
    IF theirs <> mine THEN
        RAISE EXCEPTION 'node "%" has another layout than the router', node
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = pg_catalog.format('Node: epoch %s, %s shard bits, %s seq bits; router: epoch %s, %s shard bits, %s seq bits.',
                                             theirs->>'epoch', theirs->>'shard_bits', theirs->>'seq_bits',
                                             mine->>'epoch', mine->>'shard_bits', mine->>'seq_bits'),
                  HINT = 'Every server of one system has the same layout: shardid.configure() it before any ID is issued. ' || force_hint;
    END IF;
    IF missing IS NOT NULL THEN
        RAISE EXCEPTION 'node "%" does not hold shards %', node, pg_catalog.left(missing, 200)
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = pg_catalog.format('No shard of %s .. %s was placed: the node''s shardid.shard_registry lacks them.', first, last),
                  HINT = pg_catalog.format('Create them on the node first (SELECT shardid.create_shards(%s, %s);). ', first, last) || force_hint;
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._require_node(text, integer, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._require_node(text, integer, integer) IS
    'Router: refuses a node that cannot be reached, has no shardid, has another layout than the router, or lacks shards first .. last; what add_node() and place_shards() check unless force => true. Checks nothing without dblink.';
-- shardid, area moves: a shard moved to another node while it takes
-- writes. node/ holds what a data node runs, router/ what the router runs.
--
-- CALL shardid.move_shard(shard, node) moves a logical shard to another
-- node while it takes writes; the router drives both nodes over dblink
-- (asked for when a move starts, not required by the extension). The state
-- is the row of shardid.shard_moves, committed per phase, so any
-- interruption resumes (CALL again) or rolls back (abort_move). One
-- session per shard: its row in shardid.session_locks on the router. The
-- nodes' side is shardid functions too (node/: the _move_* functions,
-- freeze_shard_tables, retire_shard), so every node needs this version. A
-- move freezes a shard on its node (a trigger on every table of the shard)
-- rather than on the router, so a move changes the cluster once, at
-- repoint_shard().
--
-- Who runs what: the router's session connects to the nodes as the node
-- connect strings say (a superuser; passwords from ~/.pgpass) with
-- search_path pinned to pg_catalog, pg_temp for the whole session
-- (_pinned_connstr), and runs only schema-qualified shardid functions
-- there. Every statement that writes, empties or reads a shard's rows runs
-- as the table's owner in a security-restricted operation
-- (_run_as_owner); the rows are copied by the target's subscription,
-- which applies them as the tables' owners (16+), or on 15 as a role made
-- for the move with DML rights only, or offline by _move_offline_store as
-- the owners: never as a superuser. shardid's own triggers are known by
-- their function, not their name.

-- Node: releases the freeze lease this session holds on a schema: the
-- advisory lock on the random key that its shardid_move_frozen triggers
-- name (freeze_shard_tables). Triggers are shardid's by their function,
-- whatever their name. Returns how many locks it released.
CREATE OR REPLACE FUNCTION shardid_internal._release_lease(schema_name name) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
    SET client_min_messages = error
AS $$
DECLARE
    k bigint;
    n integer := 0;
BEGIN
    FOR k IN SELECT DISTINCT a[4]::bigint
               FROM pg_trigger AS g JOIN pg_class AS c ON c.oid = g.tgrelid JOIN pg_namespace AS s ON s.oid = c.relnamespace,
                    LATERAL string_to_array(encode(g.tgargs, 'escape'), '\000') AS a
              WHERE s.nspname = _release_lease.schema_name AND g.tgfoid = 'shardid_internal._refuse_frozen_write()'::regprocedure
                AND g.tgnargs >= 4 AND a[3] = 'lease' AND a[4] ~ '^-?[0-9]+$' LOOP
        WHILE pg_advisory_unlock(k) LOOP
            n := n + 1;
        END LOOP;
    END LOOP;
    RETURN n;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._release_lease(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._release_lease(name) IS
    'Node, moves: releases the freeze lease this session holds on a schema (the advisory lock on the random key its freeze triggers name); returns how many locks.';
-- Node, move cut-over: every table of the shard's schema gets the trigger
-- shardid_move_frozen, which refuses writes (25006, at once). Waits for
-- writes in flight (the caller sets lock_timeout). Returns the number of
-- tables. A trigger of that name that is not shardid's (its function is
-- not _refuse_frozen_write) is refused, 42710, rather than replaced: it is
-- a difference of the shard's, and the move rolls back naming it.
--
-- lease: the freeze holds only while this session holds a session-level
-- advisory lock on a key drawn at random for this freeze (gen_random_uuid)
-- and named in the trigger's arguments, so no other role can take it
-- first or hold it to block the move: if the session that froze the shard
-- ends (the mover was killed, the router or this node restarted) writes
-- go through again, since nothing is routed elsewhere before the freeze is
-- made permanent. Writes that went through a lapsed lease hold the table
-- locks that re-making the trigger waits for. Without lease (or called
-- again without it) the freeze is permanent until unfreeze_shard_tables():
-- what a move sets just before it repoints the router, and what an offline
-- move and a manual freeze use.
CREATE OR REPLACE FUNCTION shardid.freeze_shard_tables(schema_name name, shard integer, target text, lease boolean DEFAULT false)
    RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    clash text;
    key   bigint;
BEGIN
    SELECT string_agg(format('%I.%I', n.nspname, c.relname), ', ' ORDER BY c.relname) INTO clash
      FROM pg_trigger AS g JOIN pg_class AS c ON c.oid = g.tgrelid JOIN pg_namespace AS n ON n.oid = c.relnamespace
     WHERE n.nspname = freeze_shard_tables.schema_name AND g.tgname = 'shardid_move_frozen'
       AND g.tgfoid <> 'shardid_internal._refuse_frozen_write()'::regprocedure;
    IF clash IS NOT NULL THEN
        RAISE EXCEPTION 'cannot freeze shard %: tables have a trigger named shardid_move_frozen that is not shardid''s: %', shard, clash
            USING ERRCODE = 'duplicate_object',
                  HINT = 'A trigger of the shard''s own is a difference from its templates: drop or rename it.';
    END IF;
    IF lease THEN
        -- a new key for every freeze; an earlier lease of this session goes
        PERFORM shardid_internal._release_lease(schema_name);
        LOOP
            key := ('x' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 16))::bit(64)::bigint;
            EXIT WHEN pg_try_advisory_lock(key);
        END LOOP;
    END IF;
    RETURN shardid_internal._for_tables(schema_name, '{r,p}',
        'CREATE OR REPLACE TRIGGER shardid_move_frozen BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON %I.%I
         FOR EACH STATEMENT EXECUTE FUNCTION shardid_internal._refuse_frozen_write(%L, %L, %L, %L)',
        ARRAY[shard::text, target, CASE WHEN lease THEN 'lease' ELSE 'permanent' END, COALESCE(key::text, '')]);
END
$$;

REVOKE ALL ON FUNCTION shardid.freeze_shard_tables(name, integer, text, boolean) FROM PUBLIC;

COMMENT ON FUNCTION shardid.freeze_shard_tables(name, integer, text, boolean) IS
    'Node, move cut-over: puts trigger shardid_move_frozen on every table of the schema (writes fail with 25006), held by this session''s advisory lock on a random key if lease, else permanent; refuses a trigger of that name that is not shardid''s; returns the number of tables.';
-- Node: undoes freeze_shard_tables() (abort of a move), and releases a
-- freeze lease this session holds. shardid's freeze triggers are those
-- whose function is _refuse_frozen_write, whatever their name: a tenant's
-- trigger called shardid_move_frozen is left alone. Returns the number of
-- triggers dropped.
CREATE OR REPLACE FUNCTION shardid.unfreeze_shard_tables(schema_name name) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t record;
    n integer := 0;
BEGIN
    PERFORM shardid_internal._release_lease(schema_name);
    FOR t IN SELECT c.relname, g.tgname
               FROM pg_trigger AS g JOIN pg_class AS c ON c.oid = g.tgrelid JOIN pg_namespace AS s ON s.oid = c.relnamespace
              WHERE s.nspname = unfreeze_shard_tables.schema_name AND g.tgfoid = 'shardid_internal._refuse_frozen_write()'::regprocedure
              ORDER BY c.relname, g.tgname LOOP
        EXECUTE format('DROP TRIGGER %I ON %I.%I', t.tgname, schema_name, t.relname);
        n := n + 1;
    END LOOP;
    RETURN n;
END
$$;

REVOKE ALL ON FUNCTION shardid.unfreeze_shard_tables(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid.unfreeze_shard_tables(name) IS
    'Node: drops shardid''s freeze triggers of a schema (those calling _refuse_frozen_write, whatever their name) and releases this session''s freeze lease; returns how many triggers.';
-- Node, deprecated (0.4): the name of unfreeze_shard_tables() before 0.4,
-- kept for scripts that call it. The pair on a node is
-- freeze_shard_tables()/unfreeze_shard_tables(), as freeze_shard()/
-- unfreeze_shard() on the router.
CREATE OR REPLACE FUNCTION shardid.thaw_shard_tables(schema_name name) RETURNS integer
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT shardid.unfreeze_shard_tables(schema_name)
$$;

REVOKE ALL ON FUNCTION shardid.thaw_shard_tables(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid.thaw_shard_tables(name) IS
    'Node, deprecated: unfreeze_shard_tables() by its name before 0.4.';
-- Node: the retired copies of moved shards here, as retire_shard()
-- recorded them when it renamed each (move_shard() without drop_old): the
-- schema by OID (its name then, the shard, the node it moved to, when) and
-- the relations shardid made in it (the shard's tables, their partitions,
-- its generator and the sequences those tables own). drop_retired_copies()
-- drops only a schema recorded here, and only while it holds nothing but
-- these relations and what depends on them alone (their indexes,
-- constraints, triggers, TOAST): never a schema that merely looks like a
-- retired copy (a tenant can move its retired table anywhere it may
-- create). Not dumped: a restored node has other OIDs, and its copies are
-- then reported as not recorded. Administrators only.
CREATE TABLE shardid.retired_schemas (
    schema_oid  oid PRIMARY KEY,
    schema_name name NOT NULL,
    shard       integer NOT NULL,
    moved_to    text NOT NULL,
    relations   oid[] NOT NULL,
    retired_at  timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp()
);

REVOKE ALL ON shardid.retired_schemas FROM PUBLIC;

COMMENT ON TABLE shardid.retired_schemas IS
    'Node: the retired copies of moved shards here, recorded by retire_shard(): schema OID and name, shard, the node it moved to, the relations shardid made in it (OIDs), when. drop_retired_copies() drops only these. Administrators only.';
-- Node, last move step on the source: unregisters the shard and retires
-- its schema: dropped, or kept under new_name with a trigger on every table
-- that refuses writes. Returns the schema's new name (NULL when dropped).
-- Nothing a tenant made can stop it once the router points elsewhere: the
-- retirement trigger is named shardid_retired, or shardid_retired_2, ...
-- when a table has a trigger of that name already (shardid's are known by
-- their function, not their name), and new_name is followed by _2, _3, ...
-- (cut to fit) when a schema of that name exists. It runs no tenant code:
-- DROP SCHEMA, ALTER SCHEMA RENAME and shardid's own triggers. A kept
-- copy is recorded in shardid.retired_schemas (its schema's OID, and the
-- relations shardid made in it: the shard's tables and their partitions,
-- its generator, the sequences those tables own), which is all that
-- drop_retired_copies() will ever drop. Holds the registry's lock (SHARE
-- ROW EXCLUSIVE on shard_registry and sharded_tables), as attach_shard(),
-- a move's copy on its target and drop_retired_copies() on this node do,
-- so none of them runs between its steps.
CREATE OR REPLACE FUNCTION shardid.retire_shard(shard integer, target text, new_name name) RETURNS name
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nsp  name;
    t    record;
    tg   name;
    dest name := new_name;
    i    integer := 1;
    seq  oid;
    own  oid[];
BEGIN
    LOCK TABLE shardid.shard_registry, shardid.sharded_tables IN SHARE ROW EXCLUSIVE MODE;
    SELECT pg_catalog.to_regclass(pg_catalog.format('%I.%I', r.sequence_schema, r.sequence_name)) INTO seq
      FROM shardid.shard_registry AS r WHERE r.shard = retire_shard.shard;
    nsp := shardid.detach_shard(shard);
    PERFORM shardid.unfreeze_shard_tables(nsp);
    IF new_name IS NULL THEN
        EXECUTE pg_catalog.format('DROP SCHEMA %I CASCADE', nsp);
        RETURN NULL;
    END IF;
    FOR t IN SELECT c.oid, c.relname FROM pg_class AS c JOIN pg_namespace AS s ON s.oid = c.relnamespace
              WHERE s.nspname = nsp AND c.relkind IN ('r', 'p') ORDER BY c.relname LOOP
        tg := 'shardid_retired';
        i := 1;
        WHILE EXISTS (SELECT FROM pg_trigger AS g WHERE g.tgrelid = t.oid AND g.tgname = tg) LOOP
            i := i + 1;
            tg := 'shardid_retired_' || i;
        END LOOP;
        EXECUTE pg_catalog.format('CREATE TRIGGER %I BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON %I.%I
                                   FOR EACH STATEMENT EXECUTE FUNCTION shardid_internal._refuse_retired_write(%L, %L)',
                                  tg, nsp, t.relname, shard, target);
    END LOOP;
    i := 1;
    WHILE EXISTS (SELECT FROM pg_namespace AS s WHERE s.nspname = dest) LOOP
        i := i + 1;
        dest := shardid_internal._fit_name(new_name, '_' || i);
    END LOOP;
    -- what shardid made here: the templates' tables, their partitions, the
    -- generator, the sequences those tables own; not a tenant's addition
    WITH tabs AS (
        SELECT c.oid FROM pg_class AS c JOIN pg_namespace AS s ON s.oid = c.relnamespace
         WHERE s.nspname = nsp AND c.relkind IN ('r', 'p')
           AND EXISTS (SELECT FROM shardid.sharded_tables AS st, pg_class AS root
                        WHERE root.oid = COALESCE(pg_catalog.pg_partition_root(c.oid), c.oid)
                          AND root.relnamespace = c.relnamespace AND root.relname = st.table_name))
    SELECT pg_catalog.array_agg(x.oid ORDER BY x.oid) INTO own
      FROM (SELECT tabs.oid FROM tabs
            UNION
            SELECT d.objid FROM pg_depend AS d JOIN pg_class AS q ON q.oid = d.objid
             WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
               AND d.refobjid IN (SELECT tabs.oid FROM tabs) AND q.relkind = 'S' AND d.deptype IN ('a', 'i')
            UNION
            SELECT q.oid FROM pg_class AS q JOIN pg_namespace AS s ON s.oid = q.relnamespace
             WHERE q.oid = seq AND s.nspname = nsp) AS x;
    EXECUTE pg_catalog.format('ALTER SCHEMA %I RENAME TO %I', nsp, dest);
    INSERT INTO shardid.retired_schemas AS x (schema_oid, schema_name, shard, moved_to, relations)
        SELECT s.oid, dest, shard, target, COALESCE(own, '{}') FROM pg_namespace AS s WHERE s.nspname = dest
        ON CONFLICT (schema_oid) DO UPDATE
           SET schema_name = excluded.schema_name, shard = excluded.shard, moved_to = excluded.moved_to,
               relations = excluded.relations, retired_at = excluded.retired_at;
    RETURN dest;
END
$$;

REVOKE ALL ON FUNCTION shardid.retire_shard(integer, text, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid.retire_shard(integer, text, name) IS
    'Node, after a move: detaches the shard and drops its schema (new_name NULL) or renames it to new_name (or new_name_2, ... if taken) with triggers refusing writes (shardid_retired, or _2, ... if a table has a trigger of that name), recorded in shardid.retired_schemas for drop_retired_copies().';
-- Node: the definition of a shard's schema as flat {what: definition}
-- pairs, so that two copies of a shard (the source and the target of a
-- move) compare key by key and a difference reads as a sentence:
--   "table posts: constraint posts_body_check" -> "CHECK ((length(body) > 0))"
-- It covers what decides which rows a table takes and who may use it: the
-- schema's owner and privileges; every relation with its kind, owner and
-- privileges; for tables the columns in order, each column's type, NOT
-- NULL, default, identity, generation, collation and privileges,
-- constraints, indexes, triggers (not shardid's own freeze and retirement
-- triggers, known by their function: a tenant's trigger of the same name
-- is compared like any other),
-- replica identity, row security and policies; for sequences their
-- parameters and owning column; and the schema's functions and types.
-- Not covered: comments, storage parameters, statistics targets.
-- Expressions print with search_path pinned, so equal definitions print
-- equal text on both nodes. ignore_role: see _acl_words().
CREATE OR REPLACE FUNCTION shardid_internal._shard_definition(schema_name name, ignore_role name DEFAULT NULL)
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
    SELECT 'schema: privileges', shardid_internal._acl_words(nsp.nspacl, 'n', nsp.nspowner, ignore_role) FROM nsp
    UNION ALL
    SELECT r.what, CASE r.relpersistence WHEN 'u' THEN 'unlogged' WHEN 't' THEN 'temporary' ELSE 'permanent' END
                   || CASE WHEN r.relkind = 'p' THEN ', partitioned' ELSE '' END
      FROM rel AS r
    UNION ALL
    SELECT r.what || ': owner', quote_ident(pg_get_userbyid(r.relowner)) FROM rel AS r WHERE r.relkind <> 'c'
    UNION ALL
    SELECT r.what || ': privileges',
           shardid_internal._acl_words(r.relacl, CASE r.relkind WHEN 'S' THEN 's' ELSE 'r' END::"char", r.relowner, ignore_role)
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
           shardid_internal._acl_words(c.attacl, NULL, NULL, ignore_role)
      FROM col AS c WHERE c.attacl IS NOT NULL AND shardid_internal._acl_words(c.attacl, NULL, NULL, ignore_role) <> ''
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
     WHERE NOT g.tgisinternal
       AND g.tgfoid NOT IN ('shardid_internal._refuse_frozen_write()'::regprocedure, 'shardid_internal._refuse_retired_write()'::regprocedure)
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

REVOKE ALL ON FUNCTION shardid_internal._shard_definition(name, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._shard_definition(name, name) IS
    'Node, moves: the definition of a shard''s schema (relations, columns, defaults, constraints, indexes, triggers, privileges, sequences, policies) as flat {what: definition} pairs for comparison.';
-- Node, source of a move: this node's templates as the statements that
-- make them again, for a target that has only the extension
-- (_create_templates there), in creation order (shardid.sharded_tables).
-- Per template: the CREATE TABLE (columns in order with type, collation,
-- default, generation or identity, and NOT NULL under its name), its
-- constraints, its indexes that no constraint makes, and its foreign keys
-- (made after every template, which they may reference); the owner, the
-- id column and the position. What check_cluster() compares between nodes
-- (_template_definition) is all there; comments, storage and privileges
-- of templates are not (a shard's come from the source shard). A template
-- a move cannot make (typed, or a child of another table) is named with
-- "unsupported". Expressions print with search_path pinned: everything
-- outside pg_catalog is schema-qualified. Changes nothing.
CREATE OR REPLACE FUNCTION shardid_internal._template_ddl() RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t       shardid.sharded_tables;
    c       pg_class;
    -- 18 records NOT NULL as constraints with names of their own
    named   boolean := current_setting('server_version_num')::integer >= 180000;
    cols    text;
    out     jsonb := '[]';
BEGIN
    FOR t IN SELECT * FROM shardid.sharded_tables ORDER BY position LOOP
        PERFORM shardid_internal._require_template(t);
        SELECT x.* INTO c FROM pg_class AS x JOIN pg_namespace AS n ON n.oid = x.relnamespace
         WHERE n.nspname = t.template_schema AND x.relname = t.template_name;
        IF c.reloftype <> 0 OR EXISTS (SELECT FROM pg_inherits AS i WHERE i.inhrelid = c.oid) THEN
            out := out || jsonb_build_array(jsonb_build_object(
                'table_name', t.table_name, 'schema', t.template_schema, 'name', t.template_name,
                'unsupported', CASE WHEN c.reloftype <> 0 THEN 'a typed table' ELSE 'a child of another table' END));
            CONTINUE;
        END IF;
        SELECT string_agg(format('%I %s', a.attname, format_type(a.atttypid, a.atttypmod))
                   || CASE WHEN a.attcollation <> 0 AND a.attcollation <> ty.typcollation
                           THEN format(' COLLATE %I.%I', cn.nspname, co.collname) ELSE '' END
                   || CASE WHEN a.attgenerated = 's' THEN format(' GENERATED ALWAYS AS (%s) STORED', pg_get_expr(d.adbin, d.adrelid))
                           WHEN a.attgenerated = 'v' THEN format(' GENERATED ALWAYS AS (%s) VIRTUAL', pg_get_expr(d.adbin, d.adrelid))
                           WHEN d.adbin IS NOT NULL THEN ' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid)
                           WHEN a.attidentity = 'a' THEN ' GENERATED ALWAYS AS IDENTITY'
                           WHEN a.attidentity = 'd' THEN ' GENERATED BY DEFAULT AS IDENTITY'
                           ELSE '' END
                   || CASE WHEN NOT a.attnotnull THEN ''
                           WHEN nn.conname IS NOT NULL THEN format(' CONSTRAINT %I NOT NULL', nn.conname)
                           ELSE ' NOT NULL' END,
                   ', ' ORDER BY a.attnum)
          INTO cols
          FROM pg_attribute AS a
          JOIN pg_type AS ty ON ty.oid = a.atttypid
          LEFT JOIN pg_attrdef AS d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
          LEFT JOIN pg_collation AS co ON co.oid = a.attcollation
          LEFT JOIN pg_namespace AS cn ON cn.oid = co.collnamespace
          LEFT JOIN LATERAL (SELECT k.conname FROM pg_constraint AS k
                              WHERE named AND k.conrelid = c.oid AND k.contype = 'n' AND k.conkey[1] = a.attnum) AS nn ON true
         WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped;
        out := out || jsonb_build_array(jsonb_build_object(
            'table_name', t.table_name,
            'schema', t.template_schema,
            'name', t.template_name,
            'id_column', t.id_column,
            'position', t.position,
            'owner', pg_get_userbyid(c.relowner),
            'create', format('CREATE %sTABLE %I.%I (%s)', CASE c.relpersistence WHEN 'u' THEN 'UNLOGGED ' ELSE '' END,
                             t.template_schema, t.template_name, COALESCE(cols, '')),
            'constraints', (SELECT COALESCE(jsonb_agg(format('ALTER TABLE %I.%I ADD CONSTRAINT %I %s', t.template_schema,
                                                             t.template_name, k.conname, pg_get_constraintdef(k.oid))
                                                      ORDER BY k.contype <> 'p', k.conname), '[]')
                              FROM pg_constraint AS k WHERE k.conrelid = c.oid AND k.contype IN ('p', 'u', 'c', 'x')),
            'indexes', (SELECT COALESCE(jsonb_agg(pg_get_indexdef(x.indexrelid) ORDER BY i.relname), '[]')
                          FROM pg_index AS x JOIN pg_class AS i ON i.oid = x.indexrelid
                         WHERE x.indrelid = c.oid
                           AND NOT EXISTS (SELECT FROM pg_constraint AS k WHERE k.conrelid = c.oid AND k.conindid = x.indexrelid
                                                                            AND k.contype IN ('p', 'u', 'x'))),
            'foreign_keys', (SELECT COALESCE(jsonb_agg(format('ALTER TABLE %I.%I ADD CONSTRAINT %I %s', t.template_schema,
                                                              t.template_name, k.conname, pg_get_constraintdef(k.oid))
                                                       ORDER BY k.conname), '[]')
                               FROM pg_constraint AS k WHERE k.conrelid = c.oid AND k.contype = 'f')));
    END LOOP;
    RETURN out;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._template_ddl() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._template_ddl() IS
    'Node, source of a move: the statements that make this node''s templates again (table, constraints, indexes, foreign keys; owner, id column, position), for a target that has only the extension; changes nothing.';
-- Node, source of a move: what the router needs to know before and while
-- it moves a shard away from here, in one round trip: the registry row,
-- the online prerequisites (wal_level, a free replication slot, replica
-- identities), the size, the owners and privileges the target must give
-- its copy, its indexes (_index_list), the generator's parameters, every role named, and the
-- definition to compare (_shard_definition). Changes nothing.
CREATE OR REPLACE FUNCTION shardid_internal._move_source_facts(shard integer) RETURNS jsonb
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
        'indexes', (SELECT COALESCE(jsonb_object_agg(c.relname, shardid_internal._index_list(c.oid)), '{}')
                      FROM pg_class AS c WHERE c.relnamespace = nspoid AND c.relkind IN ('r', 'p')),
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
                                                 'acl', shardid_internal._acl_items(n.nspacl, 'n', n.nspowner))
                         FROM pg_namespace AS n WHERE n.oid = nspoid),
            'relations', (SELECT COALESCE(jsonb_object_agg(c.relname, jsonb_build_object(
                                      'kind', c.relkind,
                                      'owner', pg_get_userbyid(c.relowner),
                                      'replident', c.relreplident,
                                      'replident_index', (SELECT i.relname FROM pg_index AS x JOIN pg_class AS i ON i.oid = x.indexrelid
                                                           WHERE x.indrelid = c.oid AND x.indisreplident),
                                      'acl', shardid_internal._acl_items(c.relacl, CASE c.relkind WHEN 'S' THEN 's' ELSE 'r' END::"char", c.relowner),
                                      'columns', (SELECT COALESCE(jsonb_object_agg(a.attname, shardid_internal._acl_items(a.attacl, NULL, NULL)), '{}')
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
        'definition', shardid_internal._shard_definition(r.schema_name),
        -- for a target with only the extension
        'templates', shardid_internal._template_ddl());
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_source_facts(integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_source_facts(integer) IS
    'Node, moves: what the router needs about a shard before moving it away (registry, prerequisites, size, owners and privileges, definition); changes nothing.';
-- Node, target of a move: the source's indexes on the copy (indexes: per
-- table, _index_list() on the source; relations: the source's owners). The
-- copy's indexes, made from the templates, take the source's names where
-- they are the same index (_name_indexes), and an index the shard has
-- beyond its templates (a DBA's CREATE INDEX on that shard) is made here:
-- only one named CREATE INDEX of that table (_ddl_command reads the
-- source's pg_get_indexdef, the schema and table given apart), run as the
-- table's owner in a security-restricted operation (_run_as_owner). Indexes of
-- constraints, and names taken here, are left to the comparison. Returns
-- the names of the indexes made.
CREATE OR REPLACE FUNCTION shardid_internal._move_copy_indexes(schema_name name, indexes jsonb, relations jsonb) RETURNS text[]
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t    record;
    e    jsonb;
    rel  regclass;
    chk  record;
    made text[] := '{}';
BEGIN
    FOR t IN SELECT x.key AS relname, x.value AS list FROM jsonb_each(COALESCE(indexes, '{}')) AS x ORDER BY x.key LOOP
        rel := to_regclass(format('%I.%I', schema_name, t.relname));
        CONTINUE WHEN rel IS NULL OR relations->t.relname->>'owner' IS NULL;
        PERFORM shardid_internal._name_indexes(rel, t.list);
        FOR e IN SELECT x FROM jsonb_array_elements(t.list) AS x LOOP
            CONTINUE WHEN (e->>'constraint')::boolean OR to_regclass(format('%I.%I', schema_name, e->>'name')) IS NOT NULL;
            SELECT * INTO chk FROM shardid_internal._ddl_command(e->>'def', schema_name, t.relname) AS d;
            IF chk.kind <> 'CREATE INDEX' OR chk.concurrent THEN
                RAISE EXCEPTION 'index % of shard schema % is not a CREATE INDEX: %', quote_ident(e->>'name'), quote_ident(schema_name), e->>'def'
                    USING ERRCODE = 'invalid_parameter_value';
            END IF;
            PERFORM shardid_internal._run_as_owner(quote_ident(relations->t.relname->>'owner')::regrole, e->>'def');
            made := made || (e->>'name');
        END LOOP;
    END LOOP;
    RETURN made;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_copy_indexes(name, jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_copy_indexes(name, jsonb, jsonb) IS
    'Node, target of a move: gives the copy''s indexes the source''s names and makes the indexes the source shard has beyond its templates, as the table''s owner; returns the names made.';
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
-- Node, source of a move, start of the cut-over: freezes the shard
-- (freeze_shard_tables, lease or permanent, waiting at most lock_timeout_ms
-- for its tables) and returns, from the same transaction, the WAL insert
-- position and the state of every generator of the schema. Every write to
-- the shard committed before the freeze lies below that position (the
-- freeze waited for writes in flight), and the generators are final.
CREATE OR REPLACE FUNCTION shardid_internal._move_freeze(schema_name name, shard integer, target text, lease boolean, lock_timeout_ms integer)
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

REVOKE ALL ON FUNCTION shardid_internal._move_freeze(name, integer, text, boolean, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_freeze(name, integer, text, boolean, integer) IS
    'Node, move cut-over on the source: freezes the shard''s tables and returns the WAL insert position and its generators'' states.';
-- Node, source of a move, once the target has everything: makes the
-- freeze permanent, so it outlives this session (the router repoints
-- next), and returns the schema's definition for the last comparison.
CREATE OR REPLACE FUNCTION shardid_internal._move_seal(schema_name name, shard integer, target text, lock_timeout_ms integer)
    RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM set_config('lock_timeout', lock_timeout_ms || 'ms', true);
    PERFORM shardid.freeze_shard_tables(schema_name, shard, target, false);
    RETURN shardid_internal._shard_definition(schema_name);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_seal(name, integer, text, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_seal(name, integer, text, integer) IS
    'Node, move cut-over on the source: makes the freeze permanent and returns the schema''s definition.';
-- Node, target of a move: raises the generators of the schema to at least
-- the states the frozen source reported ({sequence name: last_value});
-- logical replication never carries them. Never lowers one. Returns how
-- many it raised. Nothing calls them meanwhile: the router does not route
-- the shard here yet.
CREATE OR REPLACE FUNCTION shardid_internal._move_raise_generators(schema_name name, states jsonb) RETURNS integer
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

REVOKE ALL ON FUNCTION shardid_internal._move_raise_generators(name, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_raise_generators(name, jsonb) IS
    'Node, move cut-over on the target: raises the schema''s generators to at least the source''s states; returns how many.';
-- Node, offline move: the exact row count of every table of a schema, to
-- check that the copy made while the shard was frozen is complete. Each
-- table is counted as its owner (_run_as_owner): reading a shard's rows is
-- the owner's business, never the superuser's.
CREATE OR REPLACE FUNCTION shardid_internal._move_row_counts(schema_name name) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t   record;
    out jsonb := '{}';
BEGIN
    FOR t IN SELECT c.relname, c.relowner FROM pg_class AS c JOIN pg_namespace AS s ON s.oid = c.relnamespace
              WHERE s.nspname = schema_name AND c.relkind = 'r' ORDER BY c.relname LOOP
        out := out || jsonb_build_object(t.relname, shardid_internal._run_as_owner(t.relowner::regrole,
                          format('SELECT count(*) FROM ONLY %I.%I', schema_name, t.relname))::bigint);
    END LOOP;
    RETURN out;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_row_counts(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_row_counts(name) IS
    'Node, offline moves: exact row counts of the tables of a schema, each counted as its owner.';
-- Node, target of an offline move: what bin/shardid-move-shard --offline
-- copies, one row per table of the copy (relkind r, in name order, as
-- _move_offline_load() stages them): the COPY that reads the table's rows
-- on the source, as text, its columns named (not the generated ones), and
-- the COPY that writes them into the staging table of this session
-- (pg_temp.shardid_load_<n>). COPY of a table, not of a query: it reads
-- only a plain table (a view the owner put in its place is refused, as are
-- child tables), which runs no one's code; the rows reach the copy's
-- tables as their owners (_move_offline_store).
CREATE OR REPLACE FUNCTION shardid_internal._move_offline_copies(schema_name name)
    RETURNS TABLE (source_copy text, target_copy text)
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT format('COPY %I.%I%s TO STDOUT', _move_offline_copies.schema_name, t.relname,
                  (SELECT COALESCE(' (' || string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) || ')', '')
                     FROM pg_attribute AS a
                    WHERE a.attrelid = t.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '')),
           format('COPY pg_temp.shardid_load_%s FROM STDIN', t.n)
      FROM (SELECT c.oid, c.relname, row_number() OVER (ORDER BY c.relname) AS n
              FROM pg_class AS c JOIN pg_namespace AS s ON s.oid = c.relnamespace
             WHERE s.nspname = _move_offline_copies.schema_name AND c.relkind = 'r') AS t
     ORDER BY t.n
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_offline_copies(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_offline_copies(name) IS
    'Node, offline moves on the target: per table of the copy, the COPY reading its rows on the source (as text, generated columns left out) and the COPY writing them into this session''s staging table.';
-- Node, target of an offline move, first statement of the transaction that
-- copies the rows (bin/shardid-move-shard --offline): locks the copy's
-- tables against any change until the copy commits, empties each as its
-- owner (_run_as_owner, session_replication_role = replica: a TRUNCATE
-- trigger of the owner's fires as the owner, ENABLE ALWAYS, or not at
-- all), and makes this session's staging tables: for the n-th table
-- (relkind r, name order) pg_temp.shardid_load_<n>, one text column per
-- column of the table that is not generated, readable by the table's
-- owner, dropped at commit. The rows go there as text (no one's code runs)
-- and reach the tables through _move_offline_store(). A repeated attempt
-- replaces what an earlier one left. Returns the number of tables.
CREATE OR REPLACE FUNCTION shardid_internal._move_offline_load(schema_name name) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
    SET client_min_messages = warning
AS $$
DECLARE
    n integer := shardid_internal._for_tables(schema_name, '{r,p}', 'LOCK TABLE %I.%I IN ACCESS EXCLUSIVE MODE');
    t record;
BEGIN
    FOR t IN SELECT c.oid, c.relname, c.relowner, row_number() OVER (ORDER BY c.relname) AS i
               FROM pg_class AS c JOIN pg_namespace AS s ON s.oid = c.relnamespace
              WHERE s.nspname = _move_offline_load.schema_name AND c.relkind = 'r'
              ORDER BY c.relname LOOP
        PERFORM shardid_internal._run_as_owner(t.relowner::regrole, format('TRUNCATE ONLY %I.%I', schema_name, t.relname), true);
        EXECUTE format('DROP TABLE IF EXISTS pg_temp.shardid_load_%s', t.i);
        EXECUTE format('CREATE TEMPORARY TABLE shardid_load_%s (%s) ON COMMIT DROP', t.i,
                       (SELECT COALESCE(string_agg(format('%I text', a.attname), ', ' ORDER BY a.attnum), '')
                          FROM pg_attribute AS a
                         WHERE a.attrelid = t.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''));
        EXECUTE format('GRANT SELECT ON pg_temp.shardid_load_%s TO %I', t.i, pg_get_userbyid(t.relowner));
    END LOOP;
    RETURN n;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_offline_load(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_offline_load(name) IS
    'Node, offline moves on the target: locks the copy''s tables, empties each as its owner, and makes this session''s text staging tables for the rows; returns the number of tables.';
-- Node, target of an offline move, last statement of the transaction that
-- copies the rows: moves the rows of each staging table into its table as
-- the table's owner (_run_as_owner, in a security-restricted operation,
-- session_replication_role = replica as logical replication applies them:
-- the owner's ordinary and foreign-key triggers do not fire, ENABLE ALWAYS
-- and ENABLE REPLICA ones, CHECKs, domains, index expressions and policies
-- run as the owner, never as a superuser). Each column is read from its
-- text with its type's input function, as COPY does. Returns the number
-- of rows.
CREATE OR REPLACE FUNCTION shardid_internal._move_offline_store(schema_name name) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t    record;
    cols text;
    vals text;
    rows bigint := 0;
BEGIN
    FOR t IN SELECT c.oid, c.relname, c.relowner, row_number() OVER (ORDER BY c.relname) AS i
               FROM pg_class AS c JOIN pg_namespace AS s ON s.oid = c.relnamespace
              WHERE s.nspname = _move_offline_store.schema_name AND c.relkind = 'r'
              ORDER BY c.relname LOOP
        SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum),
               string_agg(format('%I::%s', a.attname, format_type(a.atttypid, NULL)), ', ' ORDER BY a.attnum)
          INTO cols, vals
          FROM pg_attribute AS a
         WHERE a.attrelid = t.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '';
        CONTINUE WHEN cols IS NULL;
        rows := rows + shardid_internal._run_as_owner(t.relowner::regrole,
            format('WITH w AS (INSERT INTO %I.%I (%s) OVERRIDING SYSTEM VALUE SELECT %s FROM pg_temp.shardid_load_%s RETURNING 1) SELECT count(*) FROM w',
                   schema_name, t.relname, cols, vals, t.i), true)::bigint;
    END LOOP;
    RETURN rows;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_offline_store(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_offline_store(name) IS
    'Node, offline moves on the target: moves the staged rows into the copy''s tables as each table''s owner (security-restricted, session_replication_role = replica); returns the number of rows.';
-- Node, source of a move: the publication of the shard's schema and the
-- logical replication slot its subscription reads, each made unless it
-- exists. The slot is made here rather than by CREATE SUBSCRIPTION so the
-- router can wait for it (a new slot waits for running transactions) and
-- cancel the wait. Returns what it made.
CREATE OR REPLACE FUNCTION shardid_internal._move_publish(name name, schema_name name) RETURNS text
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

REVOKE ALL ON FUNCTION shardid_internal._move_publish(name, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_publish(name, name) IS
    'Node, move on the source: creates the publication FOR TABLES IN SCHEMA unless it exists.';
-- Node, source of a move: the logical replication slot (pgoutput) the
-- move's subscription reads, made unless it exists. Made here rather than
-- by CREATE SUBSCRIPTION so the router waits for it asynchronously (a new
-- slot waits for the transactions running on this node) and can cancel.
-- From PostgreSQL 17 it is a failover slot (failover = true): a standby of
-- this node running sync_replication_slots keeps a copy of it, so the move
-- goes on from its promoted standby (docs/high-availability.md). The
-- source's major decides, whatever the target's: the slot carries the
-- property, which a subscription's failover option would only set on it.
CREATE OR REPLACE FUNCTION shardid_internal._move_create_slot(slot_name name) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF EXISTS (SELECT FROM pg_replication_slots AS s WHERE s.slot_name = _move_create_slot.slot_name) THEN
        RETURN false;
    END IF;
    IF current_setting('server_version_num')::integer >= 170000 THEN
        PERFORM pg_create_logical_replication_slot(slot_name, 'pgoutput', failover => true);
    ELSE
        PERFORM pg_create_logical_replication_slot(slot_name, 'pgoutput');
    END IF;
    RETURN true;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_create_slot(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_create_slot(name) IS
    'Node, move on the source: creates the move''s logical replication slot (pgoutput) unless it exists; a failover slot from PostgreSQL 17.';
-- Node, source of a move: the move's slot: whether it exists and is in
-- use, how many bytes of WAL the target has yet to confirm, and whether it
-- has confirmed lsn (the cut-over's position; NULL: not asked); and when
-- this server's postmaster started (another time: the source restarted
-- or failed over since, _move_copy).
CREATE OR REPLACE FUNCTION shardid_internal._move_slot_status(slot_name name, lsn pg_lsn DEFAULT NULL) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT jsonb_build_object('exists', s.slot_name IS NOT NULL,
                              'active', COALESCE(s.active, false),
                              'lag', pg_wal_lsn_diff(pg_current_wal_lsn(), s.confirmed_flush_lsn)::bigint,
                              'confirmed', s.confirmed_flush_lsn >= lsn,
                              'started', pg_postmaster_start_time())
      FROM (SELECT 1) AS one
      LEFT JOIN pg_replication_slots AS s ON s.slot_name = _move_slot_status.slot_name
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_slot_status(name, pg_lsn) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_slot_status(name, pg_lsn) IS
    'Node, move on the source: the move''s slot: exists, active, lag in bytes, and whether it confirmed lsn; and when this server started.';
-- Node, source of a move, when it ends: drops the move's replication
-- slots and its publication. The slots are the subscription's own and the
-- table-sync slots its workers made (pg_<subid>_sync_<relid>_<sysid>, for
-- the target's subscription OID and system identifier; subid NULL: none
-- was made); a walsender still holding one is terminated (the target's
-- subscription is gone, or unreachable). Waits up to wait_ms for them.
-- Returns the slots it could not drop ('' when none).
CREATE OR REPLACE FUNCTION shardid_internal._move_unpublish(name name, subid oid, sysid text, wait_ms integer) RETURNS text
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

REVOKE ALL ON FUNCTION shardid_internal._move_unpublish(name, oid, text, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_unpublish(name, oid, text, integer) IS
    'Node, move on the source: drops the move''s slot, its subscription''s table-sync slots and its publication; returns the slots left.';
-- Node, target of a move: the subscription that copies the shard, made
-- unless it exists, reading the slot the source already has (_move_publish)
-- with copy_data, and disabled at its first error (disable_on_error), so a
-- failing copy shows at once instead of retrying forever. An existing one
-- that is disabled is enabled again: _move_copy calls this again when the
-- subscription stopped because its source restarted or failed over.
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
CREATE OR REPLACE FUNCTION shardid_internal._move_subscribe(name name, conninfo text, schema_name name) RETURNS jsonb
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
    ELSIF NOT (SELECT s.subenabled FROM pg_subscription AS s WHERE s.subname = _move_subscribe.name) THEN
        EXECUTE format('ALTER SUBSCRIPTION %I ENABLE', name);
    END IF;
    RETURN (SELECT jsonb_build_object('subid', s.oid, 'sysid', (pg_control_system()).system_identifier::text,
                                      'role', CASE WHEN own_role THEN pg_get_userbyid(s.subowner) END)
              FROM pg_subscription AS s WHERE s.subname = _move_subscribe.name);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_subscribe(name, text, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_subscribe(name, text, name) IS
    'Node, move on the target: the subscription copying the shard (never applying as a superuser: as the table owners on 16+, as a role of this move with DML rights only on 15), or enables it again; returns its OID and the node''s system identifier.';
-- Node, target of a move: the progress of the move's subscription alone:
-- its tables and how many are ready, the bytes of those tables here (what
-- has been copied so far, in the copy's own transaction too), whether it
-- is enabled (disable_on_error stops it at its first error) and its error
-- counts, summed over the columns each major has.
CREATE OR REPLACE FUNCTION shardid_internal._move_copy_progress(name name) RETURNS jsonb
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
               -- every *_error_count column: apply and sync on 15-18; 19
               -- splits sync into sync_table_error_count and sync_seq_error_count
               'errors', (SELECT sum(v.value::bigint)
                            FROM pg_stat_subscription_stats AS x, jsonb_each_text(to_jsonb(x)) AS v
                           WHERE x.subid = s.oid AND v.key LIKE '%\_error\_count'))
      FROM (SELECT 1) AS one
      LEFT JOIN pg_subscription AS s ON s.subname = _move_copy_progress.name
                                     AND s.subdbid = (SELECT d.oid FROM pg_database AS d WHERE d.datname = current_database())
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_copy_progress(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_copy_progress(name) IS
    'Node, move on the target: tables ready and total, bytes copied, enabled and error count of the move''s subscription.';
-- Node, target of a move, when it ends: drops the move's subscription
-- without touching the source: disabled, detached from its slot, pointed
-- at a connection that fails at once (DROP SUBSCRIPTION would otherwise
-- connect to drop the table-sync slots, and wait for a source that is
-- down), dropped; all in one transaction. The router drops the slots on
-- the source. Then the role a move makes on 15, with its privileges. Returns the subscription's OID and this node's system
-- identifier (for the table-sync slots on the source), NULL if there was
-- none.
CREATE OR REPLACE FUNCTION shardid_internal._move_unsubscribe(name name) RETURNS jsonb
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

REVOKE ALL ON FUNCTION shardid_internal._move_unsubscribe(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_unsubscribe(name) IS
    'Node, move on the target: disables, detaches and drops the move''s subscription, and drops the role a move makes on 15; returns the subscription''s OID and the node''s system identifier.';
-- Node, either end of a move: whether this node registers the shard under
-- schema_name, i.e. still holds the copy the move made or is retiring (a
-- copy is made and registered in one transaction); anything else is left
-- alone.
CREATE OR REPLACE FUNCTION shardid_internal._move_registered(shard integer, schema_name name) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT EXISTS (SELECT FROM shardid.shard_registry AS r
                    WHERE r.shard = _move_registered.shard AND r.schema_name = _move_registered.schema_name)
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_registered(integer, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_registered(integer, name) IS
    'Node, moves: whether this node registers the shard under that schema (the move''s own copy, not yet removed).';
-- Node, target of a move that is rolled back: unregisters the shard and
-- drops its copy, if this node registers the shard under that schema (the
-- copy is made and registered in one transaction, so that is the move's
-- own; anything else is left alone). Returns whether it dropped one.
CREATE OR REPLACE FUNCTION shardid_internal._move_drop_copy(shard integer, schema_name name) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
    SET client_min_messages = warning
AS $$
BEGIN
    IF NOT shardid_internal._move_registered(shard, schema_name) THEN
        RETURN false;
    END IF;
    PERFORM shardid.detach_shard(shard);
    EXECUTE format('DROP SCHEMA IF EXISTS %I CASCADE', schema_name);
    RETURN true;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_drop_copy(integer, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_drop_copy(integer, name) IS
    'Node, move on the target, rollback: unregisters the shard and drops its copy if registered under that schema.';
-- Node, source of a move, after the router points at the target: retires
-- the old copy (retire_shard: unregistered, then dropped or renamed to
-- new_name with triggers refusing writes), trying to lock its tables for
-- lock_timeout_ms. Returns the new name, 'dropped', or 'already retired'
-- when this node no longer registers the shard under schema_name.
CREATE OR REPLACE FUNCTION shardid_internal._move_retire(shard integer, schema_name name, target text, new_name name, lock_timeout_ms integer)
    RETURNS text
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
    SET client_min_messages = warning
AS $$
BEGIN
    IF NOT shardid_internal._move_registered(shard, schema_name) THEN
        RETURN 'already retired';
    END IF;
    PERFORM set_config('lock_timeout', lock_timeout_ms || 'ms', true);
    RETURN COALESCE(quote_ident(shardid.retire_shard(shard, target, new_name)), 'dropped');
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_retire(integer, name, text, name, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_retire(integer, name, text, name, integer) IS
    'Node, move on the source after the repoint: retires the old copy (dropped or renamed, refusing writes); returns its new name, dropped, or already retired.';
-- The moves in progress as a DBA watches them: phase, tables ready, bytes
-- of this move's tables on the target and on the source, lag of its slot
-- in bytes, how long it has run, the last error, and the backend moving it
-- (its lock in shardid.session_locks; NULL when no live session holds the
-- move: interrupted, CALL it again or abort_move()). Figures are those of the last poll (updated_at).
CREATE OR REPLACE VIEW shardid.move_progress AS
SELECT m.shard, m.source, m.target, m.schema_name, m.mode, m.phase,
       m.tables_ready, m.tables_total, m.bytes_copied, m.bytes_total, m.lag_bytes,
       pg_catalog.now() OPERATOR(pg_catalog.-) m.started_at AS elapsed,
       m.frozen_at, m.repointed_at, m.updated_at, m.last_error,
       (SELECT l.pid FROM shardid.session_locks AS l
         WHERE l.lock_name OPERATOR(pg_catalog.=) ('move ' OPERATOR(pg_catalog.||) m.shard)
           AND EXISTS (SELECT FROM pg_catalog.pg_stat_activity AS a
                        WHERE a.pid OPERATOR(pg_catalog.=) l.pid
                          AND (a.backend_start OPERATOR(pg_catalog.=) l.backend_start OR a.backend_start IS NULL))) AS moved_by
  FROM shardid.shard_moves AS m;

GRANT SELECT ON shardid.move_progress TO PUBLIC;

COMMENT ON VIEW shardid.move_progress IS
    'Router: moves in progress: phase, tables ready/total, bytes copied/total, lag in bytes, elapsed time, last error, and the backend running the move (NULL: interrupted).';
-- Router, moves: the differences between two definitions made by
-- _shard_definition() (a on a_name, b on b_name), one sentence each, in
-- order; empty when they are equal.
CREATE OR REPLACE FUNCTION shardid_internal._definition_diff(a jsonb, b jsonb, a_name text, b_name text) RETURNS text[]
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

REVOKE ALL ON FUNCTION shardid_internal._definition_diff(jsonb, jsonb, text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._definition_diff(jsonb, jsonb, text, text) IS
    'Router, moves: the differences between two shard definitions (_shard_definition()), one sentence each.';
-- Router, moves: the name of a move's publication, replication slot and
-- subscription (and, on 15, of the role its subscription runs as):
-- shardid_move_<shard>_<move_id>, unique per move (move_id is the start
-- in ms), plain ASCII as slot names must be, within 63 bytes.
CREATE OR REPLACE FUNCTION shardid_internal._move_name(shard integer, move_id bigint) RETURNS name
    LANGUAGE sql IMMUTABLE STRICT
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT shardid_internal._fit_name('shardid_move_' || shard, '_' || move_id)
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_name(integer, bigint) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_name(integer, bigint) IS
    'Router, moves: shardid_move_<shard>_<move_id>, the name of a move''s publication, slot and subscription.';
-- Router, moves: a point where a test may pause a move in a phase. The
-- tests that do create shardid_test.move_pause(shard, phase) on the router
-- (test/lib/move_pause.sql: it waits while another session holds an
-- advisory lock); the extension has no test code. It is called only when
-- a superuser owns it and its schema, so that no other role's code runs
-- inside a move. Without it, as in production, this is one catalog lookup.
CREATE OR REPLACE FUNCTION shardid_internal._move_pause(shard integer, phase text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF EXISTS (SELECT FROM pg_proc AS p
                 JOIN pg_namespace AS n ON n.oid = p.pronamespace
                 JOIN pg_roles AS fo ON fo.oid = p.proowner
                 JOIN pg_roles AS so ON so.oid = n.nspowner
                WHERE p.oid = to_regprocedure('shardid_test.move_pause(integer, text)')
                  AND fo.rolsuper AND so.rolsuper) THEN
        PERFORM shardid_test.move_pause(shard, phase);
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_pause(integer, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_pause(integer, text) IS
    'Router, moves: a pause point for tests; calls shardid_test.move_pause(shard, phase) if a superuser created it (test/lib/move_pause.sql).';
-- Router, moves: closes the move's node connections, cancelling what they
-- run (which also ends the source's freeze lease). Never fails.
CREATE OR REPLACE FUNCTION shardid_internal._move_disconnect() RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM shardid_internal._node_close('shardid_move_source');
    PERFORM shardid_internal._node_close('shardid_move_target');
    PERFORM shardid_internal._node_close('shardid_move_check');
EXCEPTION WHEN OTHERS THEN
    NULL;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_disconnect() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_disconnect() IS
    'Router, moves: cancels and closes the move''s dblink connections.';
-- Router, moves: one session at a time works on a shard's move. Takes the
-- lock 'move <shard>' of shardid.session_locks (_session_lock), which is
-- free again once this session ends, however it ends, and which only
-- administrators may take or hold (0.2's advisory key could be held by
-- any role, blocking every move of the shard); 55006 naming the backend
-- that holds it otherwise. The caller commits at once. Also refuses what a move
-- cannot run in: a transaction block (a move commits once per phase), a
-- NULL shard, a router without dblink.
CREATE OR REPLACE FUNCTION shardid_internal._move_lock(shard integer, what text) RETURNS void
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
    PERFORM shardid_internal._dblink_schema();
    holder := shardid_internal._session_lock('move ' || shard);
    IF holder IS NOT NULL THEN
        RAISE EXCEPTION 'shard % is being moved by another session (backend %)', shard, holder
            USING ERRCODE = 'object_in_use',
                  HINT = format('Wait for it, or stop it: SELECT pg_cancel_backend(%s); rolls the move back, pg_terminate_backend(%s) leaves it to be resumed or aborted.', holder, holder);
    END IF;
    -- the move's connections are its own (_node_connect keeps one that is
    -- open): none an earlier move of this session left to other nodes
    PERFORM shardid_internal._move_disconnect();
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_lock(integer, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_lock(integer, text) IS
    'Router, moves: takes the lock of a shard''s move in shardid.session_locks (55006 naming its holder), refusing a transaction block; the caller commits.';
-- Router, moves: the end of a session's work on a shard's move: closes
-- its node connections and releases the shard's lock in
-- shardid.session_locks (the caller commits). Never fails.
CREATE OR REPLACE FUNCTION shardid_internal._move_unlock(shard integer) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM shardid_internal._move_disconnect();
    PERFORM shardid_internal._session_unlock('move ' || shard);
EXCEPTION WHEN OTHERS THEN
    NULL;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_unlock(integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_unlock(integer) IS
    'Router, moves: closes the move''s node connections and releases the shard''s lock in shardid.session_locks held by this session (the caller commits).';
-- Router, moves: runs on the source a statement that locks the shard's
-- tables for 300 ms at most (its lock_timeout), again and again while it
-- fails with 55P03, for lock_timeout in all, so writers never queue behind
-- it for long. Returns its value as jsonb.
CREATE OR REPLACE FUNCTION shardid_internal._move_lock_tables(shard integer, sql text, lock_timeout interval) RETURNS jsonb
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
            r := shardid_internal._node('shardid_move_source', sql, m.source)::jsonb;
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

REVOKE ALL ON FUNCTION shardid_internal._move_lock_tables(integer, text, interval) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_lock_tables(integer, text, interval) IS
    'Router, moves: runs a statement that locks the shard''s tables on the source, retrying lock timeouts for lock_timeout in all.';
-- Router, moves: warns (a NOTICE, never an error) when an online move's
-- target would make the copy wait for its logical replication launcher.
-- Up to PostgreSQL 15 the launcher keeps one last start time for all
-- subscriptions (ApplyLauncherMain in launcher.c): after it has started an
-- apply worker, it starts no other, for any subscription, until
-- wal_retrieve_retry_interval (default 5 s) has passed, and a wake-up
-- meanwhile sleeps a whole interval again. So the next move to that node
-- waits up to that long before its copy starts. From 16 the launcher keeps
-- a start time per subscription, and a move's subscription is always a new
-- one: no wait. Warns when server_version_num < 160000 and the interval is
-- over 1 s (retry_ms: pg_settings.setting, in ms).
CREATE OR REPLACE FUNCTION shardid_internal._move_check_launcher(node text, server_version_num integer, retry_ms integer)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF server_version_num < 160000 AND retry_ms > 1000 THEN
        RAISE NOTICE 'node "%" has wal_retrieve_retry_interval = %ms: on PostgreSQL % its logical replication launcher starts at most one subscription''s worker per interval, so this move''s copy may wait up to that long to start',
                node, retry_ms, server_version_num / 10000
            USING HINT = format('On node "%s": ALTER SYSTEM SET wal_retrieve_retry_interval = ''200ms''; SELECT pg_reload_conf(); (no restart)', node);
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_check_launcher(text, integer, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_check_launcher(text, integer, integer) IS
    'Router, moves: a NOTICE when an online move''s target is PostgreSQL 15 or older with wal_retrieve_retry_interval over 1 s, whose launcher would delay the move''s subscription by up to that interval.';
-- Router, first step of move_shard(): a move of this shard in progress is
-- resumed (its row, after checking it goes to the same node), or a new one
-- is checked before anything changes and recorded in phase 'schema'. The
-- checks: the shard is placed, not frozen on the router, and not already
-- on to_node, which exists; every node answers with shardid 0.3 (which runs
-- the owners' code as the owners: a 0.2 node is refused) and the router's
-- layout; the source registers the shard in a schema that holds
-- its generator; the target neither registers the shard nor has the
-- schema, and has every role the shard's owners and privileges name; the
-- copy the target would make from its templates is the source's shard
-- (the trial copy is undone), else "diverged" names every difference; an
-- online move needs wal_level = logical, a free replication slot and a
-- replica identity on every table of the shard; a NOTICE when the
-- target's launcher would delay the copy (_move_check_launcher). Leaves the
-- connections shardid_move_source and shardid_move_target open.
CREATE OR REPLACE FUNCTION shardid_internal._move_prepare(shard integer, to_node text, offline boolean)
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
    tgt     jsonb;
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
        PERFORM shardid_internal._node_connect('shardid_move_check', nd.node);
        facts := shardid_internal._node('shardid_move_check',
            $q$SELECT pg_catalog.jsonb_build_object('version', (SELECT e.extversion FROM pg_catalog.pg_extension AS e WHERE e.extname OPERATOR(pg_catalog.=) 'shardid'),
                                         'moves', pg_catalog.to_regprocedure('shardid_internal._run_as_owner(regrole, text, boolean)') IS NOT NULL)$q$,
            nd.node)::jsonb;
        IF facts->>'version' IS NULL THEN
            PERFORM shardid_internal._node_close('shardid_move_check');
            RAISE EXCEPTION 'node "%" has no shardid extension', nd.node
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'CREATE EXTENSION shardid; there, with the router''s layout.';
        END IF;
        IF NOT (facts->>'moves')::boolean THEN
            PERFORM shardid_internal._node_close('shardid_move_check');
            RAISE EXCEPTION 'node "%" has shardid %, which cannot take part in a move', nd.node, facts->>'version'
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'ALTER EXTENSION shardid UPDATE; there.';
        END IF;
        layout := shardid_internal._node('shardid_move_check',
            $q$SELECT pg_catalog.concat(pg_catalog.to_char(pg_catalog.timezone('UTC', l.epoch), 'YYYY-MM-DD HH24:MI:SS.MS"+00"'), ', ',
                                         l.shard_bits, ' shard bits, ', l.seq_bits, ' seq bits') FROM shardid.layout() AS l$q$, nd.node);
        PERFORM shardid_internal._node_close('shardid_move_check');
        IF layout IS DISTINCT FROM mine THEN
            RAISE EXCEPTION 'node "%" uses another layout than the router: %; the router: %', nd.node, layout, mine
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = 'Every server of one system must use one layout (epoch, shard bits, seq bits).';
        END IF;
    END LOOP;

    PERFORM shardid_internal._node_connect('shardid_move_source', p.node);
    PERFORM shardid_internal._node_connect('shardid_move_target', to_node);
    src := shardid_internal._node('shardid_move_source', format('SELECT shardid_internal._move_source_facts(%s)', shard), p.node)::jsonb;
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
    trial := shardid_internal._node('shardid_move_target', format('SELECT shardid_internal._create_shard_copy(%s, %L, true)', shard, src), to_node)::jsonb;
    PERFORM shardid_internal._move_compare_shard(shard, p.node, to_node, src->'definition', trial, format('node "%s" (its templates)', to_node),
                                  format('A move makes the shard on node "%s" from that node''s templates (shardid.sharded_tables) and copies the rows; make the shard and the templates agree first (ALTER the shard''s tables, or the templates).', to_node));
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
        tgt := shardid_internal._node('shardid_move_target',
            $q$SELECT pg_catalog.jsonb_build_object('version', pg_catalog.current_setting('server_version_num')::pg_catalog.int4,
                                                    'retry_ms', s.setting::pg_catalog.int4)
                 FROM pg_catalog.pg_settings AS s WHERE s.name OPERATOR(pg_catalog.=) 'wal_retrieve_retry_interval'$q$, to_node)::jsonb;
    END IF;
    INSERT INTO shardid.shard_moves (shard, source, target, schema_name, mode, phase, bytes_total)
        VALUES (shard, p.node, to_node, src->>'schema_name', CASE WHEN offline THEN 'offline' ELSE 'online' END, 'schema',
                (src->>'bytes')::bigint)
        RETURNING * INTO m;
    RAISE NOTICE 'moving shard % (%) from "%" to "%" (%)', shard, quote_ident(m.schema_name), m.source, m.target, m.mode;
    IF tgt IS NOT NULL THEN
        PERFORM shardid_internal._move_check_launcher(to_node, (tgt->>'version')::integer, (tgt->>'retry_ms')::integer);
    END IF;
    RETURN m;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_prepare(integer, text, boolean) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_prepare(integer, text, boolean) IS
    'Router, moves: resumes the shard''s move in progress, or checks a new one (placement, nodes, layouts, registries, templates, online prerequisites) and records it.';
-- Router, phase 'schema' of a move: the target makes the shard from its
-- templates with the source's owners and privileges, and registers it
-- (_create_shard_copy, one transaction there); the copy must be the
-- source's shard (else the move fails and rolls back). Then phase 'copy'
-- (online) or 'frozen' (offline).
CREATE OR REPLACE FUNCTION shardid_internal._move_schema(m shardid.shard_moves) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    shard integer := m.shard;
    src  jsonb;
    made jsonb;
BEGIN
    PERFORM shardid_internal._node_connect('shardid_move_source', m.source);
    PERFORM shardid_internal._node_connect('shardid_move_target', m.target);
    src := shardid_internal._node('shardid_move_source', format('SELECT shardid_internal._move_source_facts(%s)', shard), m.source)::jsonb;
    IF src->>'schema_name' IS DISTINCT FROM m.schema_name THEN
        RAISE EXCEPTION 'shard % is no longer registered on node "%" in schema %', shard, m.source, quote_ident(m.schema_name)
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    made := shardid_internal._node('shardid_move_target', format('SELECT shardid_internal._create_shard_copy(%s, %L, false)', shard, src), m.target)::jsonb;
    PERFORM shardid_internal._move_compare_shard(shard, m.source, m.target, src->'definition', made, format('node "%s"', m.target));
    UPDATE shardid.shard_moves AS x
       SET phase = CASE WHEN m.mode = 'offline' THEN 'frozen' ELSE 'copy' END, bytes_total = (src->>'bytes')::bigint,
           updated_at = clock_timestamp()
     WHERE x.shard = m.shard;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_schema(shardid.shard_moves) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_schema(shardid.shard_moves) IS
    'Router, move phase schema: the target makes and registers the shard from its templates with the source''s owners and privileges; the definitions must agree.';
-- Router, moves: raises 55000 when two definitions of a shard differ
-- (_definition_diff, each side named by its label): the message, then the
-- first three differences (and how many more), every one in the detail.
CREATE OR REPLACE FUNCTION shardid_internal._move_compare(ds jsonb, dt jsonb, source_label text, target_label text,
                                                 message text, hint text DEFAULT NULL)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    diff text[] := shardid_internal._definition_diff(ds, dt, source_label, target_label);
BEGIN
    IF cardinality(diff) > 0 THEN
        PERFORM shardid_internal._raise('55000',
            message || ': ' || array_to_string(diff[1:3], '; ')
                    || CASE WHEN cardinality(diff) > 3 THEN format('; and %s more', cardinality(diff) - 3) ELSE '' END,
            array_to_string(diff, E'\n'), hint);
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_compare(jsonb, jsonb, text, text, text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_compare(jsonb, jsonb, text, text, text, text) IS
    'Router, moves: raises 55000 with the message and every difference when two definitions of a shard differ.';
-- Router, moves: _move_compare() of a shard on its source (ds) with its
-- copy from the target's templates (dt). When they differ and apply_ddl()
-- has an unfinished change on the router, the source or the target, the
-- error says so and its hint names the re-CALLs that finish it (a shard
-- and the templates differ until then); when the target has no template
-- of a table, the hint says so; otherwise the hint given.
CREATE OR REPLACE FUNCTION shardid_internal._move_compare_shard(shard integer, source text, target text, ds jsonb, dt jsonb,
                                                       target_label text, hint text DEFAULT NULL)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    calls   text[];
    missing text;
BEGIN
    IF shardid_internal._definition_diff(ds, dt, '', '') <> '{}' THEN
        SELECT array_agg(x.c || ' on ' || x.w ORDER BY x.o) INTO calls
          FROM (SELECT c, 'the router' AS w, o FROM jsonb_array_elements_text(shardid_internal._apply_ddl_unfinished()) WITH ORDINALITY AS a(c, o)
                UNION ALL
                SELECT c, format('node "%s"', source), 1000 + o
                  FROM jsonb_array_elements_text(shardid_internal._node('shardid_move_source', 'SELECT shardid_internal._apply_ddl_unfinished()', source)::jsonb)
                       WITH ORDINALITY AS a(c, o)
                UNION ALL
                SELECT c, format('node "%s"', target), 2000 + o
                  FROM jsonb_array_elements_text(shardid_internal._node('shardid_move_target', 'SELECT shardid_internal._apply_ddl_unfinished()', target)::jsonb)
                       WITH ORDINALITY AS a(c, o)) AS x;
    END IF;
    IF calls IS NULL THEN
        -- whole tables the target's templates do not make: no template there
        SELECT string_agg(substr(k, 7), ', ' ORDER BY k) INTO missing
          FROM jsonb_object_keys(ds) AS k
         WHERE k LIKE 'table %' AND position(':' IN k) = 0 AND NOT dt ? k;
        PERFORM shardid_internal._move_compare(ds, dt, format('node "%s"', source), target_label,
                                      format('shard %s on node "%s" has diverged from its templates', shard, source),
                                      CASE WHEN missing IS NULL THEN hint
                                           ELSE format('Node "%s" has no template of %s: create it there as on node "%s" and register it (SELECT shardid.create_table(...)), then move again.',
                                                       target, missing, source) END);
    ELSE
        PERFORM shardid_internal._move_compare(ds, dt, format('node "%s"', source), target_label,
                                      format('shard %s on node "%s" differs from the templates on node "%s" while apply_ddl() has not finished a change', shard, source, target),
                                      'Finish it, then move the shard again: ' || array_to_string(calls, ' '));
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_compare_shard(integer, text, text, jsonb, jsonb, text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_compare_shard(integer, text, text, jsonb, jsonb, text, text) IS
    'Router, moves: compares a shard with its copy from the target''s templates; when they differ during an unfinished apply_ddl() (router, source or target), the error names the re-CALLs that finish it.';
-- The one options record of a move: built and checked once from the named
-- parameters of the entry points that make moves (_move_options), passed
-- whole from move_shard() to the step that uses each option, and kept in a
-- rebalance job's options, from which its moves read it back. A new
-- option is an attribute here, its default in _move_options() and its
-- consumer.
CREATE TYPE shardid.move_options AS (
    drop_old        boolean,   -- drop the old copy at the end (else it is retired, kept)
    offline         boolean,   -- the shard takes no writes while its rows are copied (no replication)
    lock_timeout    interval,  -- how long the cut-over and the finish wait for a lock
    cutover_timeout interval,  -- how long the cut-over may take, writes refused meanwhile
    catchup_timeout interval,  -- how long the copy may take to catch up
    node_timeout    interval   -- how long a node that does not answer is retried (a failover under way)
);

COMMENT ON TYPE shardid.move_options IS
    'The options of one move, built and checked once (shardid_internal._move_options) and passed whole: drop_old, offline, lock_timeout, cutover_timeout, catchup_timeout, node_timeout.';
-- Router: the options record of a move (shardid.move_options) from the
-- named parameters of the entry points that make moves (move_shard(),
-- rebalance(), drain_node(), rebalance_start(), drain_node_start()), as a
-- jsonb object, or from a rebalance job's options (other keys ignored).
-- NULL or left out gets its default, in one place: drop_old false, offline
-- false, lock_timeout 10 s, cutover_timeout 30 s, catchup_timeout 1 day,
-- node_timeout 90 s (longer than an HA manager's failover, Patroni's ttl
-- 30 s + loop_wait 10 s by default, so that a move waits for a node's new
-- primary: docs/high-availability.md); a negative timeout is refused
-- (22023).
CREATE OR REPLACE FUNCTION shardid_internal._move_options(given jsonb) RETURNS shardid.move_options
    LANGUAGE plpgsql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    o shardid.move_options := jsonb_populate_record(ROW(false, false, interval '10 s', interval '30 s', interval '1 day',
                                                        interval '90 s')::shardid.move_options,
                                                    jsonb_strip_nulls(COALESCE(given, '{}')));
    t record;
BEGIN
    FOR t IN SELECT * FROM (VALUES ('lock_timeout', o.lock_timeout), ('cutover_timeout', o.cutover_timeout),
                                   ('catchup_timeout', o.catchup_timeout), ('node_timeout', o.node_timeout)) AS v(name, value)
              WHERE v.value < interval '0' LOOP
        RAISE EXCEPTION '% must not be negative: %', t.name, t.value
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give a positive interval, or NULL for the default.';
    END LOOP;
    RETURN o;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_options(jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_options(jsonb) IS
    'Router: the options record of a move from the entry points'' named parameters or a job''s options (a jsonb object), with its defaults in one place (drop_old false, offline false, lock_timeout 10 s, cutover_timeout 30 s, catchup_timeout 1 day, node_timeout 90 s): NULL or left out gets its default; a negative timeout is refused (22023).';
-- Router, phase 'copy' of a move, one poll (the procedure commits after
-- each, so move_progress shows it): first the source's publication and
-- slot and the target's subscription (its OID committed at once, it names
-- the table-sync slots), then each poll records the subscription's
-- progress and the slot's lag, fails the move at the subscription's first
-- error, and every 2 s compares the definitions on both nodes (DDL is not
-- replicated). A node that cannot be reached is retried for node_timeout
-- (a restarting target reconnects on its own), then the move fails naming
-- it. A subscription stopped by a source that restarted or failed over
-- with the slot kept (a failover slot, 17 and later) is enabled again.
-- When every table is ready and the lag is under 1 MB: phase
-- 'frozen'. state carries what one poll tells the next.
CREATE OR REPLACE FUNCTION shardid_internal._move_copy(m shardid.shard_moves, o shardid.move_options, state jsonb)
    RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    shard integer := m.shard;
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
    nm := shardid_internal._move_name(m.shard, m.move_id);
    IF state ? 'polled' THEN
        PERFORM pg_sleep(0.2);
        now_t := clock_timestamp();
    END IF;
    state := state || jsonb_build_object('polled', true);
    BEGIN
        who := 'source'; node := m.source; conn := 'shardid_move_source';
        PERFORM shardid_internal._node_connect(conn, node);
        IF m.subscription IS NULL THEN
            PERFORM shardid_internal._node(conn, format('SELECT shardid_internal._move_publish(%L, %L)', nm, m.schema_name), node);
            PERFORM shardid_internal._node(conn, format('SELECT shardid_internal._move_create_slot(%L)', nm), node);
            -- which postmaster the slot was made on (below)
            state := state || jsonb_build_object('source_started',
                         shardid_internal._node(conn, format('SELECT shardid_internal._move_slot_status(%L)', nm), node)::jsonb->'started');
            PERFORM shardid_internal._move_pause(shard, 'subscribe');
            who := 'target'; node := m.target; conn := 'shardid_move_target';
            PERFORM shardid_internal._node_connect(conn, node);
            sub := shardid_internal._node(conn, format('SELECT shardid_internal._move_subscribe(%L, %L, %L)', nm,
                                              (SELECT n.connstr FROM shardid.nodes AS n WHERE n.node = m.source),
                                              m.schema_name), node)::jsonb;
            UPDATE shardid.shard_moves AS x
               SET subscription = (sub->>'subid')::oid, target_sysid = sub->>'sysid', updated_at = now_t
             WHERE x.shard = m.shard;
            RETURN state - 'unreachable_since';
        END IF;
        IF NOT state ? 'paused' THEN
            PERFORM shardid_internal._move_pause(shard, 'copy');
            state := state || jsonb_build_object('paused', true);
        END IF;
        slot := shardid_internal._node(conn, format('SELECT shardid_internal._move_slot_status(%L)', nm), node)::jsonb;
        who := 'target'; node := m.target; conn := 'shardid_move_target';
        PERFORM shardid_internal._node_connect(conn, node);
        prog := shardid_internal._node(conn, format('SELECT shardid_internal._move_copy_progress(%L)', nm), node)::jsonb;
        IF NOT state ? 'compared' OR now_t - (state->>'compared')::timestamptz > '2 s'::interval THEN
            dt := shardid_internal._node(conn, format('SELECT shardid_internal._shard_definition(%L, %L)', m.schema_name, nm), node)::jsonb;
            who := 'source'; node := m.source; conn := 'shardid_move_source';
            ds := shardid_internal._node(conn, format('SELECT shardid_internal._shard_definition(%L)', m.schema_name), node)::jsonb;
            PERFORM shardid_internal._move_compare(ds, dt, format('node "%s"', m.source), format('node "%s"', m.target),
                                          format('the tables of shard %s changed on node "%s" during the copy', shard, m.source),
                                          'Logical replication does not carry DDL: make the change after the move (or on both nodes).');
            state := state || jsonb_build_object('compared', now_t);
        END IF;
    EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
        msg := shardid_internal._one_line(msg);
        -- the node's own error (a subscription that cannot reach the
        -- source fails with 08006 too) when the connection still works
        IF NOT shardid_internal._node_unreachable(st) OR shardid_internal._node_alive(conn) THEN
            PERFORM shardid_internal._raise(st, msg, det, hnt);
        END IF;
        PERFORM shardid_internal._node_close(conn);
        since := COALESCE((state->>'unreachable_since')::timestamptz, now_t);
        UPDATE shardid.shard_moves AS x
           SET last_error = format('node "%s" (the %s) unreachable since %s: %s', node, who, since, msg), updated_at = now_t
         WHERE x.shard = m.shard;
        IF now_t - since > o.node_timeout THEN
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
    IF (prog->>'enabled')::boolean AND now_t < COALESCE((state->>'resumed_until')::timestamptz, '-infinity') THEN
        -- enabled again (below): the error that stopped it may reach the
        -- statistics after that
        state := state || jsonb_build_object('errors_seen', COALESCE((prog->>'errors')::bigint, 0));
    END IF;
    IF NOT (prog->>'enabled')::boolean OR COALESCE((prog->>'errors')::bigint, 0) > COALESCE((state->>'errors_seen')::bigint, 0) THEN
        -- Another postmaster answers for the source than when the slot was
        -- made or at the last good poll (a restart, or a failover whose new
        -- primary has the slot: a failover slot, 17 and later) and the slot
        -- is there: the subscription stopped at the lost connection
        -- (disable_on_error), not at a row. It is enabled again, once per
        -- change of source, and goes on from the slot.
        IF state->>'source_started' IS DISTINCT FROM slot->>'started' AND state ? 'source_started' THEN
            PERFORM shardid_internal._node('shardid_move_target', format('SELECT shardid_internal._move_subscribe(%L, %L, %L)', nm,
                                              (SELECT n.connstr FROM shardid.nodes AS n WHERE n.node = m.source),
                                              m.schema_name), m.target);
            UPDATE shardid.shard_moves AS x
               SET last_error = format('the subscription stopped when node "%s" (the source) restarted or failed over; enabled again on its slot', m.source),
                   updated_at = now_t
             WHERE x.shard = m.shard;
            RETURN state || jsonb_build_object('source_started', slot->'started', 'errors_seen', COALESCE((prog->>'errors')::bigint, 0),
                                               'resumed_until', now_t + '5 s'::interval);
        END IF;
        RAISE EXCEPTION 'replicating shard % to node "%" failed: its subscription % stopped at an error', shard, m.target, nm
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('%s error(s) reported by the subscription''s workers; the server log of node "%s" says which.',
                                  COALESCE(prog->>'errors', '?'), m.target);
    END IF;
    state := state || jsonb_build_object('source_started', slot->'started');
    UPDATE shardid.shard_moves AS x
       SET tables_ready = (prog->>'tables_ready')::integer, tables_total = (prog->>'tables_total')::integer,
           bytes_copied = (prog->>'bytes')::bigint, lag_bytes = (slot->>'lag')::bigint,
           last_error = NULL, updated_at = now_t,
           phase = CASE WHEN (prog->>'tables_ready')::integer = (prog->>'tables_total')::integer
                             AND (slot->>'lag')::bigint < 1048576 THEN 'frozen' ELSE x.phase END
     WHERE x.shard = m.shard;
    IF now_t - m.started_at > o.catchup_timeout THEN
        RAISE EXCEPTION 'the copy of shard % to node "%" did not catch up within %', shard, m.target, o.catchup_timeout
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('Tables ready: %s of %s; lag: %s bytes.', prog->>'tables_ready', prog->>'tables_total', slot->>'lag');
    END IF;
    RETURN state;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_copy(shardid.shard_moves, shardid.move_options, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_copy(shardid.shard_moves, shardid.move_options, jsonb) IS
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
CREATE OR REPLACE FUNCTION shardid_internal._move_cutover(m shardid.shard_moves, o shardid.move_options)
    RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    shard    integer := m.shard;
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
    nm := shardid_internal._move_name(m.shard, m.move_id);
    PERFORM shardid_internal._node_connect('shardid_move_source', m.source);
    PERFORM shardid_internal._node_connect('shardid_move_target', m.target);
    t0 := clock_timestamp();
    fr := shardid_internal._move_lock_tables(shard, format('SELECT shardid_internal._move_freeze(%L, %s, %L, %L, 300)',
                                                  m.schema_name, shard, m.target, m.mode = 'online'), o.lock_timeout);
    steps := steps || jsonb_build_object('frozen', round(extract(epoch FROM clock_timestamp() - t0) * 1000));
    UPDATE shardid.shard_moves AS x
       SET frozen_at = COALESCE(x.frozen_at, t0), source_lsn = (fr->>'lsn')::pg_lsn, updated_at = clock_timestamp()
     WHERE x.shard = m.shard;

    IF m.mode = 'offline' THEN
        PERFORM shardid_internal._node_send('shardid_move_target', format('SELECT shardid_internal._move_row_counts(%L)', m.schema_name));
        cs := shardid_internal._node('shardid_move_source', format('SELECT shardid_internal._move_row_counts(%L)', m.schema_name), m.source)::jsonb;
        ct := shardid_internal._node_wait('shardid_move_target', m.target)::jsonb;
        IF cs IS DISTINCT FROM ct THEN
            RETURN jsonb_build_object('waiting', true, 'source', cs, 'target', ct);
        END IF;
    END IF;

    -- the target's generators, while it confirms the source's position
    PERFORM shardid_internal._node_send('shardid_move_target',
                               format('SELECT shardid_internal._move_raise_generators(%L, %L)', m.schema_name, fr->'states'));
    IF m.mode = 'online' THEN
        LOOP
            ok := (shardid_internal._node('shardid_move_source', format('SELECT shardid_internal._move_slot_status(%L, %L)', nm, fr->>'lsn'),
                                 m.source)::jsonb->>'confirmed')::boolean;
            EXIT WHEN ok;
            IF clock_timestamp() - t0 > o.cutover_timeout THEN
                RAISE EXCEPTION 'node "%" did not confirm the WAL position % of node "%" within %', m.target, fr->>'lsn',
                        m.source, o.cutover_timeout
                    USING ERRCODE = 'object_not_in_prerequisite_state',
                          DETAIL = 'Its subscription may have stopped (see its server log) or be far behind.';
            END IF;
            PERFORM pg_sleep(0.002);
        END LOOP;
        steps := steps || jsonb_build_object('confirmed', round(extract(epoch FROM clock_timestamp() - t0) * 1000));
    END IF;
    PERFORM shardid_internal._node_wait('shardid_move_target', m.target);
    steps := steps || jsonb_build_object('raised', round(extract(epoch FROM clock_timestamp() - t0) * 1000));
    PERFORM shardid_internal._move_pause(shard, 'frozen');

    -- the last comparison; the source's freeze made permanent meanwhile
    PERFORM shardid_internal._node_send('shardid_move_target', format('SELECT shardid_internal._shard_definition(%L, %L)', m.schema_name, nm));
    ds := shardid_internal._move_lock_tables(shard, format('SELECT shardid_internal._move_seal(%L, %s, %L, 300)', m.schema_name, shard, m.target),
                                    o.lock_timeout);
    dt := shardid_internal._node_wait('shardid_move_target', m.target)::jsonb;
    PERFORM shardid_internal._move_compare(ds, dt, format('node "%s"', m.source), format('node "%s"', m.target),
                                  format('the tables of shard %s changed on node "%s" during the move', shard, m.source),
                                  'Logical replication does not carry DDL: make the change after the move (or on both nodes).');
    steps := steps || jsonb_build_object('sealed', round(extract(epoch FROM clock_timestamp() - t0) * 1000));
    UPDATE shardid.shard_moves AS x SET phase = 'caught_up', updated_at = clock_timestamp()
     WHERE x.shard = m.shard;
    RETURN steps;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_cutover(shardid.shard_moves, shardid.move_options) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_cutover(shardid.shard_moves, shardid.move_options) IS
    'Router, move phase frozen: freezes the shard on the source, waits for the target, raises its generators, seals the freeze, compares definitions; then caught_up.';
-- Router, phase 'caught_up' of a move: points the router at the target
-- (repoint_shard(), which also turns the phase to 'repointed', under the
-- lock on shard_placement that a rollback takes to read the phase).
CREATE OR REPLACE FUNCTION shardid_internal._move_repoint(m shardid.shard_moves) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    shard integer := m.shard;
BEGIN
    PERFORM shardid.repoint_shard(shard, m.target);
    UPDATE shardid.shard_moves AS x SET repointed_at = clock_timestamp() WHERE x.shard = m.shard;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_repoint(shardid.shard_moves) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_repoint(shardid.shard_moves) IS
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
CREATE OR REPLACE FUNCTION shardid_internal._move_finish(m shardid.shard_moves, o shardid.move_options) RETURNS text
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    shard integer := m.shard;
    nm   name;
    res  jsonb;
    remaining text;
    old  text;
BEGIN
    nm := shardid_internal._move_name(m.shard, m.move_id);
    PERFORM shardid_internal._node_connect('shardid_move_target', m.target);
    res := shardid_internal._node('shardid_move_target', format('SELECT shardid_internal._move_unsubscribe(%L)', nm), m.target)::jsonb;
    PERFORM shardid_internal._node_connect('shardid_move_source', m.source);
    remaining := shardid_internal._node('shardid_move_source', format('SELECT shardid_internal._move_unpublish(%L, %L, %L, 10000)', nm,
                                                         COALESCE(m.subscription, (res->>'subid')::oid),
                                                         COALESCE(m.target_sysid, res->>'sysid')), m.source);
    IF remaining <> '' THEN
        RAISE EXCEPTION 'replication slots of the move are still in use on node "%": %', m.source, remaining
            USING ERRCODE = 'object_in_use',
                  HINT = format('The shard is served by node "%s". CALL shardid.move_shard(%s, %L); again to finish.', m.target, shard, m.target);
    END IF;
    old := (shardid_internal._move_lock_tables(shard,
                format('SELECT to_jsonb(shardid_internal._move_retire(%s, %L, %L, %L, 300))', shard, m.schema_name, m.target,
                       CASE WHEN o.drop_old THEN NULL ELSE shardid_internal._fit_name(m.schema_name, '_moved_' || m.move_id) END),
                o.lock_timeout))#>>'{}';
    DELETE FROM shardid.shard_moves AS x WHERE x.shard = m.shard;
    RETURN old;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_finish(shardid.shard_moves, shardid.move_options) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_finish(shardid.shard_moves, shardid.move_options) IS
    'Router, move phase repointed: drops the subscription, slots and publication, retires the old copy, deletes the move''s row.';
-- Router, one step of _move_rollback(): runs sql on node over the dblink
-- connection conn (opened unless it is) and says how it went, without
-- raising, so that a failure on one node stops none of the other steps:
-- {"value": its first value as text}; {"cancelled": true} when the step was
-- cancelled (the rollback stops there); {"left": "<what> on node "<node>"
-- (<error>)", "unreachable": whether the node could not be talked to} for
-- what is left undone (the error on one line), the connection closed.
CREATE OR REPLACE FUNCTION shardid_internal._move_rollback_step(conn text, node text, sql text, what text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    msg text;
    st  text;
BEGIN
    PERFORM shardid_internal._node_connect(conn, node);
    RETURN jsonb_build_object('value', shardid_internal._node(conn, sql, node));
EXCEPTION WHEN query_canceled THEN
    RETURN '{"cancelled": true}';
WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, st = RETURNED_SQLSTATE;
    PERFORM shardid_internal._node_close(conn);
    RETURN jsonb_build_object('left', format('%s on node "%s" (%s)', what, node, shardid_internal._one_line(msg)),
                              'unreachable', shardid_internal._node_unreachable(st));
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_rollback_step(text, text, text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_rollback_step(text, text, text, text) IS
    'Router, one step of a move''s rollback: runs a statement on a node and returns its value, that it was cancelled, or what it left undone (and whether its node could not be reached); never raises.';
-- Router, the first transaction of _move_rollback(): reads the move's row
-- under the lock on shard_placement that repoint_shard() takes and, unless
-- it is repointed, turns it to phase 'aborting' and says so (a NOTICE,
-- once: _move_rollback() may run the steps again). Returns the row to roll
-- back; NULL when there is none, it is repointed (it stays so), or this
-- failed or was cancelled. Never raises: the caller commits either way.
CREATE OR REPLACE FUNCTION shardid_internal._move_rollback_start(shard integer) RETURNS shardid.shard_moves
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    m shardid.shard_moves;
BEGIN
    LOCK TABLE shardid.shard_placement IN SHARE ROW EXCLUSIVE MODE;
    SELECT * INTO m FROM shardid.shard_moves AS x WHERE x.shard = _move_rollback_start.shard FOR UPDATE;
    IF m.shard IS NULL OR m.phase = 'repointed' THEN
        RETURN NULL;
    END IF;
    UPDATE shardid.shard_moves AS x SET phase = 'aborting', updated_at = clock_timestamp()
     WHERE x.shard = _move_rollback_start.shard;
    RAISE NOTICE 'rolling back the move of shard %: it stays on "%"', m.shard, m.source;
    RETURN m;
EXCEPTION WHEN query_canceled OR OTHERS THEN
    RETURN NULL;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_rollback_start(integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_rollback_start(integer) IS
    'Router, moves: marks a move that is not repointed as aborting, under the repoint''s lock, and returns its row; NULL when there is nothing to roll back; never raises.';
-- Router, the steps of _move_rollback() for the move's row m (phase
-- 'aborting'), each on its own so one unreachable node stops none of the
-- others, and the source first (the target is not routed, so the shard
-- must be writable where it is):
--   1. source: the freeze triggers dropped (unfreeze_shard_tables);
--   2. target: the subscription disabled, detached, dropped (and 15's role);
--   3. source: the move's slot, the table-sync slots, the publication;
--   4. target: the copy unregistered and dropped (not if step 2 failed).
-- When all succeeded the row is deleted; else it stays in phase 'aborting'
-- with last_error listing what is left ('rollback incomplete, left: ...',
-- or 'rollback cancelled, left: ...' when a cancel stopped the steps).
-- Returns whether something was left because its node could not be
-- reached (_move_rollback may then try again: a failover under way).
-- Never raises; the caller commits.
CREATE OR REPLACE FUNCTION shardid_internal._move_rollback_steps(m shardid.shard_moves) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nm        name := shardid_internal._move_name(m.shard, m.move_id);
    remaining text[];
    res       jsonb;
    step      jsonb;
    cancelled boolean := false;
    tgt_done  boolean := false;
    outage    boolean := false;
BEGIN
    -- 1. the source writable again, before anything else
    step := shardid_internal._move_rollback_step('shardid_move_source', m.source,
                                        format('SELECT shardid.unfreeze_shard_tables(%L)', m.schema_name),
                                        format('the freeze of shard %s', m.shard));
    remaining := ARRAY[step ->> 'left'];
    outage := outage OR COALESCE((step ->> 'unreachable')::boolean, false);
    -- 2. the subscription, without the source
    IF NOT step ? 'cancelled' THEN
        step := shardid_internal._move_rollback_step('shardid_move_target', m.target,
                                            format('SELECT shardid_internal._move_unsubscribe(%L)', nm),
                                            format('subscription %s', nm));
        tgt_done := step ? 'value';
        res := (step ->> 'value')::jsonb;
        remaining := remaining || (step ->> 'left');
        outage := outage OR COALESCE((step ->> 'unreachable')::boolean, false);
    END IF;
    -- 3. the slots (table-sync ones too) and the publication
    IF NOT step ? 'cancelled' THEN
        step := shardid_internal._move_rollback_step('shardid_move_source', m.source,
                                            format('SELECT shardid_internal._move_unpublish(%L, %L, %L, 10000)', nm,
                                                   COALESCE(m.subscription, (res ->> 'subid')::oid),
                                                   COALESCE(m.target_sysid, res ->> 'sysid')),
                                            format('publication and slots %s', nm));
        IF step ->> 'value' <> '' THEN
            remaining := remaining || format('replication slots %s on node "%s" (in use)', step ->> 'value', m.source);
        END IF;
        remaining := remaining || (step ->> 'left');
        outage := outage OR COALESCE((step ->> 'unreachable')::boolean, false);
    END IF;
    -- 4. the target's copy, once nothing replicates into it
    IF NOT step ? 'cancelled' THEN
        IF tgt_done THEN
            step := shardid_internal._move_rollback_step('shardid_move_target', m.target,
                                                format('SELECT shardid_internal._move_drop_copy(%s, %L)', m.shard, m.schema_name),
                                                format('the copy %s', quote_ident(m.schema_name)));
            remaining := remaining || (step ->> 'left');
            outage := outage OR COALESCE((step ->> 'unreachable')::boolean, false);
        ELSE
            remaining := remaining || format('the copy %s on node "%s"', quote_ident(m.schema_name), m.target);
        END IF;
    END IF;
    cancelled := step ? 'cancelled';
    remaining := array_remove(remaining, NULL);

    BEGIN
        IF cancelled THEN
            remaining := remaining || 'the rest: the rollback was cancelled'::text;
        END IF;
        IF cardinality(remaining) = 0 THEN
            DELETE FROM shardid.shard_moves AS x WHERE x.shard = m.shard;
            RAISE NOTICE 'move of shard % rolled back: nothing left on "%", shard writable on "%"', m.shard, m.target, m.source;
        ELSE
            UPDATE shardid.shard_moves AS x
               SET last_error = CASE WHEN cancelled THEN 'rollback cancelled, left: ' ELSE 'rollback incomplete, left: ' END
                                || array_to_string(remaining, '; '),
                   updated_at = clock_timestamp()
             WHERE x.shard = m.shard;
        END IF;
    EXCEPTION WHEN query_canceled OR OTHERS THEN
        NULL;
    END;
    RETURN outage AND NOT cancelled AND cardinality(remaining) > 0;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_rollback_steps(shardid.shard_moves) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_rollback_steps(shardid.shard_moves) IS
    'Router, moves: the steps of a rollback (source writable, subscription, slots and publication, target copy), each on its own; deletes the move''s row, or records what is left and returns whether a node could not be reached; never raises.';
-- Router, _move_rollback(): whether to run the rollback's steps again
-- after a pause of 1 s: the move failed because a node of it could not be
-- reached (cause: the failure's SQLSTATE, _node_unreachable), and the
-- steps just left something because a node could not be reached (outage:
-- what _move_rollback_steps returned). A node under an HA manager has no
-- primary from the moment its leader fails until the manager promotes a
-- replica (Patroni: up to ttl + loop_wait, 40 s by default;
-- docs/high-availability.md), and the rollback can finish only once it
-- answers again, on whichever member leads. True while the move's row is
-- still 'aborting' and since + node_timeout has not passed (last_error
-- then says until when the rollback retries); false when the rollback is
-- done, the move failed for another reason (a cancel, a refusal: what is
-- left waits for abort_move()), what is left is not an outage, or the
-- time is up: the row stays 'aborting' with what is left, for the job's
-- retry, the next move_shard() or abort_move(). A cancel during the pause
-- ends the wait, the rollback then 'cancelled'. Never raises.
CREATE OR REPLACE FUNCTION shardid_internal._move_rollback_wait(m shardid.shard_moves, since timestamptz, node_timeout interval,
                                                                cause text, outage boolean)
    RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    x     shardid.shard_moves;
    until timestamptz := since + node_timeout;
BEGIN
    IF NOT COALESCE(outage AND shardid_internal._node_unreachable(cause), false) OR node_timeout IS NULL THEN
        RETURN false;
    END IF;
    SELECT * INTO x FROM shardid.shard_moves AS r WHERE r.shard = m.shard;
    IF NOT FOUND OR x.phase <> 'aborting' OR x.move_id <> m.move_id OR x.last_error NOT LIKE 'rollback incomplete%'
       OR clock_timestamp() > until THEN
        RETURN false;
    END IF;
    UPDATE shardid.shard_moves AS r
       SET last_error = format('%s; retried until %s (a node does not answer)', x.last_error, date_trunc('second', until)),
           updated_at = clock_timestamp()
     WHERE r.shard = m.shard;
    BEGIN
        PERFORM pg_sleep(1);
    EXCEPTION WHEN query_canceled THEN
        UPDATE shardid.shard_moves AS r
           SET last_error = regexp_replace(x.last_error, '^rollback incomplete', 'rollback cancelled'), updated_at = clock_timestamp()
         WHERE r.shard = m.shard;
        RETURN false;
    END;
    RETURN true;
EXCEPTION WHEN query_canceled OR OTHERS THEN
    RETURN false;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_rollback_wait(shardid.shard_moves, timestamptz, interval, text, boolean) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_rollback_wait(shardid.shard_moves, timestamptz, interval, text, boolean) IS
    'Router, moves: whether a rollback is to run its steps again, after 1 s: when the move failed at an unreachable node and the steps left something at one (a failover under way), while its row is aborting and within node_timeout of since; never raises.';
-- Router: rolls a move back unless it has been repointed, committing as it
-- goes: first the phase is read under the lock on shard_placement that
-- repoint_shard() takes and turned to 'aborting' in that transaction, so
-- a move that the router already points at the target is never undone
-- (it stays repointed: _move_rollback_start); then the steps, the source
-- made writable first, each on its own so one unreachable node stops none
-- of the others (_move_rollback_steps). When all succeeded the row is
-- deleted; else, when the move failed because a node could not be
-- reached (cause: the failure's SQLSTATE) and the steps left something at
-- a node that could not be reached (a failover under way), they run again
-- every second for up to node_timeout from the start of the rollback
-- (_move_rollback_wait); what is still left then stays in phase
-- 'aborting', listed in last_error, for abort_move(), move_shard() or the
-- job's retry to finish. The caller reads the outcome from the row
-- (_move_outcome). Never raises: its caller holds the shard's lock.
-- No SET clause (it COMMITs): it holds the loop, the work is done by
-- functions that pin search_path.
CREATE OR REPLACE PROCEDURE shardid_internal._move_rollback(shard integer, node_timeout interval DEFAULT NULL, cause text DEFAULT NULL)
    LANGUAGE plpgsql
AS $$
DECLARE
    m      shardid.shard_moves;
    since  timestamptz := pg_catalog.clock_timestamp();
    outage boolean;
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid_internal._move_rollback()',
                                             'after each step',
                                             'It is called by shardid.move_shard() and shardid.abort_move(): CALL those on their own.');
    m := shardid_internal._move_rollback_start(shard);
    COMMIT;
    IF m.shard IS NULL THEN
        RETURN;
    END IF;
    LOOP
        outage := shardid_internal._move_rollback_steps(m);
        COMMIT;
        EXIT WHEN NOT shardid_internal._move_rollback_wait(m, since, node_timeout, cause, outage);
        COMMIT;
    END LOOP;
END
$$;

REVOKE ALL ON PROCEDURE shardid_internal._move_rollback(integer, interval, text) FROM PUBLIC;

COMMENT ON PROCEDURE shardid_internal._move_rollback(integer, interval, text) IS
    'Router: rolls back a move not yet repointed (phase read under the repoint''s lock), the source made writable first, retrying for up to node_timeout a node that does not answer when the move failed at one; deletes its row, or leaves it aborting with what is left.';
-- Router, moves: what _move_rollback() achieved, read from the move's row:
-- 'rolled back' (no row left), 'repointed' (not rolled back: the router
-- points at the target), 'cancelled' (a cancel stopped the rollback), or
-- 'incomplete: ' and what is left.
CREATE OR REPLACE FUNCTION shardid_internal._move_outcome(shard integer) RETURNS text
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

REVOKE ALL ON FUNCTION shardid_internal._move_outcome(integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_outcome(integer) IS
    'Router, moves: the outcome of a rollback, from the move''s row: rolled back, repointed, cancelled, or incomplete and what is left.';
-- What one CALL of shardid.move_shard() carries from step to step
-- (_move_start, _move_step, _move_rolled_back), so that the procedure holds
-- only its loop and its COMMITs.
CREATE TYPE shardid_internal._move_run AS (
    m        shardid.shard_moves,  -- the move's row as the last step left it (kept when the row is gone)
    phase    text,                 -- the phase to run next; NULL when the move is done
    state    jsonb,                -- what one poll of the copy tells the next (_move_copy)
    steps    jsonb,                -- the cut-over's steps (_move_cutover)
    old      text,                 -- what became of the old copy (_move_finish)
    routed   boolean,              -- this step repointed a frozen shard: writes are routed once it commits
    waiting  boolean,              -- an offline move waits for its rows: the CALL ends
    aborting boolean,              -- the move was being rolled back when the CALL began
    err      text[]                -- SQLSTATE, message, detail and hint of a failure
);

COMMENT ON TYPE shardid_internal._move_run IS
    'Internal: what one CALL of shardid.move_shard() carries from step to step: the move''s row, the next phase, the copy''s state, the cut-over''s steps, the old copy, and the error of a failure.';
-- Router, move_shard() once it holds the shard's lock: prepares the move
-- with its options o (offline) (_move_prepare: a move in progress
-- resumed, or a new one checked and recorded). Returns the run: the phase
-- to go on from (aborting: a rollback to finish first), or the error to
-- raise once the caller has committed, the lock released here (a cancel
-- absorbed first).
CREATE OR REPLACE FUNCTION shardid_internal._move_start(shard integer, to_node text, o shardid.move_options)
    RETURNS shardid_internal._move_run
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    s        shardid_internal._move_run;
    m        shardid.shard_moves;
    e_state  text;
    e_msg    text;
    e_detail text;
    e_hint   text;
BEGIN
    BEGIN
        m := shardid_internal._move_prepare(shard, to_node, o.offline);
    EXCEPTION WHEN query_canceled OR OTHERS THEN
        GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_msg = MESSAGE_TEXT,
                                e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
        IF e_state = '57014' THEN
            PERFORM shardid_internal._absorb_cancel();
        END IF;
        PERFORM shardid_internal._move_unlock(shard);
        s.err := ARRAY[e_state, e_msg, e_detail, e_hint];
        RETURN s;
    END;
    s.m := m;
    s.phase := m.phase;
    s.state := '{}';
    s.aborting := m.phase = 'aborting';
    RETURN s;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_start(integer, text, shardid.move_options) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_start(integer, text, shardid.move_options) IS
    'Router, moves: prepares the move with its options (resumed or recorded); returns the run, or its error with the shard''s lock released.';
-- Router, move_shard(): the first step after a phase failed with e_state
-- and e_msg: absorbs a second cancel, closes the move's connections and
-- records the error as the move's last_error (on one line: _one_line). Returns the move's phase
-- now (NULL without a row; phase, the one it failed in, if the row cannot
-- be written). Never raises; the caller commits, then rolls back
-- (_move_rollback, which keeps a repointed move) and reports
-- (_move_rolled_back).
CREATE OR REPLACE FUNCTION shardid_internal._move_failed(shard integer, phase text, e_state text, e_msg text) RETURNS text
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF e_state = '57014' THEN
        PERFORM shardid_internal._absorb_cancel();
    END IF;
    PERFORM shardid_internal._move_disconnect();
    BEGIN
        UPDATE shardid.shard_moves AS x SET last_error = shardid_internal._one_line(e_msg), updated_at = clock_timestamp()
         WHERE x.shard = _move_failed.shard
        RETURNING x.phase INTO phase;
    EXCEPTION WHEN query_canceled OR OTHERS THEN
        NULL;
    END;
    RETURN phase;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_failed(integer, text, text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_failed(integer, text, text, text) IS
    'Router, moves: after a failed phase, absorbs a second cancel, closes the move''s connections, records the error on the move''s row and returns its phase; never raises.';
-- Router, move_shard(): one step of a move, the phase function of s.phase
-- given the move's row (schema, copy: one poll, frozen: the cut-over,
-- caught_up: the repoint, repointed: the finish), then the row read again
-- for the next step. o: the move's options, whole; each phase function
-- takes what it uses. The caller commits after each step, so the phase
-- commits as it advances. On an error the step's work is undone and the
-- error is returned in s.err after _move_failed() (s.phase: the move's
-- phase now); the caller commits, rolls back (_move_rollback) and raises
-- it (_move_rolled_back).
CREATE OR REPLACE FUNCTION shardid_internal._move_step(s shardid_internal._move_run, o shardid.move_options)
    RETURNS shardid_internal._move_run
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    m        shardid.shard_moves := s.m;
    shard    integer := m.shard;
    e_state  text;
    e_msg    text;
    e_detail text;
    e_hint   text;
BEGIN
    BEGIN
        CASE s.phase
            WHEN 'schema' THEN
                PERFORM shardid_internal._move_pause(shard, 'schema');
                PERFORM shardid_internal._move_schema(m);
            WHEN 'copy' THEN
                s.state := shardid_internal._move_copy(m, o, s.state);
            WHEN 'frozen' THEN
                s.steps := shardid_internal._move_cutover(m, o);
            WHEN 'caught_up' THEN
                PERFORM shardid_internal._move_pause(shard, 'caught_up');
                PERFORM shardid_internal._move_repoint(m);
            WHEN 'repointed' THEN
                PERFORM shardid_internal._move_pause(shard, 'repointed');
                s.old := shardid_internal._move_finish(m, o);
            ELSE
                RAISE EXCEPTION 'move of shard % in unexpected phase %', shard, s.phase USING ERRCODE = 'internal_error';
        END CASE;
        s.phase := NULL;
        SELECT x.* INTO m FROM shardid.shard_moves AS x WHERE x.shard = (s.m).shard;
        IF FOUND THEN
            s.phase := m.phase;
            s.m := m;
        END IF;
    EXCEPTION WHEN query_canceled OR OTHERS THEN
        GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_msg = MESSAGE_TEXT,
                                e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
        s.phase := shardid_internal._move_failed(shard, s.phase, e_state, e_msg);
        s.err := ARRAY[e_state, e_msg, e_detail, e_hint];
        RETURN s;
    END;
    -- the repoint of a shard frozen in this CALL: the refused window ends
    -- when the caller commits it
    s.routed := COALESCE(s.phase = 'repointed' AND m.frozen_at IS NOT NULL, false);
    -- offline: the rows are to be copied by the caller, then CALL again
    s.waiting := COALESCE(s.steps ? 'waiting', false);
    RETURN s;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_step(shardid_internal._move_run, shardid.move_options) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_step(shardid_internal._move_run, shardid.move_options) IS
    'Router, moves: one step of a move, the phase function of its phase given the move''s row, then the row read again; on an error the step is undone, recorded (_move_failed) and returned.';
-- Router, after a rollback (_move_rollback) made by move_shard() or
-- abort_move(): releases the shard's lock and returns the run with the
-- error to raise once the caller has committed, from what the rollback
-- achieved (_move_outcome), in one place for the three ways to get here:
--   after = 'abort': abort_move(); no error when the move is rolled back
--     (or there was none); 55000 when the router serves the shard from the
--     target already (move_shard() finishes it) or the rollback is not
--     complete; 57014 when a cancel stopped it part way.
--   after = 'resume': move_shard() found a rollback and went on with it;
--     55000, saying whether it is finished now (to_node: the move asked).
--   after = 'failure': a step failed (_move_step) and was rolled back; the
--     step's SQLSTATE and message (s.err), its detail and hint with the
--     phase _move_failed() returned (s.phase): a repointed move is
--     finished by the next CALL, one rolled back stays where it was, an
--     incomplete rollback is finished by abort_move().
CREATE OR REPLACE FUNCTION shardid_internal._move_rolled_back(s shardid_internal._move_run, after text, to_node text DEFAULT NULL)
    RETURNS shardid_internal._move_run
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    shard    integer := (s.m).shard;
    target   text := (s.m).target;
    outcome  text;
    e_detail text := s.err[3];
    e_hint   text := s.err[4];
BEGIN
    IF after <> 'failure' OR s.phase <> 'repointed' THEN  -- NULL phase: no rollback ran
        outcome := shardid_internal._move_outcome(shard);
    END IF;
    PERFORM shardid_internal._move_unlock(shard);
    IF after = 'abort' THEN
        IF outcome = 'repointed' THEN
            s.err := ARRAY['55000', format('shard %s is already served by node "%s": the move cannot be aborted', shard, target),
                           NULL, format('CALL shardid.move_shard(%s, %L); to finish it.', shard, target)];
        ELSIF outcome = 'cancelled' THEN
            s.err := ARRAY['57014', 'canceling statement due to user request',
                           'The rollback stopped part way: CALL shardid.abort_move() again to finish it.', NULL];
        ELSIF outcome <> 'rolled back' AND outcome <> 'none' THEN
            s.err := ARRAY['55000', format('the rollback of the move of shard %s is not complete', shard), outcome,
                           format('The shard is writable on node "%s" unless that node is down. Fix the cause, then CALL shardid.abort_move(%s); again.',
                                  (s.m).source, shard)];
        END IF;
    ELSIF after = 'resume' THEN
        s.err := ARRAY['55000',
                       format('a rollback of the move of shard %s was interrupted; %s', shard,
                              CASE WHEN outcome = 'rolled back' THEN 'it is finished now: the shard stays where it was'
                                   ELSE 'it is still not complete: ' || outcome END),
                       NULL, format('CALL shardid.move_shard(%s, %L); again to move it.', shard, to_node)];
    ELSIF after = 'failure' THEN
        IF s.phase = 'repointed' THEN
            e_hint := format('The shard is served by node "%s"; its old copy is not retired yet. CALL shardid.move_shard(%s, %L); again to finish.',
                             target, shard, target);
        ELSIF s.phase IS NOT NULL THEN
            e_detail := concat_ws(E'\n', NULLIF(e_detail, ''),
                CASE outcome WHEN 'rolled back' THEN 'The move was rolled back: the shard stays where it was, writable.'
                             WHEN 'repointed' THEN NULL
                             ELSE 'The rollback is not complete (' || outcome ||
                                  format('): the shard is writable where it was unless its node is down. CALL shardid.abort_move(%s); to finish it.', shard) END);
            IF outcome = 'repointed' THEN
                e_hint := format('The shard is served by node "%s" already. CALL shardid.move_shard(%s, %L); again to finish.',
                                 target, shard, target);
            END IF;
        END IF;
        s.err := ARRAY[s.err[1], s.err[2], e_detail, e_hint];
    ELSE
        RAISE EXCEPTION 'after must be abort, resume or failure, not %', after USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN s;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_rolled_back(shardid_internal._move_run, text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_rolled_back(shardid_internal._move_run, text, text) IS
    'Router, moves: after a rollback made by abort_move() (abort), by move_shard() going on with one it found (resume) or after a failed step (failure), releases the shard''s lock and returns the run with the error to raise from what the rollback achieved.';
-- Router, move_shard(): raises the error of a run (s.err) if it has one,
-- once the caller has committed what is to be kept.
CREATE OR REPLACE FUNCTION shardid_internal._move_raise(s shardid_internal._move_run) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF s.err IS NOT NULL THEN
        PERFORM shardid_internal._raise(s.err[1], s.err[2], s.err[3], s.err[4]);
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_raise(shardid_internal._move_run) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_raise(shardid_internal._move_run) IS
    'Router, moves: raises the error a move_shard() run carries, if any.';
-- Router, move_shard(): the NOTICE that ends a CALL that did not fail,
-- from the move's last row m: an offline move waiting for its rows to be
-- copied (steps has 'waiting', with the row counts of both nodes), or the
-- move done, with its time since t_start, the cut-over and the window
-- writes were refused (up to t_routed, when this CALL repointed) and what
-- became of the old copy (old, NULL when it was dropped).
CREATE OR REPLACE FUNCTION shardid_internal._move_report(m shardid.shard_moves, t_start timestamptz, t_routed timestamptz,
                                                old text, steps jsonb) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF steps ? 'waiting' THEN
        RAISE NOTICE 'shard % is frozen on "%" for an offline move: copy its rows to "%", then CALL this again', m.shard, m.source, m.target
            USING DETAIL = format('Row counts on "%s": %s; on "%s": %s.', m.source, steps -> 'source', m.target, steps -> 'target'),
                  HINT = 'bin/shardid-move-shard --offline does it (the rows read on the source, written as the tables'' owners: shardid_internal._move_offline_load() and _move_offline_store()).';
        RETURN;
    END IF;
    RAISE NOTICE 'moved shard % from "%" to "%" in % ms%; old copy %', m.shard, m.source, m.target,
        round(date_part('epoch', clock_timestamp() - t_start) * 1000),
        CASE WHEN t_routed IS NOT NULL
             THEN format(' (cut-over from %s ms); writes refused for %s ms',
                         round(date_part('epoch', m.frozen_at - m.started_at) * 1000),
                         round(date_part('epoch', t_routed - m.frozen_at) * 1000))
             ELSE '' END,
        COALESCE(old, 'retired');
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_report(shardid.shard_moves, timestamptz, timestamptz, text, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_report(shardid.shard_moves, timestamptz, timestamptz, text, jsonb) IS
    'Router, moves: the NOTICE that ends a move_shard() CALL: an offline move waiting for its rows, or the move done with its timings.';
-- Router, abort_move(): takes the shard's lock (_move_lock) and reads the
-- move's row. Returns the run (its row), or, when no move of the shard is
-- in progress, the error to raise once the caller has committed, the lock
-- released here.
CREATE OR REPLACE FUNCTION shardid_internal._move_abort_start(shard integer) RETURNS shardid_internal._move_run
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    s shardid_internal._move_run;
    m shardid.shard_moves;
BEGIN
    PERFORM shardid_internal._move_lock(shard, 'shardid.abort_move()');
    SELECT x.* INTO m FROM shardid.shard_moves AS x WHERE x.shard = _move_abort_start.shard;
    IF NOT FOUND THEN
        PERFORM shardid_internal._move_unlock(shard);
        s.err := ARRAY['42704', format('no move of shard %s is in progress', shard), NULL, 'See shardid.move_progress.'];
        RETURN s;
    END IF;
    s.m := m;
    s.phase := m.phase;
    RETURN s;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_abort_start(integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_abort_start(integer) IS
    'Router, abort_move(): takes the shard''s move lock and returns the run with the move''s row, or with the error (42704) when no move is in progress, the lock released.';
-- Router: the loop of a move (move_shard(), and each move of a rebalance
-- or drain job: _rebalance_move_run), with its options record o whole
-- (_move_options): the shard's lock (shardid.session_locks, committed
-- first, released before the CALL ends), _move_start(), then one
-- _move_step() per phase, committing after each; a failure or a cancel
-- before the repoint rolls the move back (_move_rollback); a terminated
-- session leaves it for the next CALL or abort_move(). No SET clause (it
-- COMMITs): this holds the loop and its COMMITs, the work is done by
-- functions that pin search_path.
CREATE OR REPLACE PROCEDURE shardid_internal._move_shard(shard integer, to_node text, o shardid.move_options)
    LANGUAGE plpgsql
AS $$
DECLARE
    s        shardid_internal._move_run;
    t_start  timestamptz := pg_catalog.clock_timestamp();
    t_routed timestamptz;
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid.move_shard()',
                                             'once per phase (so that an interruption resumes or rolls back from there)');
    PERFORM shardid_internal._move_lock(shard, 'shardid.move_shard()');
    COMMIT;
    s := shardid_internal._move_start(shard, to_node, o);
    COMMIT;
    PERFORM shardid_internal._move_raise(s);
    IF s.aborting THEN
        CALL shardid_internal._move_rollback(shard);
        s := shardid_internal._move_rolled_back(s, 'resume', to_node);
        COMMIT;
        PERFORM shardid_internal._move_raise(s);
    END IF;
    WHILE s.phase IS NOT NULL LOOP
        s := shardid_internal._move_step(s, o);
        EXIT WHEN s.err IS NOT NULL;
        COMMIT;
        IF s.routed AND t_routed IS NULL THEN
            t_routed := pg_catalog.clock_timestamp();
        END IF;
        EXIT WHEN s.waiting;
    END LOOP;
    IF s.err IS NOT NULL THEN
        COMMIT;
        -- rolled back unless it is repointed (or gone): _move_rollback_start;
        -- a node that failed it is waited for, up to node_timeout
        CALL shardid_internal._move_rollback(shard, o.node_timeout, s.err[1]);
        s := shardid_internal._move_rolled_back(s, 'failure');
        COMMIT;
        PERFORM shardid_internal._move_raise(s);
    END IF;
    PERFORM shardid_internal._move_unlock(shard);
    COMMIT;
    PERFORM shardid_internal._move_report(s.m, t_start, t_routed, s.old, s.steps);
END
$$;

REVOKE ALL ON PROCEDURE shardid_internal._move_shard(integer, text, shardid.move_options) FROM PUBLIC;

COMMENT ON PROCEDURE shardid_internal._move_shard(integer, text, shardid.move_options) IS
    'Router: the loop of one move with its options record (move_shard(), a rebalance''s moves): the shard''s lock, then one step per phase, committing after each; a failure before the repoint rolls it back.';
-- Router: moves one logical shard to another node while it takes writes
-- (docs/moves.md): a row of shardid.shard_moves whose phase commits as it
-- advances, one _move_step() per phase, the nodes driven over dblink. CALL
-- it again after an interruption to resume; a failure or a cancel before
-- the repoint rolls the move back (_move_rollback), a terminated session
-- leaves it for the next CALL or abort_move(); one session per shard
-- (its row in shardid.session_locks, committed first and released before
-- the CALL ends). Its options are one record (shardid.move_options),
-- built and checked once (_move_options) and passed whole to the loop
-- (_move_shard), which the moves of a rebalance run too. No SET clause (it
-- COMMITs): this holds only the CALL.
CREATE OR REPLACE PROCEDURE shardid.move_shard(
    shard integer,
    to_node text,
    drop_old boolean DEFAULT NULL,
    offline boolean DEFAULT false,
    lock_timeout interval DEFAULT NULL,
    cutover_timeout interval DEFAULT NULL,
    catchup_timeout interval DEFAULT NULL,
    node_timeout interval DEFAULT NULL)
    LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid.move_shard()',
                                             'once per phase (so that an interruption resumes or rolls back from there)');
    CALL shardid_internal._move_shard(shard, to_node,
        shardid_internal._move_options(pg_catalog.jsonb_build_object('drop_old', drop_old, 'offline', offline, 'lock_timeout', lock_timeout,
                                                                     'cutover_timeout', cutover_timeout, 'catchup_timeout', catchup_timeout,
                                                                     'node_timeout', node_timeout)));
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
-- too: CALL move_shard() again to finish it. No SET clause (it COMMITs):
-- this holds the calls and their COMMITs, the checks and errors are
-- functions that pin search_path.
CREATE OR REPLACE PROCEDURE shardid.abort_move(shard integer)
    LANGUAGE plpgsql
AS $$
DECLARE
    s shardid_internal._move_run;
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid.abort_move()',
                                             'after each step of the rollback');
    s := shardid_internal._move_abort_start(shard);
    COMMIT;
    PERFORM shardid_internal._move_raise(s);
    CALL shardid_internal._move_rollback(shard);
    s := shardid_internal._move_rolled_back(s, 'abort');
    COMMIT;
    PERFORM shardid_internal._move_raise(s);
END
$$;

REVOKE ALL ON PROCEDURE shardid.abort_move(integer) FROM PUBLIC;

COMMENT ON PROCEDURE shardid.abort_move(integer) IS
    'Router: rolls back a shard move that has not been repointed (source writable first, then subscription, slots, publication, target copy); refused while another session runs the move.';
-- shardid, area rebalance, on the router (router/): rebalancing and
-- draining, in the foreground and in background workers.
--
-- rebalance_plan() says which shards to move so that the nodes hold about
-- the same total shard size (by_size, read from the nodes over dblink by
-- shard_sizes()) or the same number of shards (by_count); the planner
-- itself, _rebalance_moves(), is pure (sizes in, moves out) so tests give
-- it sizes of their own; it is C++ (src/core/rebalance.cpp) behind
-- _plan_moves(). Draining a node before remove_node(): drain_plan() says
-- which moves. One driver makes the moves of both, _rebalance_job_run(),
-- one at a time with move_shard(), a job's row in shardid.rebalance_jobs
-- as its state, one lock (_rebalance_lock()): CALLed in the caller's
-- session by rebalance() and drain_node(), or in the background by a
-- dynamic background worker per job (rebalance_start(),
-- drain_node_start(); registered by the calling backend, no
-- shared_preload_libraries). One scheduler decides what starts
-- (_rebalance_job_step(), serial is one slot): a background job runs each
-- move in a worker of its own (_rebalance_move_run(), rows of
-- shardid.rebalance_job_moves), by default one per pair of disjoint
-- nodes at once, woken when one ends, a failed one retried, a cancelled
-- one rolled back; rebalance_resume() (and the opt-in launcher,
-- src/pg/launcher.cpp) resumes a job whose driver is gone. All of it is for administrators
-- (EXECUTE revoked from PUBLIC): it reads shardid.nodes and connects to
-- the nodes.

-- Refuses a rebalance strategy shardid does not know, or a negative
-- max_moves, before anything reads the placement or reaches a node.
CREATE OR REPLACE FUNCTION shardid_internal._require_rebalance_options(strategy text, max_moves integer) RETURNS void
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

REVOKE ALL ON FUNCTION shardid_internal._require_rebalance_options(text, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._require_rebalance_options(text, integer) IS
    'Internal: raises 22023 for a rebalance strategy other than by_size and by_count, or a negative max_moves.';
-- Refuses parallel and retry options of a rebalance or drain that cannot
-- work (22023, 22004 for NULL), before anything is started. max_parallel
-- NULL: no bound but max_moves_per_node.
CREATE OR REPLACE FUNCTION shardid_internal._require_parallel_options(max_parallel integer, max_moves_per_node integer,
                                                                    move_retries integer, retry_pause interval) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF max_moves_per_node IS NULL OR move_retries IS NULL OR retry_pause IS NULL THEN
        RAISE EXCEPTION 'max_moves_per_node, move_retries and retry_pause must not be NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF max_parallel < 1 OR max_moves_per_node < 1 THEN
        RAISE EXCEPTION 'max_parallel and max_moves_per_node must be 1 or more (they are % and %)', max_parallel, max_moves_per_node
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF move_retries < 0 OR retry_pause < '0 s' THEN
        RAISE EXCEPTION 'move_retries and retry_pause must not be negative (they are % and %)', move_retries, retry_pause
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._require_parallel_options(integer, integer, integer, interval) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._require_parallel_options(integer, integer, integer, interval) IS
    'Internal: raises 22023 for max_parallel or max_moves_per_node under 1, or a negative move_retries or retry_pause (22004 for NULL).';
-- The rebalance planner itself, in C++: src/core/rebalance.hpp says how it
-- chooses, src/pg/rebalance.cpp reads the arrays and raises its refusals.
-- _rebalance_moves() checks the strategy and max_moves, then returns what
-- this returns. closed (parallel to nodes) marks the nodes that take no
-- shard and whose shards all leave; drain_only plans only those moves
-- (drain_plan()).
CREATE OR REPLACE FUNCTION shardid_internal._plan_moves(strategy text, max_moves integer, nodes text[],
                                               shards integer[], shard_nodes text[], shard_bytes bigint[],
                                               pinned integer[], closed boolean[], drain_only boolean)
    RETURNS TABLE (step integer, shard integer, source text, target text, bytes bigint)
    LANGUAGE c IMMUTABLE AS 'MODULE_PATHNAME', 'shardid_plan_moves';

REVOKE ALL ON FUNCTION shardid_internal._plan_moves(text, integer, text[], integer[], text[], bigint[], integer[], boolean[], boolean) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._plan_moves(text, integer, text[], integer[], text[], bigint[], integer[], boolean[], boolean) IS
    'Internal: the rebalance and drain planner of _rebalance_moves(), in C++, after _rebalance_moves() has checked the strategy and max_moves.';
-- The rebalance planner, pure: from the nodes, the node each shard counts
-- on and its size, the moves that even out the nodes' load. It reads no
-- table and reaches no node: rebalance_plan() gathers its input (placement,
-- moves in progress, sizes read from the nodes) and calls it, and the
-- regression tests call it with sizes of their own.
--
-- By size, a node's load is the total bytes of its shards, by count their
-- number. Each step moves one shard from a fuller node to an emptier one
-- where it narrows their gap by at least its own size, the shard nearest
-- half the gap; a shard moves at most once; pinned shards (in a move,
-- frozen, excluded) count where they are but never move. Closed nodes
-- (closed, parallel to nodes: one being drained, one that accepts no
-- shards) receive none, and their shards leave first, largest first, each
-- to the emptiest open node; with drain_only the plan ends there
-- (drain_plan()). The planner is
-- C++, src/core/rebalance.cpp (rebalance.hpp says exactly how it chooses),
-- called through _plan_moves(); this checks the strategy and max_moves the
-- way rebalance_plan() and rebalance() do, then returns its plan.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_moves(strategy text, max_moves integer, nodes text[],
                                                    shards integer[], shard_nodes text[], shard_bytes bigint[],
                                                    pinned integer[] DEFAULT '{}', closed boolean[] DEFAULT NULL,
                                                    drain_only boolean DEFAULT false)
    RETURNS TABLE (step integer, shard integer, source text, target text, bytes bigint)
    LANGUAGE sql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT shardid_internal._require_rebalance_options(strategy, max_moves);
    SELECT p.step, p.shard, p.source, p.target, p.bytes
      FROM shardid_internal._plan_moves(strategy, max_moves, nodes, shards, shard_nodes, shard_bytes, pinned,
                                      closed, drain_only) AS p;
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_moves(text, integer, text[], integer[], text[], bigint[], integer[], boolean[], boolean) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_moves(text, integer, text[], integer[], text[], bigint[], integer[], boolean[], boolean) IS
    'Internal: the rebalance planner without I/O: the moves (step, shard, source, target, bytes) that even out the given nodes'' load by_size or by_count; shards in pinned count but never move; closed nodes receive none and are emptied first (only that with drain_only).';
-- The size source of by_size rebalancing: each placed shard's size on the
-- node that holds it, the sum of pg_total_relation_size() (table, indexes,
-- TOAST) of the tables and materialized views in the shard's schema, read
-- over dblink (contrib) with one query per node that holds shards. A copy
-- being moved in or retired is not counted: only the shards placed on a
-- node, found through that node's shard_registry. A move may repoint a
-- shard and retire its old copy between the read of the placement and
-- the read of the node: a shard the node no longer registers is read
-- again where the placement now puts it (up to three rounds); one still
-- placed there and in no move is the error (55000).
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
    todo    integer[];
    again   integer[];
    round   integer := 0;
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
    WHILE todo IS NULL OR (pg_catalog.cardinality(todo) > 0 AND round < 3) LOOP
        round := round + 1;
        again := '{}';
        FOR n IN
            SELECT nd.node, nd.connstr, pg_catalog.array_agg(p.shard ORDER BY p.shard) AS placed
              FROM shardid.nodes AS nd
              JOIN shardid.shard_placement AS p ON p.node = nd.node
             WHERE todo IS NULL OR p.shard = ANY (todo)
             GROUP BY nd.node, nd.connstr
             ORDER BY nd.node COLLATE "C"
        LOOP
            BEGIN
                EXECUTE pg_catalog.format('SELECT pg_catalog.array_agg(r.shard ORDER BY r.shard), pg_catalog.array_agg(r.bytes ORDER BY r.shard)
                                             FROM %I.dblink($1, $2) AS r(shard integer, bytes bigint)', dblink_schema)
                   INTO got_shard, got_bytes
                  USING shardid_internal._pinned_connstr(n.connstr), pg_catalog.format(node_query, n.placed::text);
            EXCEPTION WHEN OTHERS THEN
                GET STACKED DIAGNOSTICS err_state = RETURNED_SQLSTATE, err_msg = MESSAGE_TEXT, err_detail = PG_EXCEPTION_DETAIL;
                RAISE EXCEPTION 'cannot read the shard sizes of node "%": %', n.node, err_msg
                    USING ERRCODE = err_state, DETAIL = err_detail,
                          HINT = 'The router connects to each node with its connect string in shardid.nodes, as the router''s server user (passwords in its ~/.pgpass).';
            END;
            -- not registered there: moved since (placed elsewhere now, or in a move), or the error
            FOR missing IN SELECT u.sh FROM ROWS FROM (pg_catalog.unnest(got_shard), pg_catalog.unnest(got_bytes)) AS u(sh, b)
                            WHERE u.b IS NULL ORDER BY u.sh LOOP
                IF round < 3 AND (EXISTS (SELECT FROM shardid.shard_placement AS p WHERE p.shard = missing AND p.node <> n.node)
                                  OR EXISTS (SELECT FROM shardid.shard_moves AS m WHERE m.shard = missing)) THEN
                    again := again || missing;
                ELSE
                    RAISE EXCEPTION 'shard % is placed on node "%" but not registered there', missing, n.node
                        USING ERRCODE = 'object_not_in_prerequisite_state',
                              DETAIL = 'Its size cannot be read: the node''s shardid.shard_registry has no such shard.',
                              HINT = 'Fix the placement (shardid.shard_placement) or the node, or rebalance by_count.';
                END IF;
            END LOOP;
            RETURN QUERY SELECT u.sh, n.node, u.b FROM ROWS FROM (pg_catalog.unnest(got_shard), pg_catalog.unnest(got_bytes)) AS u(sh, b)
                          WHERE u.b IS NOT NULL;
        END LOOP;
        todo := again;
    END LOOP;
END
$$;

REVOKE ALL ON FUNCTION shardid.shard_sizes() FROM PUBLIC;

COMMENT ON FUNCTION shardid.shard_sizes() IS
    'Router: each placed shard''s size in bytes on its node (tables with their indexes and TOAST in the shard''s schema), read over dblink; the sizes rebalance_plan(''by_size'') balances.';
-- Router, the planners (_plan()): the planner's view of the placement,
-- read once in one statement: every placed shard of the nodes given
-- (NULL: every node), the node it counts on, its size (by_size, read from
-- the nodes by shard_sizes(); NULL for by_count, which reaches no node)
-- and the shards that count but do not move (pinned: in a move, frozen,
-- in excluded_shards, or going), as the parallel arrays _rebalance_moves()
-- takes. A shard counts where it is going: on the target of its move in
-- progress (on its source while the move is being rolled back), and on
-- the node going_to names for it (a job's move that has started, or
-- waits for its retry, whatever its worker is doing), so that a plan made
-- while moves run never counts one of them twice or sends another shard
-- where one is already going.
CREATE OR REPLACE FUNCTION shardid_internal._plan_placement(strategy text, excluded_shards integer[], nodes text[],
                                                            going_shards integer[], going_to text[],
                                                            OUT placed integer[], OUT counted_on text[], OUT sizes bigint[],
                                                            OUT pinned integer[])
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    size_shard integer[] := '{}';
    size_bytes bigint[] := '{}';
BEGIN
    IF strategy = 'by_size' THEN
        SELECT COALESCE(pg_catalog.array_agg(z.shard), '{}'), COALESCE(pg_catalog.array_agg(z.bytes), '{}')
          INTO size_shard, size_bytes
          FROM shardid.shard_sizes() AS z;
    END IF;
    SELECT COALESCE(pg_catalog.array_agg(p.shard ORDER BY p.shard), '{}'),
           COALESCE(pg_catalog.array_agg(p.counted_on ORDER BY p.shard), '{}'),
           COALESCE(pg_catalog.array_agg(z.bytes ORDER BY p.shard), '{}'),
           COALESCE(pg_catalog.array_agg(p.shard ORDER BY p.shard)
                        FILTER (WHERE p.moving OR p.frozen OR p.shard = ANY (COALESCE(excluded_shards, '{}'))), '{}')
      INTO placed, counted_on, sizes, pinned
      FROM (SELECT x.shard, x.frozen, m.shard IS NOT NULL OR g.shard IS NOT NULL AS moving,
                   CASE WHEN g.shard IS NOT NULL THEN g.node
                        WHEN m.shard IS NULL OR m.phase = 'aborting' THEN x.node
                        ELSE m.target END AS counted_on
              FROM shardid.shard_placement AS x
              LEFT JOIN shardid.shard_moves AS m ON m.shard = x.shard
              LEFT JOIN ROWS FROM (pg_catalog.unnest(COALESCE(going_shards, '{}')), pg_catalog.unnest(COALESCE(going_to, '{}')))
                        AS g(shard, node) ON g.shard = x.shard) AS p
      LEFT JOIN ROWS FROM (pg_catalog.unnest(size_shard), pg_catalog.unnest(size_bytes)) AS z(shard, bytes) ON z.shard = p.shard
     WHERE nodes IS NULL OR p.counted_on = ANY (nodes);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._plan_placement(text, integer[], text[], integer[], text[]) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._plan_placement(text, integer[], text[], integer[], text[]) IS
    'Router, the planners: the placed shards of the given nodes, the node each counts on (the target of its move in progress, or of a job''s move going there), their sizes (by_size) and the pinned ones, read in one statement.';
-- Router: the one body of rebalance_plan(), drain_plan() and the
-- scheduler's plans (_rebalance_job_step()): the planner's input from the
-- router's tables and the nodes (_plan_placement(), one view), then the
-- pure planner (_rebalance_moves(): rebalance_plan() says how it
-- chooses). kind 'rebalance': every node takes part, those that accept
-- no shards closed (they receive none, their shards move off first).
-- kind 'drain': the drained node closed and drain_only, the nodes that
-- accept no shards left out (no target, their shards not planned); 42704
-- for an unknown node, 55000 when there is no other node. going_shards
-- and going_to: a job's moves under way, counted on their targets.
CREATE OR REPLACE FUNCTION shardid_internal._plan(kind text, drain_node text, strategy text, max_moves integer,
                                                  excluded_shards integer[], going_shards integer[] DEFAULT '{}',
                                                  going_to text[] DEFAULT '{}')
    RETURNS TABLE (step integer, shard integer, source text, target text, bytes bigint)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    node_names text[];
    closed     boolean[];
    pl         record;
BEGIN
    PERFORM shardid_internal._require_rebalance_options(strategy, max_moves);
    IF kind = 'drain' THEN
        IF drain_node IS NULL OR NOT EXISTS (SELECT FROM shardid.nodes AS x WHERE x.node = _plan.drain_node) THEN
            RAISE EXCEPTION 'node "%" does not exist', drain_node USING ERRCODE = 'undefined_object';
        END IF;
        IF NOT EXISTS (SELECT FROM shardid.nodes AS x WHERE x.node <> _plan.drain_node) THEN
            RAISE EXCEPTION 'there is no other node to drain node "%" onto', drain_node
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'Add a node first (shardid.add_node()).';
        END IF;
    END IF;
    SELECT COALESCE(pg_catalog.array_agg(n.node ORDER BY n.node COLLATE "C"), '{}'),
           COALESCE(pg_catalog.array_agg(CASE WHEN kind = 'drain' THEN n.node = _plan.drain_node ELSE NOT n.accepts_shards END
                                         ORDER BY n.node COLLATE "C"), '{}')
      INTO node_names, closed
      FROM shardid.nodes AS n
     WHERE kind <> 'drain' OR n.accepts_shards OR n.node = _plan.drain_node;
    pl := shardid_internal._plan_placement(strategy, excluded_shards, CASE WHEN kind = 'drain' THEN node_names END,
                                           going_shards, going_to);
    RETURN QUERY
        SELECT r.step, r.shard, r.source, r.target, r.bytes
          FROM shardid_internal._rebalance_moves(strategy, max_moves, node_names, pl.placed, pl.counted_on, pl.sizes,
                                                 pl.pinned, closed, drain_only => kind = 'drain') AS r;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._plan(text, text, text, integer, integer[], integer[], text[]) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._plan(text, text, text, integer, integer[], integer[], text[]) IS
    'Router: the one body of rebalance_plan(), drain_plan() and a job''s plans: the placement and sizes read in one view (a job''s moves under way counted on their targets), then the pure planner; kind rebalance or drain.';
-- The moves that would even out the nodes, without making any: the
-- placement and the moves in progress from the router's tables, the sizes
-- (by_size) from the nodes through shard_sizes(), the plan from the pure
-- planner _rebalance_moves() (which says how it chooses). Every node of
-- shardid.nodes takes part, also one that holds no shard yet. A shard in a
-- move counts on the node it is going to (on its source while the move is
-- being rolled back) and is not moved; so are frozen shards and
-- excluded_shards. A node that accepts no shards (set_node()) is closed
-- to the planner: it receives none, and its shards move off first.
-- by_count reaches no node and reports no bytes.
CREATE OR REPLACE FUNCTION shardid.rebalance_plan(strategy text DEFAULT 'by_size', max_moves integer DEFAULT NULL,
                                                  excluded_shards integer[] DEFAULT '{}')
    RETURNS TABLE (step integer, shard integer, source text, target text, bytes bigint)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT p.step, p.shard, p.source, p.target, p.bytes
      FROM shardid_internal._plan('rebalance', NULL, strategy, max_moves, excluded_shards) AS p
$$;

REVOKE ALL ON FUNCTION shardid.rebalance_plan(text, integer, integer[]) FROM PUBLIC;

COMMENT ON FUNCTION shardid.rebalance_plan(text, integer, integer[]) IS
    'Router: the moves (step, shard, source, target, bytes) that would even out the nodes'' total shard size (by_size, read from the nodes) or shard count (by_count), at most max_moves; shards in a move, frozen or excluded stay put; none goes to a node that accepts no shards, whose shards move off. Changes nothing.';
-- rebalance() trusts a move only once it is done: after CALL move_shard()
-- returns, its row must be gone and the shard placed on the target. A move
-- that returns unfinished (an offline move waits for a client to copy its
-- rows) or went elsewhere stops the rebalance instead of being counted.
CREATE OR REPLACE FUNCTION shardid_internal._require_move_done(shard integer, target text) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    phase text;
    node  text;
BEGIN
    SELECT m.phase INTO phase FROM shardid.shard_moves AS m WHERE m.shard = _require_move_done.shard;
    IF FOUND THEN
        RAISE EXCEPTION 'the move of shard % to node "%" returned unfinished (phase %)', shard, target, phase
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = pg_catalog.format('CALL shardid.move_shard(%s, %L); to go on with it, or CALL shardid.abort_move(%s); to roll it back, then rebalance again.',
                                           shard, target, shard);
    END IF;
    SELECT p.node INTO node FROM shardid.shard_placement AS p WHERE p.shard = _require_move_done.shard;
    IF node IS DISTINCT FROM target THEN
        RAISE EXCEPTION 'shard % is placed on node "%" after its move to node "%"', shard, COALESCE(node, '(none)'), target
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._require_move_done(integer, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._require_move_done(integer, text) IS
    'Internal, rebalance(): raises 55000 unless the move of a shard is done (no move row left, placed on the target).';
-- Router: the one rebalance lock, which every job of the one driver
-- (_rebalance_job_run(): rebalance() and drain_node() in their session, a
-- background job's start and its worker) goes through, so that they run
-- one at a time: the row 'rebalance' of shardid.session_locks, which
-- only administrators may take (0.2's advisory key hashtext('shardid-
-- rebalance') could be taken by any role, and is read no more). With take,
-- takes it for this session (job: the job this session runs, in the
-- background or in_session); without, only checks that it is free (for
-- rebalance_start() and drain_node_start(), whose worker takes it). Either
-- way refuses (55P03 naming the holder: a background job and its worker,
-- or a session with its role and application) while another live session
-- holds it or another background job is alive (one started a moment ago
-- has not taken it yet; a job in a session holds it from its start).
-- The caller commits at once. Released by _rebalance_unlock(), or free
-- once the holder's session ends.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_lock(take boolean, job bigint DEFAULT NULL) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    j      shardid.rebalance_jobs;
    holder integer;
    who    text;
BEGIN
    SELECT * INTO j FROM shardid.rebalance_jobs AS x
     WHERE x.state IN ('starting', 'running', 'stopping') AND x.job_id IS DISTINCT FROM _rebalance_lock.job
       AND NOT x.in_session
       AND shardid_internal._rebalance_job_alive(x)
     ORDER BY x.job_id LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'another rebalance is running: background % job %', j.kind, j.job_id
            USING ERRCODE = 'lock_not_available',
                  DETAIL = pg_catalog.format('Background %s job %s, started by %s at %s, holds the rebalance lock (its worker: process ID %s).',
                                             j.kind, j.job_id, j.started_by, j.started_at, COALESCE(j.worker_pid::text, 'not started yet')),
                  HINT = 'Wait for it (SELECT * FROM shardid.rebalance_wait();) or stop it (SELECT shardid.rebalance_stop();).';
    END IF;
    IF take THEN
        holder := shardid_internal._session_lock('rebalance');
    ELSE
        SELECT l.pid INTO holder FROM shardid.session_locks AS l
         WHERE l.lock_name = 'rebalance' AND shardid_internal._backend_alive(l.pid, l.backend_start);
    END IF;
    IF holder IS NOT NULL THEN
        SELECT pg_catalog.format('The router session with process ID %s (role %s, application "%s", since %s)%s holds the rebalance lock.',
                                 holder, COALESCE(a.usename::text, '?'), COALESCE(a.application_name, ''), l.taken_at,
                                 CASE WHEN holder = pg_catalog.pg_backend_pid() THEN ', this session,' ELSE '' END)
          INTO who
          FROM shardid.session_locks AS l
          LEFT JOIN pg_stat_activity AS a ON a.pid = l.pid
         WHERE l.lock_name = 'rebalance';
        RAISE EXCEPTION 'another rebalance is running'
            USING ERRCODE = 'lock_not_available',
                  DETAIL = COALESCE(who, pg_catalog.format('The router session with process ID %s holds the rebalance lock.', holder)),
                  HINT = 'Wait for its rebalance() or drain_node() to finish, or cancel it (pg_cancel_backend); one that failed keeps the lock until its session ends, or a rebalance() in it ends.';
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_lock(boolean, bigint) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_lock(boolean, bigint) IS
    'Router: the one rebalance lock of rebalance(), drain_node() and the background job: takes it for this session (take) or checks that it is free, refusing (55P03 naming the holder: a background job or a session) while another live session holds it or another job is alive.';
-- Router: releases the rebalance lock if this session holds it.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_unlock() RETURNS boolean
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT shardid_internal._session_unlock('rebalance')
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_unlock() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_unlock() IS
    'Router: releases the lock rebalance() holds, if this session holds it.';
-- Router: the moves that empty a node, without making any: its shards,
-- largest first (by_size, sizes read from the nodes by shard_sizes()) or
-- highest-numbered first (by_count), each to the node that is then the
-- emptiest (by total size, or by number of shards; ties by node name),
-- never to the drained node. Loads count shards in a move on their target
-- (on their source while being rolled back). Shards of the node in a move
-- or frozen on the router are not planned: drain_node() resumes the
-- first and reports the second. Nodes that accept no shards (set_node())
-- are no target (their shards stay out of the plan). The planner is
-- rebalance_plan()'s (src/core/rebalance.cpp through _rebalance_moves()),
-- with the node closed and drain_only.
CREATE OR REPLACE FUNCTION shardid.drain_plan(node text, strategy text DEFAULT 'by_size', max_moves integer DEFAULT NULL)
    RETURNS TABLE (step integer, shard integer, source text, target text, bytes bigint)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT p.step, p.shard, p.source, p.target, p.bytes
      FROM shardid_internal._plan('drain', node, strategy, max_moves, NULL) AS p
$$;

REVOKE ALL ON FUNCTION shardid.drain_plan(text, text, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid.drain_plan(text, text, integer) IS
    'Router: the moves (step, shard, source, target, bytes) that empty a node: its shards largest first (by_size) or by number (by_count), each to the then emptiest other node that accepts shards; shards in a move or frozen stay. Changes nothing.';
-- Router: every rebalance and drain, one row per job, kept after it ends
-- so that its outcome survives the session that started it and a restart
-- of the server: the background ones (rebalance_start(),
-- drain_node_start(): a worker runs them) and, in_session, the CALLs of
-- rebalance() and drain_node() (their session is the worker). The one
-- driver (_rebalance_job_run()) writes its progress here after every
-- move, in the same transaction as the move's last commit;
-- rebalance_status() reads it. The driver of a background job is alive
-- while the postmaster has its worker registered: its handle (worker_slot,
-- worker_generation) and the server's start (worker_server) are recorded
-- when it is started (_rebalance_worker_alive()). cancel_moves: stopped
-- with rebalance_stop(cancel_move => true). Readable by administrators
-- only: it names the roles that started jobs.
CREATE TABLE shardid.rebalance_jobs (
    job_id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind           text NOT NULL CHECK (kind OPERATOR(pg_catalog.=) ANY (ARRAY['rebalance', 'drain'])),
    drain_node     text,
    options        jsonb NOT NULL,
    state          text NOT NULL
                   CHECK (state OPERATOR(pg_catalog.=) ANY (ARRAY['starting', 'running', 'stopping', 'finished', 'stopped', 'failed', 'interrupted'])),
    moves_done     integer NOT NULL DEFAULT 0,
    moves_planned  integer,
    moved          integer[] NOT NULL DEFAULT '{}',
    current_shard  integer,
    current_source text,
    current_target text,
    last_error     text,
    worker_pid     integer,
    worker_start   timestamptz,
    started_by     name NOT NULL DEFAULT CURRENT_USER,
    started_at     timestamptz NOT NULL DEFAULT pg_catalog.now(),
    updated_at     timestamptz NOT NULL DEFAULT pg_catalog.now(),
    finished_at    timestamptz,
    in_session     boolean NOT NULL DEFAULT false,
    worker_slot       integer,
    worker_generation bigint,
    worker_server     timestamptz,
    cancel_moves      boolean NOT NULL DEFAULT false
);

REVOKE ALL ON shardid.rebalance_jobs FROM PUBLIC;

COMMENT ON TABLE shardid.rebalance_jobs IS
    'Router: rebalances and drains, one row per job, in the background (rebalance_start(), drain_node_start()) or in_session (rebalance(), drain_node()): options, state, moves done and planned, the current move, the last error, the driver (process, handle), times, whether its moves are cancelled. Read through rebalance_status(); administrators only.';
-- Router: the moves of a job, one row per shard, written by the one
-- scheduler (_rebalance_job_step()) and the move's worker
-- (_rebalance_move_run(); in a background job a worker of its own, in
-- rebalance() and drain_node() their session): what it does (move, resume
-- a move left in progress, abort one being rolled back), its state
-- (starting, running, done; error: its last try failed or its worker
-- ended without a word, and the scheduler retries it after retry_pause
-- (retrying, retry_at) or gives up: failed, or cancelled by
-- rebalance_stop(cancel_move => true)), tries, resumes (its worker died
-- without a word, a restart of the router say, and the move was resumed
-- from its phase, not counted as a try), its worker (process, and
-- its handle as in shardid.rebalance_jobs), the last error. A move given
-- up that left its move in progress is first rolled back (action abort;
-- resume when it was repointed) by a worker, its outcome (failed,
-- cancelled) recorded for when that ends. rebalance_status() shows those
-- in flight and those that failed. Administrators only, as
-- shardid.rebalance_jobs.
CREATE TABLE shardid.rebalance_job_moves (
    job_id       bigint NOT NULL REFERENCES shardid.rebalance_jobs ON DELETE CASCADE,
    shard        integer NOT NULL,
    action       text NOT NULL CHECK (action OPERATOR(pg_catalog.=) ANY (ARRAY['move', 'resume', 'abort'])),
    source       text,
    target       text,
    state        text NOT NULL
                 CHECK (state OPERATOR(pg_catalog.=) ANY (ARRAY['starting', 'running', 'done', 'error', 'retrying', 'failed', 'cancelled'])),
    tries        integer NOT NULL DEFAULT 1,
    resumes      integer NOT NULL DEFAULT 0,
    retry_at     timestamptz,
    worker_pid   integer,
    worker_start timestamptz,
    worker_slot       integer,
    worker_generation bigint,
    worker_server     timestamptz,
    outcome      text CHECK (outcome OPERATOR(pg_catalog.=) ANY (ARRAY['failed', 'cancelled'])),
    last_error   text,
    started_at   timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
    updated_at   timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
    CONSTRAINT rebalance_job_moves_pkey PRIMARY KEY (job_id, shard)
);

REVOKE ALL ON shardid.rebalance_job_moves FROM PUBLIC;

COMMENT ON TABLE shardid.rebalance_job_moves IS
    'Router: the moves of a rebalance or drain job, one row per shard: action, state (starting, running, done, error, retrying, failed, cancelled), tries, worker (process and handle), the outcome of a move given up while it is rolled back, last error. Administrators only.';
-- Router: starts a background worker (src/pg/rebalance_worker.cpp) for a
-- row the caller's transaction has written: a job's driver (shard NULL;
-- restarted by the postmaster if it dies) or one of its moves (never
-- restarted), as role (NULL: the caller; another role only for a
-- superuser, 42501). Returns its process ID and its handle (slot and
-- generation in the postmaster's worker array, the server's start) for
-- _rebalance_worker_alive(). 53400 naming max_worker_processes when no
-- slot is free.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_launch(job_id bigint, shard integer, role oid,
                                                              OUT pid integer, OUT slot integer, OUT generation bigint,
                                                              OUT server timestamptz)
    LANGUAGE c
    AS 'MODULE_PATHNAME', 'shardid_rebalance_launch';

REVOKE ALL ON FUNCTION shardid_internal._rebalance_launch(bigint, integer, oid) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_launch(bigint, integer, oid) IS
    'Router: starts the background worker of a rebalance job''s driver (shard NULL) or of one of its moves, as a role (a superuser may name another); returns its process ID and handle (slot, generation, server start).';
-- Router: whether the background worker of a handle recorded by
-- _rebalance_launch() is still registered with this server's postmaster:
-- running, or waiting to be started again (a job's driver that died). A
-- worker that ended for good is not, nor one of another server's life (a
-- restart, or a promoted standby, whose postmaster never started it).
-- Liveness comes from the postmaster's own record, never from comparing
-- start times (src/pg/rebalance_worker.cpp). NULL when the handle is.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_worker_alive(slot integer, generation bigint, server timestamptz)
    RETURNS boolean
    LANGUAGE c STRICT VOLATILE
    AS 'MODULE_PATHNAME', 'shardid_rebalance_worker_alive';

REVOKE ALL ON FUNCTION shardid_internal._rebalance_worker_alive(integer, bigint, timestamptz) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_worker_alive(integer, bigint, timestamptz) IS
    'Router: whether the background worker of a recorded handle is registered with this server''s postmaster (running, or to be restarted).';
-- Router, a job's driver (_rebalance_job_run()) between two decisions:
-- waits on its latch until a move worker it started ends (the postmaster
-- tells the process that registered a worker), rebalance_stop() wakes it
-- (_rebalance_wake()), or seconds pass (a retry falls due; a move whose
-- worker an earlier driver started). Interruptible.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_sleep(seconds double precision) RETURNS void
    LANGUAGE c STRICT
    AS 'MODULE_PATHNAME', 'shardid_rebalance_sleep';

REVOKE ALL ON FUNCTION shardid_internal._rebalance_sleep(double precision) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_sleep(double precision) IS
    'Router, a job''s driver: waits until a move worker it started ends, it is woken, or the seconds pass.';
-- Router: wakes a job's driver (sets the latch of the backend with that
-- process ID), so that it decides at once: rebalance_stop(), and a move
-- worker that ends (src/pg/rebalance_worker.cpp). False when no backend
-- has that process ID.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_wake(pid integer) RETURNS boolean
    LANGUAGE c STRICT
    AS 'MODULE_PATHNAME', 'shardid_rebalance_wake';

REVOKE ALL ON FUNCTION shardid_internal._rebalance_wake(integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_wake(integer) IS
    'Router: wakes a rebalance job''s driver (sets its latch); false when no backend has that process ID.';
-- Router: whether a job's driver is still there, or will be. A job run in
-- a session (rebalance(), drain_node()): that session (its process with
-- the start time it recorded: a process ID is reused), running a
-- statement (a CALL that failed leaves it idle: the job is over,
-- interrupted), and not this session (which is not running it if it
-- asks). A background job: its worker, registered with this server's
-- postmaster (_rebalance_worker_alive(): running, or to be restarted
-- after it died), or the process that recorded itself as the driver (a
-- worker the postmaster restarted after a crash of the server has a new
-- handle). Never by comparing start times: after a restart, or on a
-- promoted standby, the postmaster has no such worker and the job is
-- interrupted until the launcher, rebalance_resume() or rebalance_start()
-- resumes it.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_job_alive(j shardid.rebalance_jobs) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT j.state IN ('starting', 'running', 'stopping')
       AND CASE WHEN j.in_session
                THEN EXISTS (SELECT FROM pg_stat_activity AS a
                              WHERE a.pid = j.worker_pid AND a.pid <> pg_catalog.pg_backend_pid()
                                AND (a.backend_start = j.worker_start OR a.backend_start IS NULL)
                                AND a.state IS DISTINCT FROM 'idle' AND a.state IS DISTINCT FROM 'idle in transaction (aborted)')
                ELSE COALESCE(shardid_internal._rebalance_worker_alive(j.worker_slot, j.worker_generation, j.worker_server), false)
                     OR (j.worker_start IS NOT NULL AND shardid_internal._backend_alive(j.worker_pid, j.worker_start))
           END
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_job_alive(shardid.rebalance_jobs) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_job_alive(shardid.rebalance_jobs) IS
    'Router: whether a rebalance job''s driver is there or will be: its session running a statement (in_session), or its background worker registered with this server''s postmaster (or the process it recorded).';
-- Router: the one options record of a rebalance or drain job, built and
-- checked once from the entry points' named parameters (rebalance(),
-- drain_node(), rebalance_start(), drain_node_start()) and stored whole in
-- the job's row (shardid.rebalance_jobs.options), which the scheduler and
-- the moves' workers read: the strategy, max_moves and excluded_shards
-- (_require_rebalance_options()), the parallel options
-- (_require_parallel_options()), and the move options with their defaults
-- (_move_options(), the record shardid.move_options as jsonb, from which
-- each move reads it back whole). A drain refuses an unknown node (42704). Pinned, so
-- that the procedures that call it hold no operator of their own.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_options(kind text, drain_node text, strategy text, max_moves integer,
                                                               excluded_shards integer[], drop_old boolean,
                                                               lock_timeout interval, cutover_timeout interval,
                                                               catchup_timeout interval, node_timeout interval,
                                                               max_parallel integer, max_moves_per_node integer,
                                                               move_retries integer, retry_pause interval)
    RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM shardid_internal._require_rebalance_options(strategy, max_moves);
    PERFORM shardid_internal._require_parallel_options(max_parallel, max_moves_per_node, move_retries, retry_pause);
    IF kind = 'drain' AND (drain_node IS NULL OR NOT EXISTS (SELECT FROM shardid.nodes AS x WHERE x.node = _rebalance_options.drain_node)) THEN
        RAISE EXCEPTION 'node "%" does not exist', drain_node USING ERRCODE = 'undefined_object';
    END IF;
    RETURN pg_catalog.jsonb_build_object('strategy', strategy, 'max_moves', max_moves,
                                         'excluded_shards', COALESCE(excluded_shards, '{}'),
                                         'max_parallel', max_parallel, 'max_moves_per_node', max_moves_per_node,
                                         'move_retries', move_retries, 'retry_pause', retry_pause)
           || pg_catalog.to_jsonb(shardid_internal._move_options(pg_catalog.jsonb_build_object(
                  'drop_old', drop_old, 'lock_timeout', lock_timeout, 'cutover_timeout', cutover_timeout,
                  'catchup_timeout', catchup_timeout, 'node_timeout', node_timeout)));
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_options(text, text, text, integer, integer[], boolean, interval, interval, interval, interval, integer, integer, integer, interval) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_options(text, text, text, integer, integer[], boolean, interval, interval, interval, interval, integer, integer, integer, interval) IS
    'Router: the one options record of a rebalance or drain job, built and checked once from the entry points'' parameters (strategy, max_moves, excluded_shards, parallel and retry options, move options with their defaults); 42704 for a drain of an unknown node.';
-- Router: the start of every rebalance and drain, in the background
-- (rebalance_start(), drain_node_start()) or in this session (rebalance(),
-- drain_node(), in_session): marks a job whose worker is gone (a restart
-- of the server, a failed CALL) interrupted, with a NOTICE for a
-- background one (this job resumes its work); inserts the job's row. In
-- the background it refuses while another job runs, or while a session
-- holds the rebalance lock (_rebalance_lock(): 55P03 naming it), and
-- starts the worker (its handle recorded: _rebalance_job_alive()), which
-- waits for this transaction to commit; in a
-- session the caller goes on with CALL _rebalance_job_run(), whose start
-- takes the lock (the same refusals) before anything commits.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_job_create(kind text, drain_node text, options jsonb,
                                                                  in_session boolean DEFAULT false) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    j      shardid.rebalance_jobs;
    id     bigint;
    w      record;
BEGIN
    LOCK TABLE shardid.rebalance_jobs IN SHARE ROW EXCLUSIVE MODE;
    FOR j IN SELECT * FROM shardid.rebalance_jobs AS x WHERE x.state IN ('starting', 'running', 'stopping') ORDER BY x.job_id LOOP
        IF shardid_internal._rebalance_job_alive(j) THEN
            CONTINUE WHEN j.in_session OR in_session;
            RAISE EXCEPTION 'background rebalance job % is running', j.job_id
                USING ERRCODE = 'lock_not_available',
                      DETAIL = pg_catalog.format('Its worker has process ID %s.', j.worker_pid),
                      HINT = 'Wait for it (SELECT * FROM shardid.rebalance_wait();) or stop it (SELECT shardid.rebalance_stop();).';
        END IF;
        UPDATE shardid.rebalance_jobs AS x SET state = 'interrupted', finished_at = pg_catalog.now(), updated_at = pg_catalog.now()
         WHERE x.job_id = j.job_id;
        IF NOT j.in_session THEN
            RAISE NOTICE 'background rebalance job % was interrupted (its worker is gone: a restart?); this job resumes the work', j.job_id;
        END IF;
    END LOOP;
    IF in_session THEN
        INSERT INTO shardid.rebalance_jobs (kind, drain_node, options, state, in_session)
        VALUES (kind, drain_node, options, 'starting', true)
        RETURNING job_id INTO id;
        RETURN id;
    END IF;
    -- the lock rebalance() and drain_node() hold: the worker takes it
    PERFORM shardid_internal._rebalance_lock(false);
    INSERT INTO shardid.rebalance_jobs (kind, drain_node, options, state)
    VALUES (kind, drain_node, options, 'starting')
    RETURNING job_id INTO id;
    w := shardid_internal._rebalance_launch(id, NULL, NULL);
    UPDATE shardid.rebalance_jobs AS x
       SET worker_pid = w.pid, worker_slot = w.slot, worker_generation = w.generation, worker_server = w.server
     WHERE x.job_id = id;
    RETURN id;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_job_create(text, text, jsonb, boolean) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_job_create(text, text, jsonb, boolean) IS
    'Router: inserts a rebalance or drain job, in the background (starts its worker, refusing with 55P03 while another job or rebalance runs) or in this session; marks jobs whose worker is gone interrupted.';
-- Router, the driver's start (_rebalance_job_run()), in the session that
-- runs the job: rebalance() or drain_node() in_session, or the background
-- worker (again each time the postmaster restarts a worker that died).
-- Whether the job is still to run: a job that has ended (finished,
-- stopped, failed) or was marked interrupted (a new job resumes its work)
-- is not: false, and a worker exits for good. A drain refuses an unknown
-- node, no other node, or a move in progress to the node (it would land a
-- shard there), 42704 or 55000. Then takes the rebalance lock
-- (_rebalance_lock(): 55P03 naming its holder), closes a drained node to
-- new shards (accepts_shards false, kept after the drain: set_node()
-- opens it again), records the session that runs the job (process ID and
-- start time) and turns it to running (stopping stays stopping).
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_job_begin(job_id bigint) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    j shardid.rebalance_jobs;
    m shardid.shard_moves;
BEGIN
    SELECT * INTO j FROM shardid.rebalance_jobs AS x WHERE x.job_id = _rebalance_job_begin.job_id FOR UPDATE;
    IF NOT FOUND OR j.state NOT IN ('starting', 'running', 'stopping') THEN
        RETURN false;
    END IF;
    IF j.state <> 'starting' AND NOT j.in_session THEN
        RAISE LOG 'shardid rebalance job %: its worker was restarted; it resumes the job', j.job_id;
    END IF;
    IF j.kind = 'drain' THEN
        IF NOT EXISTS (SELECT FROM shardid.nodes AS x WHERE x.node = j.drain_node) THEN
            RAISE EXCEPTION 'node "%" does not exist', j.drain_node USING ERRCODE = 'undefined_object';
        END IF;
        IF NOT EXISTS (SELECT FROM shardid.nodes AS x WHERE x.node <> j.drain_node) THEN
            RAISE EXCEPTION 'there is no other node to drain node "%" onto', j.drain_node
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'Add a node first (shardid.add_node()).';
        END IF;
        SELECT * INTO m FROM shardid.shard_moves AS x WHERE x.target = j.drain_node AND x.phase <> 'aborting' ORDER BY x.shard LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION 'shard % is being moved to node "%" (phase %)', m.shard, j.drain_node, m.phase
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = pg_catalog.format('Finish it (CALL shardid.move_shard(%s, %L);) or roll it back (CALL shardid.abort_move(%s);) first.',
                                               m.shard, j.drain_node, m.shard);
        END IF;
    END IF;
    PERFORM shardid_internal._rebalance_lock(true, j.job_id);
    IF j.kind = 'drain' THEN
        UPDATE shardid.nodes AS x SET accepts_shards = false WHERE x.node = j.drain_node AND x.accepts_shards;
    END IF;
    UPDATE shardid.rebalance_jobs AS x
       SET state = CASE WHEN x.state = 'stopping' THEN 'stopping' ELSE 'running' END,
           worker_pid = pg_backend_pid(),
           worker_start = (SELECT a.backend_start FROM pg_stat_activity AS a WHERE a.pid = pg_backend_pid()),
           updated_at = pg_catalog.clock_timestamp()
     WHERE x.job_id = j.job_id;
    RETURN true;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_job_begin(bigint) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_job_begin(bigint) IS
    'Router, the rebalance driver''s start, in the session that runs the job: false for a job that has ended or was interrupted; refuses a drain of an unknown node, with no other node or a move to it; takes the rebalance lock, sets a drained node''s accepts_shards false, records the session and turns the job to running.';
-- Router, the rebalance scheduler (_rebalance_job_step()): an offline
-- move left in progress that is not being rolled back stops the run
-- (55000), since its rows come from a client; the hint says how to
-- finish it or roll it back.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_refuse_offline(m shardid.shard_moves) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF m.mode = 'offline' AND m.phase <> 'aborting' THEN
        RAISE EXCEPTION 'the offline move of shard % to node "%" is in progress (phase %)', m.shard, m.target, m.phase
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'An offline move copies the shard''s rows from a client; a rebalance or a drain cannot finish it.',
                  HINT = pg_catalog.format('Finish it with bin/shardid-move-shard --shard %s --to %s --offline, or roll it back with CALL shardid.abort_move(%s);',
                                           m.shard, m.target, m.shard);
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_refuse_offline(shardid.shard_moves) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_refuse_offline(shardid.shard_moves) IS
    'Router, the rebalance scheduler: raises 55000 for an offline move left in progress that is not being rolled back (a rebalance or a drain cannot finish it), with the hint that does.';
-- Router, the driver's end (_rebalance_job_run()): the job finished
-- (balanced, drained or max_moves, with its NOTICE) or stopped
-- (rebalance_stop()); releases the rebalance lock. A job with moves that
-- failed after their retries (_rebalance_job_step()) fails, listing them
-- with their last errors; a drain that leaves
-- shards on its node (frozen on the router, or in a move) fails: the
-- error (55000 naming them) is recorded in the job's row and returned, for
-- the driver to raise once this has committed (the lock released).
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_job_end(job_id bigint) RETURNS text[]
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    j           shardid.rebalance_jobs;
    o           jsonb;
    left_shards text;
    err         text[];
BEGIN
    SELECT * INTO j FROM shardid.rebalance_jobs AS x WHERE x.job_id = _rebalance_job_end.job_id;
    o := j.options;
    IF j.state = 'stopping' THEN
        RAISE NOTICE '%: stopped (moves made: %)', CASE WHEN j.kind = 'drain' THEN 'drain_node' ELSE 'rebalance' END, j.moves_done;
    ELSIF EXISTS (SELECT FROM shardid.rebalance_job_moves AS x WHERE x.job_id = j.job_id AND x.state = 'failed') THEN
        SELECT ARRAY['55000',
                     pg_catalog.format('%s: %s move(s) failed after their retries: %s (moves made: %s)',
                                       CASE WHEN j.kind = 'drain' THEN 'drain_node' ELSE 'rebalance' END, pg_catalog.count(*),
                                       pg_catalog.string_agg(pg_catalog.format('shard %s to node "%s"', x.shard, x.target), ', ' ORDER BY x.shard),
                                       j.moves_done),
                     pg_catalog.string_agg(pg_catalog.format('shard %s (%s tries): %s', x.shard, x.tries, x.last_error), '; ' ORDER BY x.shard),
                     'The other moves were made. Fix the cause and start the rebalance or drain again: it plans those shards anew (check_cluster() names a move left in progress).']
          INTO err
          FROM shardid.rebalance_job_moves AS x WHERE x.job_id = j.job_id AND x.state = 'failed';
    ELSIF j.kind = 'drain' THEN
        SELECT pg_catalog.string_agg(p.shard::text, ', ' ORDER BY p.shard) INTO left_shards
          FROM shardid.shard_placement AS p WHERE p.node = j.drain_node;
        IF left_shards IS NOT NULL THEN
            err := ARRAY['55000',
                         pg_catalog.format('node "%s" still holds shards %s (moves made: %s)', j.drain_node, left_shards, j.moves_done),
                         'They are frozen on the router (freeze_shard()) or in a move.',
                         'unfreeze_shard() them or finish their moves, then CALL shardid.drain_node() again.'];
        ELSE
            RAISE NOTICE 'drain_node: node "%" holds no shard (moves made: %); SELECT shardid.remove_node(%); removes it',
                j.drain_node, j.moves_done, pg_catalog.quote_literal(j.drain_node);
        END IF;
    ELSIF (o->>'max_moves')::integer IS NOT NULL AND j.moves_done >= (o->>'max_moves')::integer THEN
        RAISE NOTICE 'rebalance: stopped at max_moves (moves made: %): CALL rebalance() again for more', j.moves_done;
    ELSIF j.moves_done = 0 THEN
        RAISE NOTICE 'rebalance: balanced: nothing to move';
    ELSE
        RAISE NOTICE 'rebalance: balanced (moves made: %)', j.moves_done;
    END IF;
    PERFORM shardid_internal._rebalance_unlock();
    UPDATE shardid.rebalance_jobs AS x
       SET state = CASE WHEN err IS NOT NULL THEN 'failed' WHEN x.state = 'stopping' THEN 'stopped' ELSE 'finished' END,
           last_error = CASE WHEN err IS NOT NULL THEN err[2] ELSE x.last_error END,
           current_shard = NULL, current_source = NULL, current_target = NULL,
           finished_at = pg_catalog.clock_timestamp(), updated_at = pg_catalog.clock_timestamp()
     WHERE x.job_id = _rebalance_job_end.job_id;
    RETURN err;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_job_end(bigint) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_job_end(bigint) IS
    'Router, the rebalance driver''s end: marks the job finished (with its NOTICE), stopped, or failed (moves that failed after their retries, or a drain that leaves shards: the error returned, to be raised after the commit), and releases the rebalance lock.';
-- Router, in the job's worker after an error ended its CALL: records it.
-- A job being stopped whose move was cancelled (rebalance_stop(cancel_move
-- => true)) is stopped, not failed. The worker then exits, releasing the
-- rebalance lock with its session.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_job_failed(job_id bigint, error text) RETURNS void
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    UPDATE shardid.rebalance_jobs AS j
       SET state = CASE WHEN j.state = 'stopping' THEN 'stopped' ELSE 'failed' END,
           last_error = error,
           finished_at = pg_catalog.clock_timestamp(), updated_at = pg_catalog.clock_timestamp()
     WHERE j.job_id = _rebalance_job_failed.job_id
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_job_failed(bigint, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_job_failed(bigint, text) IS
    'Router, background rebalance worker: records the error that ended a job (failed, or stopped when it was being stopped).';
-- Router, the scheduler (_rebalance_job_step()): whether a move of shard
-- from source to target must wait because one of its two nodes is in
-- per_node moves already, as source or target, but for shard's own: the
-- job's moves under way (starting, running) and every other move in
-- progress (shardid.shard_moves, whoever drives it). A move's own row in
-- shardid.shard_moves (its worker died in it and it waits for its retry
-- or rollback) never blocks that move. One check for the three kinds of
-- move the scheduler starts (retries, moves left in progress, the plan's).
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_node_busy(job_id bigint, source text, target text, shard integer,
                                                                 per_node integer) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT pg_catalog.max(b.moves) >= _rebalance_node_busy.per_node
      FROM (SELECT n.node,
                   (SELECT pg_catalog.count(*)::integer FROM shardid.rebalance_job_moves AS x
                     WHERE x.job_id = _rebalance_node_busy.job_id AND x.state IN ('starting', 'running')
                       AND x.shard <> _rebalance_node_busy.shard AND n.node IN (x.source, x.target))
                   + (SELECT pg_catalog.count(*)::integer FROM shardid.shard_moves AS m
                       WHERE n.node IN (m.source, m.target) AND m.shard <> _rebalance_node_busy.shard
                         AND NOT EXISTS (SELECT FROM shardid.rebalance_job_moves AS x
                                          WHERE x.job_id = _rebalance_node_busy.job_id AND x.shard = m.shard
                                            AND x.state IN ('starting', 'running'))) AS moves
              FROM (VALUES (_rebalance_node_busy.source), (_rebalance_node_busy.target)) AS n(node)) AS b
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_node_busy(bigint, text, text, integer, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_node_busy(bigint, text, text, integer, integer) IS
    'Router, the rebalance scheduler: whether a move must wait because its source or target is in per_node moves at once already (the job''s under way and every other move in progress), the shard''s own move not counted.';
-- Router, the scheduler (_rebalance_job_step()): starts one move of a job:
-- its row of shardid.rebalance_job_moves turns starting (a new row, or a
-- retry: tries given, the last error kept; outcome: the move was given up
-- and this rolls back what it left), and a background job starts its
-- worker (_rebalance_launch(), as the job's role, its handle recorded;
-- the worker waits for this transaction to commit). A job in a session
-- runs the move itself. Returns whether it started: when no background
-- worker slot is free (max_worker_processes) and other moves of the job
-- are under way, nothing is written and the move waits for a later
-- decision; with none under way the job cannot go on (53400).
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_move_start(j shardid.rebalance_jobs, shard integer, action text,
                                                                  source text, target text, tries integer, outcome text)
    RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    w record;
BEGIN
    INSERT INTO shardid.rebalance_job_moves AS x (job_id, shard, action, source, target, state, tries, outcome)
    VALUES (j.job_id, shard, action, source, target, 'starting', tries, outcome)
    ON CONFLICT ON CONSTRAINT rebalance_job_moves_pkey DO UPDATE
       SET action = excluded.action, source = excluded.source, target = excluded.target, state = 'starting',
           tries = excluded.tries, outcome = excluded.outcome, retry_at = NULL, worker_pid = NULL, worker_start = NULL,
           worker_slot = NULL, worker_generation = NULL, worker_server = NULL,
           started_at = CASE WHEN excluded.tries = 1 THEN excluded.started_at ELSE x.started_at END,
           last_error = CASE WHEN excluded.tries = 1 AND excluded.outcome IS NULL THEN NULL ELSE x.last_error END,
           updated_at = excluded.updated_at;
    IF j.in_session THEN
        RETURN true;
    END IF;
    BEGIN
        w := shardid_internal._rebalance_launch(j.job_id, shard,
                                                (SELECT r.oid FROM pg_catalog.pg_roles AS r WHERE r.rolname = j.started_by));
    EXCEPTION WHEN configuration_limit_exceeded THEN
        IF EXISTS (SELECT FROM shardid.rebalance_job_moves AS x
                    WHERE x.job_id = j.job_id AND x.shard <> _rebalance_move_start.shard AND x.state IN ('starting', 'running')) THEN
            RAISE EXCEPTION USING ERRCODE = 'SDW01';
        END IF;
        RAISE;
    END;
    UPDATE shardid.rebalance_job_moves AS x
       SET worker_pid = w.pid, worker_slot = w.slot, worker_generation = w.generation, worker_server = w.server
     WHERE x.job_id = j.job_id AND x.shard = _rebalance_move_start.shard;
    RETURN true;
EXCEPTION WHEN SQLSTATE 'SDW01' THEN
    RETURN false;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_move_start(shardid.rebalance_jobs, integer, text, text, text, integer, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_move_start(shardid.rebalance_jobs, integer, text, text, text, integer, text) IS
    'Router, the rebalance scheduler: starts one move of a job (its row starting; in a background job its worker, handle recorded); returns false when no worker slot is free while others of the job run.';
-- Router, in a move's worker (_rebalance_move_run(): a background worker,
-- or the session of rebalance() and drain_node()), first: records the
-- worker (process, start) in the move's row and turns it to running;
-- returns what to do (abort: roll back the shard's move in progress first,
-- for action 'abort' whatever its phase but repointed, else only one being
-- rolled back; then, but for action 'abort', the move to target) with the
-- job's move options, read back whole (_move_options: the record
-- shardid.move_options; the job's other options ignored). No row when the
-- move is not to run (its row is not starting).
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_move_begin(job_id bigint, shard integer)
    RETURNS TABLE (action text, target text, abort boolean, options shardid.move_options)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r shardid.rebalance_job_moves;
    o jsonb;
BEGIN
    SELECT * INTO r FROM shardid.rebalance_job_moves AS x
     WHERE x.job_id = _rebalance_move_begin.job_id AND x.shard = _rebalance_move_begin.shard FOR UPDATE;
    IF NOT FOUND OR r.state <> 'starting' THEN
        RETURN;
    END IF;
    UPDATE shardid.rebalance_job_moves AS x
       SET state = 'running', worker_pid = pg_catalog.pg_backend_pid(),
           worker_start = (SELECT a.backend_start FROM pg_stat_activity AS a WHERE a.pid = pg_catalog.pg_backend_pid()),
           updated_at = pg_catalog.clock_timestamp()
     WHERE x.job_id = r.job_id AND x.shard = r.shard;
    SELECT j.options INTO o FROM shardid.rebalance_jobs AS j WHERE j.job_id = r.job_id;
    action := r.action;
    target := r.target;
    abort := EXISTS (SELECT FROM shardid.shard_moves AS m
                      WHERE m.shard = r.shard
                        AND CASE WHEN r.action = 'abort' THEN m.phase <> 'repointed' ELSE m.phase = 'aborting' END);
    options := shardid_internal._move_options(o);
    RETURN NEXT;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_move_begin(bigint, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_move_begin(bigint, integer) IS
    'Router, a rebalance move''s worker: records the worker and turns the move running; what to do (roll back first, then move) with the job''s move options; none when the move is not to run.';
-- Router, in a move's worker (_rebalance_move_run()), once its CALLs have
-- returned: a move (or a resumed one) must be done (_require_move_done(),
-- 55000 otherwise: the worker records it as the move's error), then it
-- counts in the job's row and the move's row is done. A rollback counts
-- for nothing: done, or, for a move given up (outcome), failed or
-- cancelled.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_move_done(job_id bigint, shard integer) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r shardid.rebalance_job_moves;
BEGIN
    SELECT * INTO r FROM shardid.rebalance_job_moves AS x
     WHERE x.job_id = _rebalance_move_done.job_id AND x.shard = _rebalance_move_done.shard;
    IF r.action <> 'abort' THEN
        PERFORM shardid_internal._require_move_done(r.shard, r.target);
        UPDATE shardid.rebalance_jobs AS j
           SET moves_done = j.moves_done + 1, moved = j.moved || r.shard, updated_at = pg_catalog.clock_timestamp()
         WHERE j.job_id = r.job_id;
    END IF;
    UPDATE shardid.rebalance_job_moves AS x
       SET state = CASE WHEN r.action = 'abort' AND r.outcome IS NOT NULL THEN r.outcome ELSE 'done' END,
           updated_at = pg_catalog.clock_timestamp()
     WHERE x.job_id = r.job_id AND x.shard = r.shard;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_move_done(bigint, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_move_done(bigint, integer) IS
    'Router, a rebalance move''s worker: checks that the move is done (55000 otherwise) and counts it in the job''s row; the move''s row is done.';
-- Router, in a move's worker after an error ended its CALL: records it in
-- the move's row (error); the driver retries the move or gives up.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_move_failed(job_id bigint, shard integer, error text) RETURNS void
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    UPDATE shardid.rebalance_job_moves AS x
       SET state = 'error', last_error = error, updated_at = pg_catalog.clock_timestamp()
     WHERE x.job_id = _rebalance_move_failed.job_id AND x.shard = _rebalance_move_failed.shard
       AND x.state IN ('starting', 'running')
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_move_failed(bigint, integer, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_move_failed(bigint, integer, text) IS
    'Router, a rebalance move''s worker: records the error that ended its move; the driver retries it or gives up.';
-- Router: one move of a job, run by its own background worker
-- (src/pg/rebalance_worker.cpp, at top level) so that moves whose nodes
-- are disjoint run at the same time, or by the session of rebalance() and
-- drain_node() itself: _rebalance_move_begin() says what to do, then
-- abort_move() (a move to roll back) and the move's loop with the job's
-- move options whole (_move_shard()), and
-- _rebalance_move_done() counts it. An error ends the CALL; a worker
-- records it (_rebalance_move_failed()), a session's CALL fails with it.
-- No SET search_path (PostgreSQL refuses COMMIT in a procedure that has
-- one): this holds the CALLs and COMMITs; the functions it calls pin it.
CREATE OR REPLACE PROCEDURE shardid_internal._rebalance_move_run(job_id bigint, shard integer)
    LANGUAGE plpgsql
AS $$
DECLARE
    step record;
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid_internal._rebalance_move_run()',
                                             'once per phase of the move',
                                             'Start a background rebalance with shardid.rebalance_start().');
    SELECT b.* INTO step FROM shardid_internal._rebalance_move_begin(job_id, shard) AS b;
    COMMIT;
    IF step.action IS NULL THEN
        RETURN;
    END IF;
    IF step.abort THEN
        CALL shardid.abort_move(shard);
    END IF;
    IF step.action OPERATOR(pg_catalog.<>) 'abort' THEN
        CALL shardid_internal._move_shard(shard, step.target, step.options);
    END IF;
    PERFORM shardid_internal._rebalance_move_done(job_id, shard);
    COMMIT;
END
$$;

REVOKE ALL ON PROCEDURE shardid_internal._rebalance_move_run(bigint, integer) FROM PUBLIC;

COMMENT ON PROCEDURE shardid_internal._rebalance_move_run(bigint, integer) IS
    'Router: one move of a rebalance job in a background worker of its own (in parallel with others): rolls back a move being rolled back, then move_shard(), then counts it.';
-- Router: the one scheduler of every rebalance and drain
-- (_rebalance_job_run()), serial being one slot. One call is one decision,
-- from one read of the job's ledger under the lock on the job's row:
--  1. a move whose worker has ended without a word (a background job's;
--     a job in a session runs its move itself) counts if it is done, is
--     resumed from its phase if it is left in progress (a restart of the
--     router, a terminated worker: not a try; three times at most, not
--     when the job is being cancelled), and is in error otherwise;
--  2. a move in error whose worker is gone is retried after retry_pause
--     while it has had at most move_retries retries (none once the job
--     is stopping), else given up: failed, or cancelled when the job was
--     stopped with cancel_move. A move given up that left its move in
--     progress (shardid.shard_moves), driven by no session, is first
--     rolled back by a worker of its own (action abort; resume, which
--     finishes it, when it was already repointed), at most three tries;
--  3. then what may start, while slots are free (max_parallel; NULL: one
--     per pair of nodes) and its nodes have room (no node the source or
--     target of more than max_moves_per_node moves at once, every move in
--     progress counted, a move's own row not): those rollbacks; unless
--     the job is stopping, the retries that are due, the moves left in
--     progress that no session drives (of a drain: from its node, or
--     being rolled back; an offline one stops the job with the hint, as
--     everywhere), and the steps of a fresh plan (_plan(): this job's
--     moves under way count on their targets, the shards it has touched
--     do not move again), in plan order, every step whose nodes have room
--     (a later step may start before an earlier one that waits for its
--     nodes: a plan's moves are independent, and the next decision plans
--     afresh with them counted where they go).
-- A background job starts each move in a background worker of its own
-- (_rebalance_launch(), its handle recorded); a job in a session gets the
-- one move to run itself (run_shard). Returns whether the job is to end
-- (nothing under way, nothing left to start: balanced, drained,
-- max_moves, or stopping), the move the session runs, and how long the
-- driver may sleep before it must decide again when no worker wakes it
-- (a retry falling due, a worker an earlier driver started).
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_job_step(job_id bigint)
    RETURNS TABLE (done boolean, run_shard integer, wake_in double precision)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    j          shardid.rebalance_jobs;
    o          jsonb;
    r          shardid.rebalance_job_moves;
    m          shardid.shard_moves;
    plan       record;
    slots      integer;
    per_node   integer;
    retries    integer;
    pause      interval;
    prefix     text;
    in_flight  integer;
    pending    integer;
    max_left   integer;
    steps      integer := 0;
    given_up   text;
    left_move  shardid.shard_moves;
    next_retry timestamptz;
    going_shards integer[];
    going_to   text[];
BEGIN
    SELECT * INTO j FROM shardid.rebalance_jobs AS x WHERE x.job_id = _rebalance_job_step.job_id FOR UPDATE;
    o := j.options;
    prefix := CASE WHEN j.kind = 'drain' THEN 'drain_node' ELSE 'rebalance' END;
    slots := CASE WHEN j.in_session THEN 1 ELSE COALESCE((o->>'max_parallel')::integer, 2147483647) END;
    per_node := COALESCE((o->>'max_moves_per_node')::integer, 1);
    retries := CASE WHEN j.in_session THEN 0 ELSE COALESCE((o->>'move_retries')::integer, 0) END;
    pause := COALESCE((o->>'retry_pause')::interval, '10 s');
    done := false;
    wake_in := 1;

    -- 1. workers gone without a word (a background job's; a job in a
    -- session runs its move itself): a move that is done counts; one left
    -- in progress is resumed from its phase (at most three times; not
    -- when its job is being cancelled); else the move is in error
    IF NOT j.in_session THEN
        FOR r IN SELECT * FROM shardid.rebalance_job_moves AS x
                  WHERE x.job_id = j.job_id AND x.state IN ('starting', 'running')
                    AND NOT COALESCE(shardid_internal._rebalance_worker_alive(x.worker_slot, x.worker_generation, x.worker_server), false)
                  ORDER BY x.shard LOOP
            SELECT * INTO left_move FROM shardid.shard_moves AS x WHERE x.shard = r.shard;
            IF left_move.shard IS NULL AND (r.action = 'abort'
                                            OR EXISTS (SELECT FROM shardid.shard_placement AS p WHERE p.shard = r.shard AND p.node = r.target)) THEN
                PERFORM shardid_internal._rebalance_move_done(j.job_id, r.shard);
            ELSIF left_move.shard IS NOT NULL AND r.resumes < 3 AND NOT (j.state = 'stopping' AND j.cancel_moves) THEN
                UPDATE shardid.rebalance_job_moves AS x
                   SET state = 'retrying', retry_at = pg_catalog.clock_timestamp(), resumes = x.resumes + 1,
                       action = CASE WHEN x.action = 'abort' THEN 'abort' ELSE 'resume' END,
                       updated_at = pg_catalog.clock_timestamp()
                 WHERE x.job_id = r.job_id AND x.shard = r.shard;
                RAISE NOTICE '%: the worker of the move of shard % to node "%" ended without a word (phase %); the move is resumed',
                    prefix, r.shard, r.target, left_move.phase;
            ELSE
                UPDATE shardid.rebalance_job_moves AS x
                   SET state = 'error', last_error = COALESCE(x.last_error || '; ', '') || 'its worker ended without finishing it',
                       updated_at = pg_catalog.clock_timestamp()
                 WHERE x.job_id = r.job_id AND x.shard = r.shard;
            END IF;
        END LOOP;
    END IF;
    IF j.state = 'stopping' THEN
        UPDATE shardid.rebalance_job_moves AS x
           SET state = 'error', last_error = COALESCE(x.last_error || '; ', '') || 'not retried: the job was stopped',
               updated_at = pg_catalog.clock_timestamp()
         WHERE x.job_id = j.job_id AND x.state = 'retrying' AND x.outcome IS NULL AND (j.cancel_moves OR x.resumes = 0);
    END IF;

    -- 2. moves in error, once their worker is gone: retried, or given up
    FOR r IN SELECT * FROM shardid.rebalance_job_moves AS x
              WHERE x.job_id = j.job_id AND x.state = 'error'
                AND NOT COALESCE(shardid_internal._rebalance_worker_alive(x.worker_slot, x.worker_generation, x.worker_server), false)
              ORDER BY x.shard LOOP
        IF r.outcome IS NULL AND j.state <> 'stopping' AND r.tries <= retries THEN
            UPDATE shardid.rebalance_job_moves AS x
               SET state = 'retrying', retry_at = pg_catalog.clock_timestamp() + pause, updated_at = pg_catalog.clock_timestamp()
             WHERE x.job_id = r.job_id AND x.shard = r.shard;
            RAISE NOTICE '%: the move of shard % to node "%" failed (try %): %; retried in %', prefix, r.shard, r.target, r.tries, r.last_error, pause;
            CONTINUE;
        END IF;
        given_up := COALESCE(r.outcome, CASE WHEN j.state = 'stopping' AND j.cancel_moves THEN 'cancelled' ELSE 'failed' END);
        IF r.outcome IS NULL THEN
            UPDATE shardid.rebalance_jobs AS x SET last_error = r.last_error WHERE x.job_id = j.job_id;
        END IF;
        SELECT * INTO left_move FROM shardid.shard_moves AS x
         WHERE x.shard = r.shard
           AND NOT EXISTS (SELECT FROM shardid.session_locks AS l
                            WHERE l.lock_name = 'move ' || x.shard AND shardid_internal._backend_alive(l.pid, l.backend_start));
        IF left_move.shard IS NOT NULL AND left_move.mode <> 'offline'
           AND (r.outcome IS NULL OR r.tries < 3) AND NOT j.in_session THEN
            -- rolled back (finished, if repointed) by a worker before it counts as given up
            UPDATE shardid.rebalance_job_moves AS x
               SET state = 'retrying', retry_at = pg_catalog.clock_timestamp(), outcome = given_up,
                   action = CASE WHEN left_move.phase = 'repointed' THEN 'resume' ELSE 'abort' END,
                   tries = CASE WHEN r.outcome IS NULL THEN 0 ELSE x.tries END,
                   updated_at = pg_catalog.clock_timestamp()
             WHERE x.job_id = r.job_id AND x.shard = r.shard;
            RAISE NOTICE '%: the move of shard % to node "%" %: %; its move in progress (phase %) is %', prefix, r.shard, r.target,
                CASE WHEN given_up = 'cancelled' THEN 'was cancelled' ELSE pg_catalog.format('failed (try %s), given up', r.tries) END,
                r.last_error, left_move.phase, CASE WHEN left_move.phase = 'repointed' THEN 'finished' ELSE 'rolled back' END;
            CONTINUE;
        END IF;
        UPDATE shardid.rebalance_job_moves AS x SET state = given_up, updated_at = pg_catalog.clock_timestamp()
         WHERE x.job_id = r.job_id AND x.shard = r.shard;
        IF given_up = 'failed' THEN
            RAISE NOTICE '%: the move of shard % to node "%" failed (try %), given up: %', prefix, r.shard, r.target, r.tries, r.last_error;
        END IF;
    END LOOP;

    SELECT pg_catalog.count(*) FILTER (WHERE x.state IN ('starting', 'running')),
           pg_catalog.count(*) FILTER (WHERE x.state IN ('starting', 'running', 'retrying', 'error') AND x.action <> 'abort'
                                                  AND x.outcome IS NULL),
           pg_catalog.min(x.retry_at) FILTER (WHERE x.state = 'retrying')
      INTO in_flight, pending, next_retry
      FROM shardid.rebalance_job_moves AS x WHERE x.job_id = j.job_id;
    max_left := (o->>'max_moves')::integer - j.moves_done - pending;

    -- 3a. rollbacks of moves given up, and the retries that are due
    FOR r IN SELECT * FROM shardid.rebalance_job_moves AS x
              WHERE x.job_id = j.job_id AND x.state = 'retrying' AND x.retry_at <= pg_catalog.clock_timestamp()
                AND (j.state <> 'stopping' OR x.outcome IS NOT NULL OR x.resumes > 0)
              ORDER BY x.outcome IS NULL, x.shard LOOP
        EXIT WHEN in_flight >= slots;
        CONTINUE WHEN shardid_internal._rebalance_node_busy(j.job_id, r.source, r.target, r.shard, per_node);
        IF r.outcome IS NULL THEN
            RAISE NOTICE '%: retrying the move of shard % to node "%" (try %)', prefix, r.shard, r.target, r.tries + 1;
        END IF;
        IF NOT shardid_internal._rebalance_move_start(j, r.shard, r.action, r.source, r.target, r.tries + 1, r.outcome) THEN
            slots := in_flight;
            EXIT;
        END IF;
        run_shard := CASE WHEN j.in_session THEN r.shard END;
        in_flight := in_flight + 1;
        EXIT WHEN j.in_session;
    END LOOP;

    IF j.state <> 'stopping' AND run_shard IS NULL THEN
        -- 3b. moves left in progress that no session drives
        FOR m IN SELECT * FROM shardid.shard_moves AS x
                  WHERE (j.kind = 'rebalance' OR x.source = j.drain_node OR x.phase = 'aborting')
                    AND NOT EXISTS (SELECT FROM shardid.rebalance_job_moves AS y
                                     WHERE y.job_id = j.job_id AND y.shard = x.shard
                                       AND y.state IN ('starting', 'running', 'error', 'retrying'))
                    AND NOT EXISTS (SELECT FROM shardid.session_locks AS l
                                     WHERE l.lock_name = 'move ' || x.shard
                                       AND shardid_internal._backend_alive(l.pid, l.backend_start))
                  ORDER BY x.shard LOOP
            PERFORM shardid_internal._rebalance_refuse_offline(m);
            EXIT WHEN in_flight >= slots;
            CONTINUE WHEN m.phase <> 'aborting' AND max_left <= 0;
            CONTINUE WHEN shardid_internal._rebalance_node_busy(j.job_id, m.source, m.target, m.shard, per_node);
            IF m.phase = 'aborting' THEN
                RAISE NOTICE '%: finishing the rollback of the move of shard % to node "%"', prefix, m.shard, m.target;
            ELSE
                RAISE NOTICE '%: resuming the move of shard % to node "%" (phase %)', prefix, m.shard, m.target, m.phase;
                max_left := max_left - 1;
            END IF;
            IF NOT shardid_internal._rebalance_move_start(j, m.shard, CASE WHEN m.phase = 'aborting' THEN 'abort' ELSE 'resume' END,
                                                          m.source, m.target, 1, NULL) THEN
                slots := in_flight;
                EXIT;
            END IF;
            run_shard := CASE WHEN j.in_session THEN m.shard END;
            in_flight := in_flight + 1;
            EXIT WHEN j.in_session;
        END LOOP;
    END IF;

    IF j.state <> 'stopping' AND run_shard IS NULL AND COALESCE(max_left, 1) > 0 THEN
        -- 3c. a fresh plan, its moves under way counted where they go
        SELECT COALESCE(pg_catalog.array_agg(x.shard ORDER BY x.shard), '{}'),
               COALESCE(pg_catalog.array_agg(x.target ORDER BY x.shard), '{}')
          INTO going_shards, going_to
          FROM shardid.rebalance_job_moves AS x
         WHERE x.job_id = j.job_id AND x.state IN ('starting', 'running', 'retrying', 'error') AND x.action <> 'abort';
        FOR plan IN
            SELECT p.* FROM shardid_internal._plan(
                     j.kind, j.drain_node, o->>'strategy', max_left,
                     ARRAY(SELECT pg_catalog.jsonb_array_elements_text(o->'excluded_shards')::integer) || j.moved
                         || ARRAY(SELECT x.shard FROM shardid.rebalance_job_moves AS x WHERE x.job_id = j.job_id),
                     going_shards, going_to) AS p
             ORDER BY p.step
        LOOP
            steps := steps + 1;
            CONTINUE WHEN run_shard IS NOT NULL OR in_flight >= slots
                       OR shardid_internal._rebalance_node_busy(j.job_id, plan.source, plan.target, plan.shard, per_node);
            RAISE NOTICE '%: shard % from node "%" to node "%"%', prefix, plan.shard, plan.source, plan.target,
                CASE WHEN plan.bytes IS NULL THEN '' ELSE pg_catalog.format(' (%s)', pg_catalog.pg_size_pretty(plan.bytes)) END;
            IF NOT shardid_internal._rebalance_move_start(j, plan.shard, 'move', plan.source, plan.target, 1, NULL) THEN
                slots := in_flight;
                CONTINUE;
            END IF;
            run_shard := CASE WHEN j.in_session THEN plan.shard END;
            in_flight := in_flight + 1;
            steps := steps - 1;
        END LOOP;
    END IF;

    SELECT pg_catalog.count(*) FILTER (WHERE x.state IN ('starting', 'running', 'retrying', 'error')),
           pg_catalog.count(*) FILTER (WHERE x.state IN ('starting', 'running', 'retrying', 'error') AND x.action <> 'abort'
                                                  AND x.outcome IS NULL)
      INTO in_flight, pending
      FROM shardid.rebalance_job_moves AS x WHERE x.job_id = j.job_id;
    UPDATE shardid.rebalance_jobs AS x
       SET moves_planned = x.moves_done + pending + steps,
           (current_shard, current_source, current_target) =
               (SELECT y.shard, y.source, y.target FROM shardid.rebalance_job_moves AS y
                 WHERE y.job_id = x.job_id AND y.state IN ('starting', 'running') ORDER BY y.shard LIMIT 1),
           updated_at = pg_catalog.clock_timestamp()
     WHERE x.job_id = j.job_id;
    -- a plan whose steps all wait for moves of others: wait for them too
    done := in_flight = 0 AND run_shard IS NULL AND (j.state = 'stopping' OR steps = 0 OR COALESCE(max_left, 1) <= 0);
    IF next_retry IS NOT NULL THEN
        wake_in := LEAST(1, GREATEST(0.05, EXTRACT(epoch FROM next_retry - pg_catalog.clock_timestamp())));
    END IF;
    RETURN NEXT;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_job_step(bigint) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_job_step(bigint) IS
    'Router: the one rebalance scheduler (serial is one slot): one decision from one read of the job''s ledger: moves whose worker ended are retried or given up (a move left in progress rolled back first), then rollbacks, due retries, moves left in progress and the steps of a fresh plan start where slots and nodes have room; whether the job is to end, the move a session runs itself, and how long the driver may sleep.';
-- Router: the one rebalance driver, for every rebalance and drain. CALLed
-- in the caller's session by rebalance() and drain_node() (a job
-- in_session), and by the background worker of rebalance_start() and
-- drain_node_start() (src/pg/rebalance_worker.cpp, at top level: a
-- portal, non-atomic), the job's row in shardid.rebalance_jobs and its
-- moves' rows in shardid.rebalance_job_moves as its state:
-- _rebalance_job_begin() takes the one rebalance lock; then, until the
-- job is to end, the one scheduler _rebalance_job_step() decides, from
-- one read of the ledger, what starts (serial is one slot). A background
-- job runs each move in a worker of its own and sleeps on its latch
-- between decisions (_rebalance_sleep()): a move's worker that ends wakes
-- it at once, rebalance_stop() too. A job in a session runs its one move
-- itself (_rebalance_move_run(), as a worker does). _rebalance_job_end()
-- ends the job. An error ends the CALL: in a session it reaches the
-- caller (the job is then reported interrupted, and the session keeps
-- the lock until it ends or its next rebalance ends); a worker records it
-- (_rebalance_job_failed()). A job that has ended or was interrupted is
-- not run (a restarted worker of it exits).
-- No SET search_path (PostgreSQL refuses COMMIT in a procedure that has
-- one): this holds the loop and its COMMITs; the functions it calls pin it.
CREATE OR REPLACE PROCEDURE shardid_internal._rebalance_job_run(job_id bigint)
    LANGUAGE plpgsql
AS $$
DECLARE
    step record;
    err  text[];
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid_internal._rebalance_job_run()',
                                             'after every move',
                                             'Start a background rebalance with shardid.rebalance_start().');
    IF NOT shardid_internal._rebalance_job_begin(job_id) THEN
        COMMIT;
        RETURN;
    END IF;
    COMMIT;
    LOOP
        SELECT s.* INTO step FROM shardid_internal._rebalance_job_step(job_id) AS s;
        COMMIT;
        EXIT WHEN step.done;
        IF step.run_shard IS NOT NULL THEN
            CALL shardid_internal._rebalance_move_run(job_id, step.run_shard);
        ELSE
            PERFORM shardid_internal._rebalance_sleep(step.wake_in);
        END IF;
    END LOOP;
    err := shardid_internal._rebalance_job_end(job_id);
    COMMIT;
    IF err IS NOT NULL THEN
        PERFORM shardid_internal._raise(err[1], err[2], err[3], err[4]);
    END IF;
END
$$;

REVOKE ALL ON PROCEDURE shardid_internal._rebalance_job_run(bigint) FROM PUBLIC;

COMMENT ON PROCEDURE shardid_internal._rebalance_job_run(bigint) IS
    'Router: the one rebalance driver, CALLed by rebalance() and drain_node() in their session and by a background job''s worker: the one scheduler decides what starts (serial is one slot), a background job''s moves each in a worker of their own, woken when one ends; its state in shardid.rebalance_jobs and shardid.rebalance_job_moves.';
-- Rebalances the nodes: CALL shardid.rebalance() makes the moves of
-- rebalance_plan() one at a time with CALL shardid.move_shard(), committing
-- after each, and stops at the first failure by raising it; CALL it again
-- to go on. It is a job of the one rebalance driver run in this session
-- (_rebalance_job_run(), as rebalance_start() runs it in the background;
-- its row in shardid.rebalance_jobs, rebalance_status() shows it): a move
-- left in progress is resumed first (one being rolled back is rolled back
-- to the end: abort_move(), no move counted; an offline one is refused
-- with a hint). It re-plans before every move, the shards it has moved
-- excluded, so that each step acts on the placement and sizes as they are
-- (writes go on, a move may fail, a copy arrives without its bloat); with
-- sizes that do not change, the moves made are exactly the plan
-- rebalance_plan() showed. One rebalance at a time: the lock 'rebalance'
-- of shardid.session_locks, kept across the commits. The move options are
-- passed to every move_shard() call (same defaults); after each call the
-- move must be done, or the rebalance stops.
-- No SET search_path (PostgreSQL refuses COMMIT in a procedure that has
-- one): this holds only the CALL; the functions it calls pin it.
CREATE OR REPLACE PROCEDURE shardid.rebalance(
    strategy text DEFAULT 'by_size',
    max_moves integer DEFAULT NULL,
    excluded_shards integer[] DEFAULT '{}',
    drop_old boolean DEFAULT NULL,
    lock_timeout interval DEFAULT NULL,
    cutover_timeout interval DEFAULT NULL,
    catchup_timeout interval DEFAULT NULL,
    node_timeout interval DEFAULT NULL)
    LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid.rebalance()',
                                             'after every move');
    CALL shardid_internal._rebalance_job_run(shardid_internal._rebalance_job_create('rebalance', NULL,
        shardid_internal._rebalance_options('rebalance', NULL, strategy, max_moves, excluded_shards, drop_old, lock_timeout,
                                            cutover_timeout, catchup_timeout, node_timeout, 1, 1, 0, '10 s'),
        in_session => true));
END
$$;

REVOKE ALL ON PROCEDURE shardid.rebalance(text, integer, integer[], boolean, interval, interval, interval, interval) FROM PUBLIC;

COMMENT ON PROCEDURE shardid.rebalance(text, integer, integer[], boolean, interval, interval, interval, interval) IS
    'Router: moves shards one at a time with move_shard(), re-planned by rebalance_plan() before each, committing after each, until balanced or max_moves; resumes a move left in progress first; stops at the first failure (CALL it again to go on). The move options are passed to move_shard().';
-- Router: empties a node so that remove_node() can remove it: moves every
-- shard off it with move_shard(), one at a time, committing after each,
-- each to the node that is then the emptiest (drain_plan(), re-made
-- before every move, as rebalance() re-plans). A job of the one rebalance
-- driver run in this session (_rebalance_job_run(), as drain_node_start()
-- runs it in the background): a move from the node left in progress is
-- resumed first (one being rolled back is rolled back to the end; an
-- offline one is refused with a hint). One at a time with rebalance() and
-- the background rebalance (the rebalance lock). Stops at the first
-- failure by raising it; CALL it again to go on. The move options are
-- passed to every move_shard() call.
-- No SET search_path (PostgreSQL refuses COMMIT in a procedure that has
-- one): this holds only the CALL; the functions it calls pin it.
CREATE OR REPLACE PROCEDURE shardid.drain_node(
    node text,
    strategy text DEFAULT 'by_size',
    drop_old boolean DEFAULT NULL,
    lock_timeout interval DEFAULT NULL,
    cutover_timeout interval DEFAULT NULL,
    catchup_timeout interval DEFAULT NULL,
    node_timeout interval DEFAULT NULL)
    LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid.drain_node()',
                                             'after every move');
    CALL shardid_internal._rebalance_job_run(shardid_internal._rebalance_job_create('drain', node,
        shardid_internal._rebalance_options('drain', node, strategy, NULL, NULL, drop_old, lock_timeout,
                                            cutover_timeout, catchup_timeout, node_timeout, 1, 1, 0, '10 s'),
        in_session => true));
END
$$;

REVOKE ALL ON PROCEDURE shardid.drain_node(text, text, boolean, interval, interval, interval, interval) FROM PUBLIC;

COMMENT ON PROCEDURE shardid.drain_node(text, text, boolean, interval, interval, interval, interval) IS
    'Router: moves every shard off a node with move_shard(), one at a time, each to the then emptiest other node (drain_plan(), re-made before each), committing after each, so that remove_node() succeeds; resumes a move from the node left in progress first.';
-- Router: whether a move in progress is driven by nothing: no live backend
-- holds its lock ('move <shard>' of shardid.session_locks: a move_shard()
-- or rebalance() session, or a background job's worker), and no live
-- background job would resume it (_rebalance_job_alive(): a worker the
-- postmaster restarts counts). Such a move stays in its phase (a shard
-- frozen in frozen or caught_up refuses writes) until someone CALLs
-- move_shard() or abort_move(): check_cluster() reports it (move_stalled).
CREATE OR REPLACE FUNCTION shardid_internal._move_stalled(m shardid.shard_moves) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT NOT EXISTS (SELECT FROM shardid.session_locks AS l
                        WHERE l.lock_name = 'move ' || m.shard
                          AND shardid_internal._backend_alive(l.pid, l.backend_start))
       AND NOT EXISTS (SELECT FROM shardid.rebalance_jobs AS j
                        WHERE j.state IN ('starting', 'running', 'stopping')
                          AND (j.kind = 'rebalance' OR j.drain_node = m.source OR m.phase = 'aborting')
                          AND shardid_internal._rebalance_job_alive(j))
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_stalled(shardid.shard_moves) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_stalled(shardid.shard_moves) IS
    'Router: whether a move in progress has no live session holding its lock and no live background job to resume it (check_cluster()''s move_stalled).';
-- Router: CALL rebalance() in the background: returns the job's ID at
-- once, while a dynamic background worker (no shared_preload_libraries
-- needed) makes the moves as the calling role, committing after each. The
-- job outlives the caller's session; rebalance_status() follows it,
-- rebalance_wait() waits for it, rebalance_stop() stops it. After a restart
-- of the server the job is reported interrupted, and rebalance_start()
-- resumes the work (a move left in progress first); rebalance_resume(),
-- or the launcher with shardid preloaded, resumes the job itself. Each
-- move runs in a background worker of its own; moves whose nodes are
-- disjoint run at the same time: by default as many as there are pairs
-- of free nodes (each node in at most max_moves_per_node moves at once),
-- at most max_parallel when given (1: one move at a time). With
-- move_retries > 0 a failed move is retried (after retry_pause) up to
-- that many times, and then the job goes on with the others and ends
-- failed, listing it.
CREATE OR REPLACE FUNCTION shardid.rebalance_start(
    strategy text DEFAULT 'by_size',
    max_moves integer DEFAULT NULL,
    excluded_shards integer[] DEFAULT '{}',
    drop_old boolean DEFAULT NULL,
    lock_timeout interval DEFAULT NULL,
    cutover_timeout interval DEFAULT NULL,
    catchup_timeout interval DEFAULT NULL,
    node_timeout interval DEFAULT NULL,
    max_parallel integer DEFAULT NULL,
    max_moves_per_node integer DEFAULT 1,
    move_retries integer DEFAULT 0,
    retry_pause interval DEFAULT '10 s') RETURNS bigint
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    o jsonb := shardid_internal._rebalance_options('rebalance', NULL, strategy, max_moves, excluded_shards, drop_old, lock_timeout, cutover_timeout,
                                                   catchup_timeout, node_timeout, max_parallel, max_moves_per_node,
                                                   move_retries, retry_pause);
BEGIN
    PERFORM shardid_internal._dblink_schema();
    RETURN shardid_internal._rebalance_job_create('rebalance', NULL, o);
END
$$;

REVOKE ALL ON FUNCTION shardid.rebalance_start(text, integer, integer[], boolean, interval, interval, interval, interval, integer, integer, integer, interval) FROM PUBLIC;

COMMENT ON FUNCTION shardid.rebalance_start(text, integer, integer[], boolean, interval, interval, interval, interval, integer, integer, integer, interval) IS
    'Router: starts rebalance() in a background job and returns the job''s ID at once; options as rebalance(); each move in a worker of its own, moves on disjoint nodes at once (max_moves_per_node each; at most max_parallel, default no bound, 1 for one at a time), a failed move retried move_retries times after retry_pause. Follow it with rebalance_status(), rebalance_wait(), rebalance_stop().';
-- Router: CALL drain_node() in the background, as rebalance_start() does
-- for rebalance(): returns the job's ID at once; max_parallel,
-- max_moves_per_node, move_retries and retry_pause as rebalance_start().
CREATE OR REPLACE FUNCTION shardid.drain_node_start(
    node text,
    strategy text DEFAULT 'by_size',
    drop_old boolean DEFAULT NULL,
    lock_timeout interval DEFAULT NULL,
    cutover_timeout interval DEFAULT NULL,
    catchup_timeout interval DEFAULT NULL,
    node_timeout interval DEFAULT NULL,
    max_parallel integer DEFAULT NULL,
    max_moves_per_node integer DEFAULT 1,
    move_retries integer DEFAULT 0,
    retry_pause interval DEFAULT '10 s') RETURNS bigint
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    o jsonb := shardid_internal._rebalance_options('drain', node, strategy, NULL, NULL, drop_old, lock_timeout, cutover_timeout,
                                                   catchup_timeout, node_timeout, max_parallel, max_moves_per_node,
                                                   move_retries, retry_pause);
BEGIN
    PERFORM shardid_internal._dblink_schema();
    RETURN shardid_internal._rebalance_job_create('drain', node, o);
END
$$;

REVOKE ALL ON FUNCTION shardid.drain_node_start(text, text, boolean, interval, interval, interval, interval, integer, integer, integer, interval) FROM PUBLIC;

COMMENT ON FUNCTION shardid.drain_node_start(text, text, boolean, interval, interval, interval, interval, integer, integer, integer, interval) IS
    'Router: starts drain_node() in a background worker and returns the job''s ID at once; parallel moves and retries as rebalance_start(). Follow it with rebalance_status(), rebalance_wait(), rebalance_stop().';
-- Router: the last background rebalance or drain (or job's): its state
-- (running, stopping; finished, stopped, failed; interrupted when its
-- worker is gone without ending it: a restart of the server, a terminated
-- worker), moves done and planned (done + the current plan's length), the
-- current move with its phase and progress from shardid.shard_moves, the
-- last error, who started it and when, when it ended; every move in flight
-- (moves_in_flight: the move's row of shardid.move_progress, so a column
-- added there shows here too, with the job's shard, source, target,
-- action, state, tries, worker and error over it; several with
-- max_parallel) and the shards whose moves failed after their retries
-- (moves_failed). current_* is the lowest shard in flight.
CREATE OR REPLACE FUNCTION shardid.rebalance_status(job bigint DEFAULT NULL)
    RETURNS TABLE (job_id bigint, kind text, drain_node text, state text, moves_done integer, moves_planned integer,
                   current_shard integer, current_source text, current_target text, current_phase text,
                   current_bytes_copied bigint, current_bytes_total bigint, current_lag_bytes bigint,
                   last_error text, worker_pid integer, started_by name, started_at timestamptz,
                   updated_at timestamptz, finished_at timestamptz, options jsonb,
                   moves_in_flight jsonb, moves_failed integer[])
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT j.job_id, j.kind, j.drain_node,
           CASE WHEN j.state IN ('starting', 'running', 'stopping') AND NOT shardid_internal._rebalance_job_alive(j)
                THEN 'interrupted' ELSE j.state END,
           j.moves_done, j.moves_planned, j.current_shard, j.current_source, j.current_target,
           m.phase, m.bytes_copied, m.bytes_total, m.lag_bytes,
           COALESCE(j.last_error, m.last_error), j.worker_pid, j.started_by, j.started_at, j.updated_at, j.finished_at, j.options,
           COALESCE((SELECT pg_catalog.jsonb_agg(COALESCE(pg_catalog.to_jsonb(y), '{}') OPERATOR(pg_catalog.||) pg_catalog.jsonb_build_object(
                                'shard', x.shard, 'source', x.source, 'target', x.target, 'action', x.action, 'state', x.state,
                                'tries', x.tries, 'worker_pid', x.worker_pid, 'last_error', x.last_error) ORDER BY x.shard)
                       FROM shardid.rebalance_job_moves AS x
                       LEFT JOIN shardid.move_progress AS y ON y.shard = x.shard
                      WHERE x.job_id = j.job_id AND x.state IN ('starting', 'running', 'error', 'retrying')),
                    CASE WHEN j.current_shard IS NOT NULL AND NOT EXISTS (SELECT FROM shardid.rebalance_job_moves AS x WHERE x.job_id = j.job_id)
                         THEN pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object(
                                'shard', j.current_shard, 'source', j.current_source, 'target', j.current_target, 'state', 'running',
                                'tries', 1, 'phase', m.phase, 'bytes_copied', m.bytes_copied, 'bytes_total', m.bytes_total,
                                'lag_bytes', m.lag_bytes, 'worker_pid', j.worker_pid)) END,
                    '[]'),
           ARRAY(SELECT x.shard FROM shardid.rebalance_job_moves AS x WHERE x.job_id = j.job_id AND x.state = 'failed' ORDER BY x.shard)
      FROM shardid.rebalance_jobs AS j
      LEFT JOIN shardid.shard_moves AS m ON m.shard = j.current_shard AND m.target = j.current_target
     WHERE j.job_id = COALESCE(rebalance_status.job, (SELECT max(x.job_id) FROM shardid.rebalance_jobs AS x))
$$;

REVOKE ALL ON FUNCTION shardid.rebalance_status(bigint) FROM PUBLIC;

COMMENT ON FUNCTION shardid.rebalance_status(bigint) IS
    'Router: the state of the last (or the given) background rebalance or drain: running, stopping, finished, stopped, failed or interrupted; moves done and planned; the current move, its phase and progress; the last error; the worker; times; every move in flight (moves_in_flight) and the shards whose moves failed (moves_failed).';
-- Router: waits until the last (or the given) background job has ended
-- (or timeout has passed, when given), polling its row every 0.2 s, and
-- returns its status as rebalance_status() does. Interruptible
-- (pg_cancel_backend, Ctrl-C): the job goes on. Refuses (25000) a job
-- started in the same transaction, whose worker waits for its commit.
CREATE OR REPLACE FUNCTION shardid.rebalance_wait(job bigint DEFAULT NULL, timeout interval DEFAULT NULL)
    RETURNS TABLE (job_id bigint, kind text, drain_node text, state text, moves_done integer, moves_planned integer,
                   current_shard integer, current_source text, current_target text, current_phase text,
                   current_bytes_copied bigint, current_bytes_total bigint, current_lag_bytes bigint,
                   last_error text, worker_pid integer, started_by name, started_at timestamptz,
                   updated_at timestamptz, finished_at timestamptz, options jsonb,
                   moves_in_flight jsonb, moves_failed integer[])
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    id       bigint := COALESCE(job, (SELECT pg_catalog.max(x.job_id) FROM shardid.rebalance_jobs AS x));
    deadline timestamptz := pg_catalog.clock_timestamp() + timeout;
BEGIN
    IF id IS NULL THEN
        RAISE EXCEPTION 'there is no background rebalance job' USING ERRCODE = 'undefined_object';
    END IF;
    -- its worker waits for the transaction that started the job to end
    IF EXISTS (SELECT FROM shardid.rebalance_jobs AS x
                WHERE x.job_id = id
                  AND x.xmin::text = (pg_catalog.pg_current_xact_id_if_assigned()::text::bigint % 4294967296)::text) THEN
        RAISE EXCEPTION 'rebalance_wait() cannot wait for job %, started in this transaction', id
            USING ERRCODE = 'invalid_transaction_state',
                  DETAIL = 'Its worker starts once the transaction that started it commits.',
                  HINT = 'Start it and wait for it in two statements: SELECT shardid.rebalance_start(); then SELECT * FROM shardid.rebalance_wait();';
    END IF;
    LOOP
        EXIT WHEN NOT EXISTS (SELECT FROM shardid.rebalance_status(id) AS s WHERE s.state IN ('starting', 'running', 'stopping'));
        EXIT WHEN deadline IS NOT NULL AND pg_catalog.clock_timestamp() >= deadline;
        PERFORM pg_catalog.pg_sleep(0.2);
    END LOOP;
    RETURN QUERY SELECT * FROM shardid.rebalance_status(id);
END
$$;

REVOKE ALL ON FUNCTION shardid.rebalance_wait(bigint, interval) FROM PUBLIC;

COMMENT ON FUNCTION shardid.rebalance_wait(bigint, interval) IS
    'Router: waits until the last (or the given) background rebalance or drain has ended, or timeout has passed; returns its status as rebalance_status() does.';
-- Router: stops a job that has not ended (the last, or the given one):
-- its moves in flight finish and no other starts (the default), or, with
-- cancel_move, those moves are cancelled (pg_cancel_backend of each move's
-- worker; of the session of rebalance() and drain_node()) and every one
-- that is not yet repointed is rolled back before the job ends (the
-- scheduler starts a worker that rolls back what a cancelled move left;
-- a repointed one is finished), so that when the job says 'stopped' no
-- move of it is left in shardid.shard_moves. The driver is woken at once
-- (_rebalance_wake()). A job whose driver is gone (a restart of the
-- server) is stopped the same way when it is resumed (the launcher,
-- rebalance_resume()). rebalance_wait() waits for the end. Returns
-- whether a job that had not ended was asked to stop.
CREATE OR REPLACE FUNCTION shardid.rebalance_stop(job bigint DEFAULT NULL, cancel_move boolean DEFAULT false) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    j shardid.rebalance_jobs;
BEGIN
    IF cancel_move IS NULL THEN
        RAISE EXCEPTION 'cancel_move must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    SELECT * INTO j FROM shardid.rebalance_jobs AS x
     WHERE x.job_id = COALESCE(rebalance_stop.job, (SELECT pg_catalog.max(y.job_id) FROM shardid.rebalance_jobs AS y))
     FOR UPDATE;
    IF NOT FOUND OR j.state NOT IN ('starting', 'running', 'stopping') THEN
        RETURN false;
    END IF;
    UPDATE shardid.rebalance_jobs AS x
       SET state = 'stopping', cancel_moves = x.cancel_moves OR rebalance_stop.cancel_move, updated_at = pg_catalog.clock_timestamp()
     WHERE x.job_id = j.job_id;
    IF cancel_move THEN
        -- each worker records the cancel's error in its row, which waits
        -- for this transaction to commit; the scheduler then reads 'stopping'
        PERFORM pg_catalog.pg_cancel_backend(x.worker_pid) FROM shardid.rebalance_job_moves AS x
         WHERE x.job_id = j.job_id AND x.state IN ('starting', 'running') AND x.worker_pid IS NOT NULL
           AND NOT j.in_session;
        PERFORM pg_catalog.pg_cancel_backend(j.worker_pid) WHERE j.in_session AND shardid_internal._rebalance_job_alive(j);
    END IF;
    PERFORM shardid_internal._rebalance_wake(j.worker_pid) WHERE NOT j.in_session AND j.worker_pid IS NOT NULL;
    RETURN true;
END
$$;

REVOKE ALL ON FUNCTION shardid.rebalance_stop(bigint, boolean) FROM PUBLIC;

COMMENT ON FUNCTION shardid.rebalance_stop(bigint, boolean) IS
    'Router: stops a rebalance or drain job (the last by default): its moves in flight finish and no other starts, or with cancel_move they are cancelled and rolled back (finished if already repointed) before the job says stopped; true if a job that had not ended was asked to stop.';
-- Router: resumes a background rebalance or drain job (the last, or the
-- given one) whose driver is gone (a restart of the server, a promotion
-- of this router from its standby): starts its driver again as the role
-- that started it (another role than the caller's only for a superuser:
-- 42501), which goes on where the ledger says (moves left in progress
-- first; a job being stopped stops). The launcher (shardid in
-- shared_preload_libraries) calls it for every such job after a start or
-- a promotion; without it an administrator does, or rebalance_start(),
-- which starts a new job that resumes the work. Returns the job's ID, or
-- NULL when there is no such job or its driver is alive (nothing to do).
-- A job whose role is gone fails (its last error says so).
CREATE OR REPLACE FUNCTION shardid.rebalance_resume(job bigint DEFAULT NULL) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    j    shardid.rebalance_jobs;
    role oid;
    w    record;
BEGIN
    LOCK TABLE shardid.rebalance_jobs IN SHARE ROW EXCLUSIVE MODE;
    SELECT * INTO j FROM shardid.rebalance_jobs AS x
     WHERE x.job_id = COALESCE(rebalance_resume.job, (SELECT pg_catalog.max(y.job_id) FROM shardid.rebalance_jobs AS y))
     FOR UPDATE;
    IF NOT FOUND OR j.in_session OR j.state NOT IN ('starting', 'running', 'stopping')
       OR shardid_internal._rebalance_job_alive(j) THEN
        RETURN NULL;
    END IF;
    SELECT r.oid INTO role FROM pg_catalog.pg_roles AS r WHERE r.rolname = j.started_by;
    IF role IS NULL THEN
        UPDATE shardid.rebalance_jobs AS x
           SET state = 'failed', last_error = pg_catalog.format('not resumed: role %s, which started it, no longer exists', j.started_by),
               finished_at = pg_catalog.clock_timestamp(), updated_at = pg_catalog.clock_timestamp()
         WHERE x.job_id = j.job_id;
        RETURN j.job_id;
    END IF;
    RAISE LOG 'shardid rebalance job %: its driver is gone; resumed as role %', j.job_id, j.started_by;
    w := shardid_internal._rebalance_launch(j.job_id, NULL, role);
    UPDATE shardid.rebalance_jobs AS x
       SET worker_pid = w.pid, worker_start = NULL, worker_slot = w.slot, worker_generation = w.generation, worker_server = w.server,
           updated_at = pg_catalog.clock_timestamp()
     WHERE x.job_id = j.job_id;
    RETURN j.job_id;
END
$$;

REVOKE ALL ON FUNCTION shardid.rebalance_resume(bigint) FROM PUBLIC;

COMMENT ON FUNCTION shardid.rebalance_resume(bigint) IS
    'Router: starts again the driver of a background rebalance or drain job whose driver is gone (a restart, a promotion), as the role that started it; the launcher calls it by itself. Returns the job''s ID, or NULL when there is nothing to resume.';
-- Router, the launcher (_launcher_run()): resumes the background job whose
-- driver is gone (rebalance_resume(), as the role that started it), the
-- newest unfinished one; an older unfinished one whose driver is gone is
-- marked interrupted (one job runs at a time: the newest resumes the
-- work). Returns the job resumed, or NULL.
CREATE OR REPLACE FUNCTION shardid_internal._launcher_resume() RETURNS bigint
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    newest bigint;
BEGIN
    LOCK TABLE shardid.rebalance_jobs IN SHARE ROW EXCLUSIVE MODE;
    SELECT pg_catalog.max(x.job_id) INTO newest FROM shardid.rebalance_jobs AS x
     WHERE x.state IN ('starting', 'running', 'stopping') AND NOT x.in_session;
    UPDATE shardid.rebalance_jobs AS x
       SET state = 'interrupted', finished_at = pg_catalog.clock_timestamp(), updated_at = pg_catalog.clock_timestamp()
     WHERE x.state IN ('starting', 'running', 'stopping') AND NOT x.in_session AND x.job_id < newest
       AND NOT shardid_internal._rebalance_job_alive(x);
    RETURN CASE WHEN newest IS NOT NULL THEN shardid.rebalance_resume(newest) END;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._launcher_resume() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._launcher_resume() IS
    'Router, the launcher: resumes the newest unfinished background rebalance job whose driver is gone (older ones are marked interrupted); returns it, or NULL.';
-- shardid, area operations: operating the cluster; router/ on the router,
-- the rest what a node answers it. Last: it reads every other area.
--
-- check_cluster() reads every node once over dblink (_node_facts() there)
-- and reports what is wrong, each problem with the command that fixes it:
-- one function per kind (router/_check_<kind>.sql), the kinds listed once
-- (router/check_cluster_kinds.sql). A new kind: its function, its row in
-- check_cluster_kinds, its line here, its rows in docs/reference.md and
-- docs/monitoring.md (test/lint/run kinds checks them).
-- The retired copies moves keep on their sources (move_shard() without
-- drop_old): listed by the view retired_copies, dropped by
-- drop_retired_copies(). All of it is for administrators (EXECUTE revoked
-- from PUBLIC): it reads shardid.nodes and connects to the nodes.

-- Node: the definition of a sharded table's template that every node must
-- agree on (check_cluster() compares them): its id column and creation
-- order, its columns (name, type, NOT NULL, default) in order, its
-- constraints and its indexes, by name, each its shape
-- (_index_statement(): without its name and table).
CREATE OR REPLACE FUNCTION shardid_internal._template_definition(table_name name) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT jsonb_build_object(
        'template', pg_catalog.format('%I.%I', t.template_schema, t.template_name),
        'id_column', t.id_column,
        'position', t.position,
        'columns', (SELECT COALESCE(jsonb_agg(jsonb_build_array(a.attname, format_type(a.atttypid, a.atttypmod),
                                                                a.attnotnull, pg_get_expr(d.adbin, d.adrelid))
                                              ORDER BY a.attnum), '[]')
                      FROM pg_attribute AS a
                      LEFT JOIN pg_attrdef AS d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                     WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped),
        'constraints', (SELECT COALESCE(jsonb_object_agg(k.conname, pg_get_constraintdef(k.oid)), '{}')
                          FROM pg_constraint AS k WHERE k.conrelid = c.oid),
        'indexes', (SELECT COALESCE(jsonb_object_agg(i.relname, shardid_internal._index_statement(x.indexrelid)), '{}')
                      FROM pg_index AS x JOIN pg_class AS i ON i.oid = x.indexrelid
                     WHERE x.indrelid = c.oid))
      FROM shardid.sharded_tables AS t
      LEFT JOIN pg_namespace AS n ON n.nspname = t.template_schema
      LEFT JOIN pg_class AS c ON c.relnamespace = n.oid AND c.relname = t.template_name
     WHERE t.table_name = _template_definition.table_name
$$;

REVOKE ALL ON FUNCTION shardid_internal._template_definition(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._template_definition(name) IS
    'Node: a sharded table''s template definition as check_cluster() compares it between nodes (id column, position, columns, constraints, indexes).';
-- Node, for check_cluster() and align_copy(): every registered shard's
-- copy of a sharded table that differs from its template here, in one
-- statement: each relation's definition read by index, the copies
-- compared with their template's, the differences spelled out for those
-- that differ only. Compared: the columns (order, type, NOT NULL, default;
-- the id column's default names the shard's own generator and is left
-- out), the constraints (not foreign keys: a copy is made LIKE its
-- template, which copies none; nor NOT NULL, which PostgreSQL 18 keeps as
-- constraints too: it is compared per column) and the template's indexes
-- by name and shape (_index_statement()), and the owner. Indexes a copy
-- has beyond its template are the shard's own (a DBA's index on one shard,
-- which moves keep) and are not a difference.
--
-- Definitions are read from the catalog as they are (pg_get_expr,
-- pg_get_constraintdef, _index_statement() under the pinned search_path:
-- every name outside pg_catalog with its schema) and compared unchanged:
-- no name is rewritten, so a copy's CHECK that calls a function of
-- another schema than its template's is a difference. One element per
-- differing copy: shard, schema, table (qualified), table_name and its
-- template (qualified), the differences as sentences, and steps: the
-- statements that bring the copy in line, each with its phase (1:
-- removals, which run no code; 2: the owner; 3: additions, which run the
-- template's code), built from the template's catalog entries with only
-- the table's name changed, and 4: an index of the template the copy
-- lacks (or has invalid, a failed build's), by name, with how many keys
-- the copy holds twice for a unique one (_copy_index_duplicates(), read
-- as the copy's owner): build_copy_index() builds it CONCURRENTLY, so
-- that writes go on, and a unique one over duplicates is reported, not
-- built. A column the template lacks holds data, and dropping it is a
-- choice, not a repair, nor is the columns' order (a move's copy takes it
-- from the template): they have no step; extra names each such column
-- with its type, for the advice. shardid.align_copy() runs the steps of
-- phases 1 to 3.
CREATE OR REPLACE FUNCTION shardid_internal._copy_drift() RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
WITH tmpl AS (
    SELECT t.table_name, t.template_schema, t.template_name, t.id_column, c.oid, c.relowner
      FROM shardid.sharded_tables AS t
      JOIN pg_namespace AS n ON n.nspname = t.template_schema
      JOIN pg_class AS c ON c.relnamespace = n.oid AND c.relname = t.template_name
), rels AS (
    -- every copy and every template
    SELECT s.shard, s.schema_name, t.table_name, t.template_schema, t.id_column, t.oid AS tmpl_oid, t.relowner AS tmpl_owner,
           c.oid, c.relowner, format('%I.%I', s.schema_name, t.table_name) AS qname,
           format('%I.%I', t.template_schema, t.template_name) AS tmpl_qname
      FROM shardid.shard_registry AS s
      CROSS JOIN tmpl AS t
      JOIN pg_namespace AS n ON n.nspname = s.schema_name
      JOIN pg_class AS c ON c.relnamespace = n.oid AND c.relname = t.table_name AND c.relkind IN ('r', 'p')
    UNION ALL
    SELECT NULL, t.template_schema, t.table_name, t.template_schema, t.id_column, t.oid, t.relowner, t.oid, t.relowner, NULL, NULL
      FROM tmpl AS t
), sig AS (
    -- each relation's definition, read by index (a lookup per relation,
    -- no join of one catalog aggregate with another)
    SELECT r.*,
           (SELECT jsonb_build_object(
                       'names', jsonb_agg(a.attname ORDER BY a.attnum),
                       'defs', jsonb_object_agg(a.attname, jsonb_build_object(
                           'type', format_type(a.atttypid, a.atttypmod),
                           'not null', a.attnotnull,
                           'default', CASE WHEN a.attname = r.id_column THEN NULL
                                           ELSE pg_get_expr(d.adbin, d.adrelid) END)))
              FROM pg_attribute AS a
              LEFT JOIN pg_attrdef AS d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
             WHERE a.attrelid = r.oid AND a.attnum > 0 AND NOT a.attisdropped) AS cols,
           (SELECT COALESCE(jsonb_object_agg(k.conname, pg_get_constraintdef(k.oid)), '{}')
              FROM pg_constraint AS k WHERE k.conrelid = r.oid AND k.contype NOT IN ('f', 'n')) AS cons,
           (SELECT COALESCE(jsonb_object_agg(i.relname, shardid_internal._index_statement(x.indexrelid)
                                                        || CASE WHEN x.indisvalid THEN '' ELSE ' (invalid)' END), '{}')
              FROM pg_index AS x JOIN pg_class AS i ON i.oid = x.indexrelid WHERE x.indrelid = r.oid) AS idx,
           (SELECT COALESCE(jsonb_object_agg(i.relname, x.indexrelid), '{}')
              FROM pg_index AS x JOIN pg_class AS i ON i.oid = x.indexrelid WHERE x.indrelid = r.oid) AS idx_oids
      FROM rels AS r
), copy AS (
    -- the copies that differ, each beside its template's definition
    SELECT c.shard, c.schema_name, c.table_name, c.template_schema, c.qname, c.tmpl_qname, c.relowner, c.tmpl_owner, c.tmpl_oid, c.oid,
           c.cols AS ccols, c.cons AS ccons, c.idx AS cidx, t.cols AS tcols, t.cons AS tcons, t.idx AS tidx, t.idx_oids AS tidx_oids
      FROM sig AS c
      -- the templates' definitions apart: a few rows to join every copy with
      JOIN (SELECT * FROM sig WHERE sig.shard IS NULL OFFSET 0) AS t ON t.table_name = c.table_name
     WHERE c.shard IS NOT NULL
       AND (c.cols IS DISTINCT FROM t.cols OR c.cons IS DISTINCT FROM t.cons OR c.relowner <> c.tmpl_owner
            OR NOT c.idx @> t.idx)
), diff AS (
    -- columns, by name (a: the template's, b: the copy's)
    SELECT x.shard, x.qname, x.table_name, 1 AS ord, COALESCE(d.akey, d.bkey) AS what,
           CASE WHEN d.bkey IS NULL THEN format('column %I is missing', d.akey)
                WHEN d.akey IS NULL THEN format('column %I is not the template''s', d.bkey)
                ELSE format('column %I: %s', d.akey,
                            concat_ws(', ',
                                CASE WHEN d.aval->'type' <> d.bval->'type' THEN format('type %s, the template''s %s', d.bval->>'type', d.aval->>'type') END,
                                CASE WHEN d.aval->'not null' <> d.bval->'not null'
                                     THEN CASE WHEN (d.aval->>'not null')::boolean THEN 'nullable, the template''s NOT NULL'
                                               ELSE 'NOT NULL, the template''s nullable' END END,
                                CASE WHEN d.aval->'default' IS DISTINCT FROM d.bval->'default'
                                     THEN format('default %s, the template''s %s', COALESCE(d.bval->>'default', 'none'), COALESCE(d.aval->>'default', 'none')) END)) END AS sentence,
           CASE WHEN d.bkey IS NULL
                THEN jsonb_build_array(jsonb_build_array(3, format('ALTER TABLE %s ADD COLUMN %I %s%s%s', x.qname, d.akey, d.aval->>'type',
                            CASE WHEN d.aval->>'default' IS NOT NULL THEN ' DEFAULT ' || (d.aval->>'default') ELSE '' END,
                            CASE WHEN (d.aval->>'not null')::boolean THEN ' NOT NULL' ELSE '' END)))
                -- a column the template lacks holds data: dropping it is a choice
                WHEN d.akey IS NULL THEN NULL
                ELSE (SELECT jsonb_agg(e) FROM (VALUES
                        (CASE WHEN d.aval->'not null' <> d.bval->'not null' AND NOT (d.aval->>'not null')::boolean
                              THEN jsonb_build_array(1, format('ALTER TABLE %s ALTER COLUMN %I DROP NOT NULL', x.qname, d.akey)) END),
                        (CASE WHEN d.aval->'default' IS DISTINCT FROM d.bval->'default' AND d.aval->>'default' IS NULL
                              THEN jsonb_build_array(1, format('ALTER TABLE %s ALTER COLUMN %I DROP DEFAULT', x.qname, d.akey)) END),
                        (CASE WHEN d.aval->'type' <> d.bval->'type'
                              THEN jsonb_build_array(3, format('ALTER TABLE %s ALTER COLUMN %I TYPE %s', x.qname, d.akey, d.aval->>'type')) END),
                        (CASE WHEN d.aval->'not null' <> d.bval->'not null' AND (d.aval->>'not null')::boolean
                              THEN jsonb_build_array(3, format('ALTER TABLE %s ALTER COLUMN %I SET NOT NULL', x.qname, d.akey)) END),
                        (CASE WHEN d.aval->'default' IS DISTINCT FROM d.bval->'default' AND d.aval->>'default' IS NOT NULL
                              THEN jsonb_build_array(3, format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT %s', x.qname, d.akey, d.aval->>'default')) END)
                      ) AS v(e) WHERE e IS NOT NULL) END AS steps,
           -- a column the template lacks: what advice names (its type)
           CASE WHEN d.akey IS NULL THEN jsonb_build_object('column', d.bkey, 'type', d.bval->>'type') END AS extra
      FROM copy AS x
      CROSS JOIN LATERAL (SELECT a.key, a.value, b.key, b.value
                            FROM jsonb_each(x.tcols->'defs') AS a FULL JOIN jsonb_each(x.ccols->'defs') AS b ON b.key = a.key
                           WHERE a.value IS DISTINCT FROM b.value) AS d(akey, aval, bkey, bval)
    UNION ALL
    -- the column order, when the same columns differ only in it
    SELECT x.shard, x.qname, x.table_name, 2, 'order', format('columns in the order %s, the template''s %s',
                                                 (SELECT string_agg(quote_ident(v), ', ') FROM jsonb_array_elements_text(x.ccols->'names') AS v),
                                                 (SELECT string_agg(quote_ident(v), ', ') FROM jsonb_array_elements_text(x.tcols->'names') AS v)),
           NULL, NULL
      FROM copy AS x
     WHERE x.tcols->'names' <> x.ccols->'names'
       AND (x.tcols->'defs') ?& ARRAY(SELECT jsonb_object_keys(x.ccols->'defs'))
       AND (x.ccols->'defs') ?& ARRAY(SELECT jsonb_object_keys(x.tcols->'defs'))
    UNION ALL
    -- constraints, by name: the copy's dropped, the template's added with
    -- its definition as the catalog gives it
    SELECT x.shard, x.qname, x.table_name, 3, COALESCE(d.akey, d.bkey),
           CASE WHEN d.bkey IS NULL THEN format('constraint %I is missing', d.akey)
                WHEN d.akey IS NULL THEN format('constraint %I is not the template''s', d.bkey)
                ELSE format('constraint %I is %s, the template''s %s', d.akey, d.bval, d.aval) END,
           (SELECT jsonb_agg(e) FROM (VALUES
               (CASE WHEN d.bkey IS NOT NULL THEN jsonb_build_array(1, format('ALTER TABLE %s DROP CONSTRAINT %I', x.qname, d.bkey)) END),
               (CASE WHEN d.akey IS NOT NULL THEN jsonb_build_array(3, format('ALTER TABLE %s ADD CONSTRAINT %I %s', x.qname, d.akey, d.aval)) END)
             ) AS v(e) WHERE e IS NOT NULL), NULL
      FROM copy AS x
      CROSS JOIN LATERAL (SELECT a.key, a.value #>> '{}', b.key, b.value #>> '{}'
                            FROM jsonb_each(x.tcons) AS a FULL JOIN jsonb_each(x.ccons) AS b ON b.key = a.key
                           WHERE a.value IS DISTINCT FROM b.value) AS d(akey, aval, bkey, bval)
    UNION ALL
    -- the template's indexes (not the copy's own), by name: the copy's of
    -- that name dropped, the template's made on the copy (_index_statement())
    SELECT x.shard, x.qname, x.table_name, 4, d.akey,
           CASE WHEN d.bval IS NULL THEN format('index %I is missing', d.akey)
                WHEN d.invalid THEN format('index %I is invalid (a failed build)', d.akey)
                ELSE format('index %I is %s, the template''s %s', d.akey, d.bval, d.aval) END
           || CASE WHEN d.dups > 0 THEN format(', and the copy holds %s %s this unique index refuses', d.dups,
                                               CASE WHEN d.dups = 1 THEN 'key' ELSE 'keys' END) ELSE '' END,
           (SELECT jsonb_agg(e) FROM (VALUES
               (CASE WHEN d.bval IS NOT NULL AND NOT d.invalid THEN jsonb_build_array(1, format('DROP INDEX %I.%I', x.schema_name, d.akey)) END),
               -- built CONCURRENTLY by build_copy_index(), not by align_copy()
               (jsonb_build_array(4, d.akey, d.dups))
             ) AS v(e) WHERE e IS NOT NULL), NULL
      FROM copy AS x
      CROSS JOIN LATERAL (SELECT a.key, a.value #>> '{}', x.cidx->>a.key, COALESCE(x.cidx->>a.key LIKE '% (invalid)', false),
                                 shardid_internal._copy_index_duplicates(x.oid::regclass, (x.tidx_oids->>a.key)::oid, false)::bigint
                            FROM jsonb_each(x.tidx) AS a
                           WHERE (x.cidx->a.key) IS DISTINCT FROM a.value) AS d(akey, aval, bval, invalid, dups)
     -- an index that belongs to a constraint is the constraint's
     WHERE NOT EXISTS (SELECT FROM pg_constraint AS k JOIN pg_class AS i ON i.oid = k.conindid
                        WHERE k.conrelid = x.tmpl_oid AND i.relname = d.akey)
    UNION ALL
    -- the owner (align_copy() gives the copy to the template's owner)
    SELECT x.shard, x.qname, x.table_name, 5, 'owner',
           format('owner %I, the template''s %I', pg_get_userbyid(x.relowner), pg_get_userbyid(x.tmpl_owner)),
           jsonb_build_array(jsonb_build_array(2, pg_get_userbyid(x.tmpl_owner))), NULL
      FROM copy AS x WHERE x.relowner <> x.tmpl_owner
)
SELECT COALESCE(jsonb_agg(jsonb_build_object('shard', g.shard, 'table', g.qname, 'table_name', g.table_name,
                                             'template', g.tmpl_qname, 'differences', g.sentences, 'steps', g.steps,
                                             'extra', g.extra)
                          ORDER BY g.shard, g.qname), '[]')
  FROM (SELECT d.shard, d.qname, d.table_name, (SELECT c.tmpl_qname FROM copy AS c WHERE c.shard = d.shard AND c.table_name = d.table_name) AS tmpl_qname,
               jsonb_agg(d.sentence ORDER BY d.ord, d.what) AS sentences,
               COALESCE(jsonb_agg(d.extra ORDER BY d.what) FILTER (WHERE d.extra IS NOT NULL), '[]') AS extra,
               COALESCE((SELECT jsonb_agg(st ORDER BY (st->>0)::integer, o.ord, o.what, o.i)
                           FROM (SELECT e.ord, e.what, s.st, s.i FROM diff AS e, jsonb_array_elements(e.steps) WITH ORDINALITY AS s(st, i)
                                  WHERE e.shard = d.shard AND e.qname = d.qname) AS o), '[]') AS steps
          FROM diff AS d GROUP BY d.shard, d.qname, d.table_name) AS g
$$;

REVOKE ALL ON FUNCTION shardid_internal._copy_drift() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._copy_drift() IS
    'Node, for check_cluster() and align_copy(): every shard''s copy of a sharded table that differs from its template here (columns, their order, types, NOT NULL, defaults but the id column''s, constraints but foreign keys, the template''s indexes, owner), definitions read from the catalog unchanged, with the differences as sentences and the steps that align it (statements built from the template''s catalog entries, by phase); one statement.';
-- Node, align_copy(): what a shard's copy holds that its template lacks,
-- and that its owner wrote, and that align_copy() keeps (a column, an
-- index of a name the template's have not, a trigger but shardid's, a
-- rule, a policy, extended statistics; constraints and indexes of the
-- template's names are dropped or equal the template's by then), when
-- giving the copy to the template's owner would hand that code to
-- another role; NULL when the copy's owner is a superuser or a member of
-- the template's owner (nothing changes hands), or the copy holds none.
-- Each item named by pg_describe_object(), control characters shown as ?.
CREATE OR REPLACE FUNCTION shardid_internal._align_copy_owner_check(copy regclass, tmpl regclass) RETURNS text[]
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN o.rolsuper OR pg_has_role(o.oid, t.relowner, 'MEMBER') THEN NULL
                ELSE (SELECT array_agg(pg_catalog.translate(x.what, E'\n\r\t', '???') ORDER BY x.what)
                        FROM (SELECT format('column %I', a.attname) AS what
                                FROM pg_attribute AS a
                               WHERE a.attrelid = copy AND a.attnum > 0 AND NOT a.attisdropped
                                 AND NOT EXISTS (SELECT FROM pg_attribute AS b WHERE b.attrelid = tmpl AND b.attname = a.attname
                                                                                AND NOT b.attisdropped)
                              UNION ALL
                              SELECT pg_describe_object('pg_class'::regclass, x.indexrelid, 0)
                                FROM pg_index AS x JOIN pg_class AS i ON i.oid = x.indexrelid
                               WHERE x.indrelid = copy
                                 AND NOT EXISTS (SELECT FROM pg_index AS y JOIN pg_class AS j ON j.oid = y.indexrelid
                                                  WHERE y.indrelid = tmpl AND j.relname = i.relname)
                              UNION ALL
                              SELECT pg_describe_object('pg_trigger'::regclass, g.oid, 0)
                                FROM pg_trigger AS g JOIN pg_proc AS p ON p.oid = g.tgfoid
                               WHERE g.tgrelid = copy AND NOT g.tgisinternal
                                 AND p.pronamespace NOT IN ('shardid'::regnamespace, 'shardid_internal'::regnamespace)
                              UNION ALL
                              SELECT pg_describe_object('pg_rewrite'::regclass, w.oid, 0) FROM pg_rewrite AS w WHERE w.ev_class = copy
                              UNION ALL
                              SELECT pg_describe_object('pg_policy'::regclass, p.oid, 0) FROM pg_policy AS p WHERE p.polrelid = copy
                              UNION ALL
                              SELECT pg_describe_object('pg_statistic_ext'::regclass, s.oid, 0) FROM pg_statistic_ext AS s WHERE s.stxrelid = copy
                             ) AS x) END
      FROM pg_class AS c
      JOIN pg_roles AS o ON o.oid = c.relowner
      CROSS JOIN (SELECT k.relowner FROM pg_class AS k WHERE k.oid = tmpl) AS t
     WHERE c.oid = copy
$$;

REVOKE ALL ON FUNCTION shardid_internal._align_copy_owner_check(regclass, regclass) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._align_copy_owner_check(regclass, regclass) IS
    'Node, align_copy(): what a copy holds that its template lacks (column, index, trigger but shardid''s, rule, policy, extended statistics) when giving it to the template''s owner would hand its owner''s code to another role; NULL when nothing would change hands.';
-- Node: check_cluster()'s fix of copy_differs. Brings one shard's copy of
-- a sharded table in line with its template here by the steps
-- _copy_drift() builds from the template's catalog entries (only the
-- table's name changes), each run through the one fence as the copy's
-- owner (_run_as_owner(): a security-restricted operation), never as the
-- caller, in three phases:
--   1. removals (the copy's constraints and indexes that differ, a
--      default or NOT NULL the template lacks), which run no code, as the
--      copy's owner;
--   2. the owner, when it is not the template's: given to the template's
--      owner by the caller (ALTER TABLE ... OWNER runs no table code), and
--      only when that hands no code of the copy's owner to another role:
--      the copy's owner is a superuser or a member of the template's
--      owner, or after phase 1 the copy holds nothing its template lacks
--      (a column, an index, a trigger but shardid's, a rule, a policy,
--      extended statistics); otherwise 42501, and nothing is changed;
--   3. additions (columns, types, NOT NULL, defaults, the template's
--      constraints), which run the template's code (a rewrite evaluates
--      CHECKs), as the owner the copy has now.
-- The copy is locked (ACCESS EXCLUSIVE) first. An index the copy lacks is
-- not built here, where it would hold that lock: build_copy_index()
-- builds it CONCURRENTLY (check_cluster() gives each its own row). A
-- column the template lacks, or the columns' order, is no repair: it is
-- left. What is left is said in a NOTICE. Returns each statement it ran, in order. One transaction:
-- an error leaves the copy as it was.
CREATE OR REPLACE FUNCTION shardid.align_copy(shard integer, table_name name) RETURNS SETOF text
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    copy  regclass;
    tmpl  regclass;
    d     jsonb;
    st    jsonb;
    owner oid;
    other text[];
BEGIN
    SELECT pg_catalog.to_regclass(pg_catalog.format('%I.%I', r.schema_name, t.table_name)),
           pg_catalog.to_regclass(pg_catalog.format('%I.%I', t.template_schema, t.template_name))
      INTO copy, tmpl
      FROM shardid.shard_registry AS r, shardid.sharded_tables AS t
     WHERE r.shard = align_copy.shard AND t.table_name = align_copy.table_name;
    IF copy IS NULL OR tmpl IS NULL THEN
        RAISE EXCEPTION 'shard % has no copy of sharded table % here', shard, pg_catalog.quote_ident(table_name)
            USING ERRCODE = 'undefined_table',
                  HINT = 'shardid.shard_registry lists the shards of this node, shardid.sharded_tables the sharded tables.';
    END IF;
    EXECUTE pg_catalog.format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', copy);
    SELECT e INTO d FROM jsonb_array_elements(shardid_internal._copy_drift()) AS e
     WHERE (e->>'shard')::integer = align_copy.shard AND e->>'table_name' = align_copy.table_name;
    IF d IS NULL THEN
        RETURN;
    END IF;
    -- the owner first: refused before anything changes
    SELECT c.relowner INTO owner FROM pg_class AS c WHERE c.oid = copy;
    FOR st IN SELECT s FROM jsonb_array_elements(d->'steps') AS s WHERE (s->>0)::integer = 2 LOOP
        other := shardid_internal._align_copy_owner_check(copy, tmpl);
        IF other IS NOT NULL THEN
            RAISE EXCEPTION 'copy % is owned by %, not by its template''s owner %, and holds what its template lacks: %',
                            copy, pg_catalog.quote_ident(pg_get_userbyid(owner)),
                            pg_catalog.quote_ident(st->>1), pg_catalog.array_to_string(other, ', ')
                USING ERRCODE = 'insufficient_privilege',
                      DETAIL = pg_catalog.format('Given to %I, the code of %I there would run as %I.', st->>1, pg_get_userbyid(owner), st->>1),
                      HINT = pg_catalog.format('Let %I drop them, then call shardid.align_copy(%s, %L) again; or give the template to %I.',
                                               pg_get_userbyid(owner), shard, table_name, pg_get_userbyid(owner));
        END IF;
    END LOOP;
    -- (phase 4, an index to build, is build_copy_index()'s: CONCURRENTLY)
    FOR st IN SELECT s FROM jsonb_array_elements(d->'steps') AS s WHERE (s->>0)::integer < 4 LOOP
        SELECT c.relowner INTO owner FROM pg_class AS c WHERE c.oid = copy;
        IF (st->>0)::integer = 2 THEN
            EXECUTE pg_catalog.format('ALTER TABLE %s OWNER TO %I', copy, st->>1);
            RETURN NEXT pg_catalog.format('ALTER TABLE %s OWNER TO %I', copy, st->>1);
        ELSE
            PERFORM shardid_internal._run_as_owner(owner::regrole, st->>1);
            RETURN NEXT st->>1;
        END IF;
    END LOOP;
    SELECT e INTO d FROM jsonb_array_elements(shardid_internal._copy_drift()) AS e
     WHERE (e->>'shard')::integer = align_copy.shard AND e->>'table_name' = align_copy.table_name;
    IF d IS NOT NULL THEN
        RAISE NOTICE 'copy % still differs from its template: %', copy, (SELECT pg_catalog.string_agg(x, '; ') FROM jsonb_array_elements_text(d->'differences') AS x)
            USING HINT = 'An index of the template is built CONCURRENTLY by CALL shardid.build_copy_index(); a column the template lacks holds data, and the columns'' order is no repair: check_cluster() shows each.';
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid.align_copy(integer, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid.align_copy(integer, name) IS
    'Node: check_cluster()''s fix of copy_differs: brings a shard''s copy of a sharded table in line with its template (removals, the owner, additions; an index it lacks is build_copy_index()''s, CONCURRENTLY), each statement built from the template''s catalog entries and run as the copy''s owner in a security-restricted operation; gives the copy to the template''s owner only when that hands no other role''s code to it (42501 otherwise); returns the statements it ran.';
-- Node: check_cluster()'s fix of privileges_differ. Brings one shard's
-- privileges in line with what the templates here record
-- (_privilege_steps(): each copy gets exactly its template's grants, the
-- schema and the generator the USAGE those grants need), each statement
-- run through the one fence as the owner of what it touches
-- (_align_privileges: a security-restricted operation, never as the
-- caller). Returns each statement it ran; none when nothing differs. One
-- transaction: an error leaves the shard as it was.
CREATE OR REPLACE FUNCTION shardid.align_privileges(shard integer) RETURNS SETOF text
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF shard IS NULL THEN
        RAISE EXCEPTION 'align_privileges() arguments must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF NOT EXISTS (SELECT FROM shardid.shard_registry AS r WHERE r.shard = align_privileges.shard) THEN
        RAISE EXCEPTION 'shard % is not registered on this node', shard
            USING ERRCODE = 'undefined_object',
                  HINT = 'shardid.shard_registry lists the shards of this node; check_cluster() names the node of each.';
    END IF;
    RETURN QUERY SELECT * FROM shardid_internal._align_privileges(ARRAY[shard], NULL, false, false);
END
$$;

REVOKE ALL ON FUNCTION shardid.align_privileges(integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid.align_privileges(integer) IS
    'Node: check_cluster()''s fix of privileges_differ: gives a shard''s copies exactly their templates'' grants and its schema and generator the USAGE those grants need, each statement run as the owner of what it touches in a security-restricted operation; returns the statements it ran.';
-- fixes that never block writes (issue 46): indexes built CONCURRENTLY
-- Node, for build_copy_index() and copy_index_duplicates(): a shard's
-- copy of a sharded table and the template's index of that name (42P01
-- without the copy, 42704 without the index on the template), with the
-- copy's own index of that name if it has one (NULL otherwise) and
-- whether that one is valid.
CREATE OR REPLACE FUNCTION shardid_internal._copy_index(shard integer, table_name name, index_name name,
                                                        OUT copy regclass, OUT index oid, OUT own oid, OUT own_valid boolean)
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    tmpl regclass;
BEGIN
    SELECT to_regclass(format('%I.%I', r.schema_name, t.table_name)), to_regclass(format('%I.%I', t.template_schema, t.template_name))
      INTO copy, tmpl
      FROM shardid.shard_registry AS r, shardid.sharded_tables AS t
     WHERE r.shard = _copy_index.shard AND t.table_name = _copy_index.table_name;
    IF copy IS NULL OR tmpl IS NULL THEN
        RAISE EXCEPTION 'shard % has no copy of sharded table % here', shard, quote_ident(table_name)
            USING ERRCODE = 'undefined_table',
                  HINT = 'shardid.shard_registry lists the shards of this node, shardid.sharded_tables the sharded tables.';
    END IF;
    SELECT x.indexrelid INTO index FROM pg_index AS x JOIN pg_class AS i ON i.oid = x.indexrelid
     WHERE x.indrelid = tmpl AND i.relname = index_name;
    IF index IS NULL THEN
        RAISE EXCEPTION 'the template of sharded table % has no index %', quote_ident(table_name), quote_ident(index_name)
            USING ERRCODE = 'undefined_object';
    END IF;
    SELECT x.indexrelid, x.indisvalid INTO own, own_valid FROM pg_index AS x JOIN pg_class AS i ON i.oid = x.indexrelid
     WHERE x.indrelid = copy AND i.relname = index_name;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._copy_index(integer, name, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._copy_index(integer, name, name) IS
    'Node, build_copy_index() and copy_index_duplicates(): a shard''s copy, its template''s index of a name (42P01, 42704 when missing), and the copy''s own index of that name (valid or not), if any.';
-- Node: the duplicates that keep a template's unique index off a shard's
-- copy, read through the fence (_run_as_owner_read: as the copy's owner,
-- read-only, for the index's expressions and predicate are the owner's
-- code). The query groups the copy's rows by the index's keys (each key
-- column or expression as the catalog gives it, pg_get_indexdef() under
-- the pinned search_path; within its predicate; NULL keys apart unless
-- the index has NULLS NOT DISTINCT) and keeps the keys with more than one
-- row. listing false: how many keys are duplicated (a bigint, as text);
-- true: each key (its row, as text) with its rows, as a JSON array.
-- NULL when the index is not unique.
CREATE OR REPLACE FUNCTION shardid_internal._copy_index_duplicates(copy regclass, index oid, listing boolean) RETURNS text
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    x     record;
    keys  text;
    cond  text;
    sql   text;
BEGIN
    SELECT i.indisunique, i.indnkeyatts, i.indrelid, pg_get_expr(i.indpred, i.indrelid, true) AS pred,
           COALESCE((to_jsonb(i)->>'indnullsnotdistinct')::boolean, false) AS nulls_not_distinct
      INTO x FROM pg_index AS i WHERE i.indexrelid = index;
    IF NOT FOUND OR NOT x.indisunique THEN
        RETURN NULL;
    END IF;
    SELECT string_agg(format('(%s)', pg_get_indexdef(index, k, true)), ', ' ORDER BY k),
           string_agg(format('(%s) IS NOT NULL', pg_get_indexdef(index, k, true)), ' AND ' ORDER BY k)
      INTO keys, cond
      FROM generate_series(1, x.indnkeyatts) AS k;
    cond := concat_ws(' AND ', CASE WHEN x.pred IS NOT NULL THEN format('(%s)', x.pred) END,
                      CASE WHEN NOT x.nulls_not_distinct THEN cond END);
    sql := format('SELECT ROW(%s)::pg_catalog.text AS key, pg_catalog.count(*) AS row_count FROM %s%s GROUP BY %s HAVING pg_catalog.count(*) OPERATOR(pg_catalog.>) 1',
                  keys, copy, CASE WHEN cond <> '' THEN ' WHERE ' || cond ELSE '' END, keys);
    sql := CASE WHEN listing
                THEN format('SELECT COALESCE(pg_catalog.jsonb_agg(pg_catalog.to_jsonb(d) ORDER BY d.row_count DESC, d.key), ''[]'')::pg_catalog.text FROM (%s) AS d', sql)
                ELSE format('SELECT pg_catalog.count(*)::pg_catalog.text FROM (%s) AS d', sql) END;
    RETURN shardid_internal._run_as_owner_read((SELECT c.relowner FROM pg_class AS c WHERE c.oid = copy)::regrole, sql);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._copy_index_duplicates(regclass, oid, boolean) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._copy_index_duplicates(regclass, oid, boolean) IS
    'Node: the keys of a unique index (of the template) that a shard''s copy holds more than once, read as the copy''s owner, read-only: how many, or (listing) each with its rows as JSON; NULL for an index that is not unique.';
-- copy_index_duplicates(shard, table_name, index_name): check_cluster()'s
-- fix of a copy that lacks a unique index of its template and holds rows
-- the index would refuse: the duplicated keys, each with how many rows
-- have it (read as the copy's owner, read-only:
-- _copy_index_duplicates). Once they are gone, CALL
-- shardid.build_copy_index() builds the index. Not executable by PUBLIC:
-- it reads a tenant's rows.
CREATE OR REPLACE FUNCTION shardid.copy_index_duplicates(shard integer, table_name name, index_name name)
    RETURNS TABLE (key text, row_count bigint)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    x record;
BEGIN
    x := shardid_internal._copy_index(shard, table_name, index_name);
    RETURN QUERY SELECT d.key, d.row_count
                   FROM jsonb_to_recordset(shardid_internal._copy_index_duplicates(x.copy, x.index, true)::jsonb)
                        AS d(key text, row_count bigint);
END
$$;

REVOKE ALL ON FUNCTION shardid.copy_index_duplicates(integer, name, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid.copy_index_duplicates(integer, name, name) IS
    'Node: check_cluster()''s fix of a shard''s copy that lacks its template''s unique index and holds rows it would refuse: each duplicated key with its rows (read as the copy''s owner, read-only). Delete or change them, then CALL shardid.build_copy_index().';
-- Node, build_copy_index(): what building a template's index on a shard's
-- copy takes, checked before anything is built: nothing when the copy has
-- it already (valid, the template's definition: a NOTICE says so); 55000
-- when the copy has another index of that name (align_copy() drops it);
-- 23505 when the index is unique and the copy holds keys it would refuse
-- (the HINT is the copy_index_duplicates() call that lists them: a build
-- that cannot succeed is not started). Else {statement: CREATE [UNIQUE]
-- INDEX CONCURRENTLY of the template's definition on the copy (from
-- _index_statement()'s shape: no name replaced in text), cleanup: the
-- DROP INDEX CONCURRENTLY of an invalid index of that name a failed build
-- left, if any}. A partitioned copy (ONLY) cannot build CONCURRENTLY
-- (0A000; align_copy() builds it in a transaction); without dblink, 55000.
CREATE OR REPLACE FUNCTION shardid_internal._build_copy_index_start(shard integer, table_name name, index_name name) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    x     record;
    shape text;
    head  text;
    uniq  text;
    dups  bigint;
    again text := format('CALL shardid.build_copy_index(%s, %L, %L);', shard, table_name, index_name);
BEGIN
    x := shardid_internal._copy_index(shard, table_name, index_name);
    IF NOT EXISTS (SELECT FROM pg_extension AS e WHERE e.extname = 'dblink') THEN
        RAISE EXCEPTION 'build_copy_index() needs the dblink extension'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'CREATE INDEX CONCURRENTLY cannot run in a transaction block: it runs on a connection of its own to this database.',
                  HINT = format('CREATE EXTENSION dblink; in this database (contrib), then %s', again);
    END IF;
    shape := shardid_internal._index_statement(x.index);
    IF x.own IS NOT NULL AND x.own_valid THEN
        IF shardid_internal._index_statement(x.own) = shape THEN
            RAISE NOTICE 'build_copy_index: % has index % already', x.copy, quote_ident(index_name);
            RETURN jsonb_build_object('statement', NULL);
        END IF;
        RAISE EXCEPTION 'copy % has another index named %: %', x.copy, quote_ident(index_name), shardid_internal._index_statement(x.own)
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('The template''s is %s.', shape),
                  HINT = format('SELECT * FROM shardid.align_copy(%s, %L); replaces it.', shard, table_name);
    END IF;
    dups := shardid_internal._copy_index_duplicates(x.copy, x.index, false)::bigint;
    IF dups > 0 THEN
        RAISE EXCEPTION 'copy % holds % % that unique index % refuses', x.copy, dups, CASE WHEN dups = 1 THEN 'key' ELSE 'keys' END,
                        quote_ident(index_name)
            USING ERRCODE = 'unique_violation',
                  DETAIL = 'A build would fail on them and leave an invalid index; none was started.',
                  HINT = format('List them: SELECT * FROM shardid.copy_index_duplicates(%s, %L, %L); delete or change those rows, then %s',
                                shard, table_name, index_name, again);
    END IF;
    uniq := CASE WHEN starts_with(shape, 'CREATE UNIQUE ') THEN 'UNIQUE ' ELSE '' END;
    head := format('CREATE %sINDEX ON USING ', uniq);
    IF NOT starts_with(shape, head) THEN
        RAISE EXCEPTION 'index % of % cannot be built CONCURRENTLY: it is on a partitioned table', quote_ident(index_name), x.copy
            USING ERRCODE = 'feature_not_supported',
                  HINT = format('SELECT * FROM shardid.align_copy(%s, %L); builds it in a transaction (writes to the copy wait for it).', shard, table_name);
    END IF;
    RETURN jsonb_build_object(
        'statement', format('CREATE %sINDEX CONCURRENTLY %I ON %s USING %s', uniq, index_name, x.copy, substr(shape, length(head) + 1)),
        'cleanup', CASE WHEN x.own IS NOT NULL
                        THEN jsonb_build_array(format('DROP INDEX CONCURRENTLY %s', x.own::regclass)) ELSE '[]' END);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._build_copy_index_start(integer, name, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._build_copy_index_start(integer, name, name) IS
    'Node, build_copy_index(): the CREATE INDEX CONCURRENTLY that gives a shard''s copy its template''s index (and the drop of an invalid one a failed build left), or nothing when it is there; refused first when another index has the name (55000), when the copy holds keys a unique index refuses (23505, HINT: copy_index_duplicates()), or on a partitioned copy (0A000); 55000 without dblink.';
-- Node, build_copy_index(): waits for the build sent on conn
-- (_apply_ddl_busy: a cancel of this session cancels it there too) while
-- the caller commits between calls (returns true while it runs); once it
-- ended, takes its result, and on an error drops the invalid index it
-- left (over conn: outside a transaction block) before raising it.
-- Closes conn when done.
CREATE OR REPLACE FUNCTION shardid_internal._build_copy_index_wait(conn text, copy regclass, index_name name) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    st  text;
    msg text;
    det text;
    hnt text;
BEGIN
    IF shardid_internal._apply_ddl_busy(conn) THEN
        RETURN true;
    END IF;
    BEGIN
        PERFORM shardid_internal._node_wait(conn, NULL);
    EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
        BEGIN
            PERFORM shardid_internal._node(conn, format('DROP INDEX CONCURRENTLY IF EXISTS %I.%I',
                                                        (SELECT n.nspname FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
                                                          WHERE c.oid = copy), index_name));
        EXCEPTION WHEN OTHERS THEN
            NULL;
        END;
        PERFORM shardid_internal._node_close(conn);
        PERFORM shardid_internal._raise(st, format('%s (on %s)', msg, copy), det, hnt);
    END;
    PERFORM shardid_internal._node_close(conn);
    RETURN false;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._build_copy_index_wait(text, regclass, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._build_copy_index_wait(text, regclass, name) IS
    'Node, build_copy_index(): whether the build sent on a dblink connection still runs; once it ended, its error raised after the invalid index it left is dropped; the connection closed.';
-- build_copy_index(shard, table_name, index_name): check_cluster()'s fix of
-- a shard's copy that lacks an index of its template (or has an invalid
-- one a failed build left): the template's definition built on the copy
-- CONCURRENTLY, so writes to the copy go on. The build runs outside a
-- transaction block, on a dblink connection to this database (this
-- server's socket, the session's role, as apply_ddl() CONCURRENTLY does;
-- PostgreSQL runs the owner's index expressions as the owner), and this
-- session commits while it runs, holding no snapshot the build waits for.
-- Refused before anything is built when it could not succeed: a unique
-- index over keys the copy holds twice (23505, HINT: the
-- copy_index_duplicates() call that lists them). A procedure because it
-- commits; no SET clause: it holds only the steps and their COMMITs.
CREATE OR REPLACE PROCEDURE shardid.build_copy_index(shard integer, table_name name, index_name name)
    LANGUAGE plpgsql
AS $$
DECLARE
    conn CONSTANT text := 'shardid_build_copy_index';
    b    jsonb;
    sql  text;
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid.build_copy_index()',
                                             'while the index is built',
                                             'CALL it on its own.');
    b := shardid_internal._build_copy_index_start(shard, table_name, index_name);
    COMMIT;
    IF (b OPERATOR(pg_catalog.->>) 'statement') IS NULL THEN
        RETURN;
    END IF;
    PERFORM shardid_internal._apply_ddl_connect(conn, NULL, NULL);
    FOR sql IN SELECT pg_catalog.jsonb_array_elements_text(b OPERATOR(pg_catalog.->) 'cleanup') LOOP
        PERFORM shardid_internal._node(conn, sql);
    END LOOP;
    PERFORM shardid_internal._node_send(conn, b OPERATOR(pg_catalog.->>) 'statement');
    COMMIT;
    WHILE shardid_internal._build_copy_index_wait(conn, (shardid_internal._copy_index(shard, table_name, index_name)).copy, index_name) LOOP
        COMMIT;
    END LOOP;
END
$$;

REVOKE ALL ON PROCEDURE shardid.build_copy_index(integer, name, name) FROM PUBLIC;

COMMENT ON PROCEDURE shardid.build_copy_index(integer, name, name) IS
    'Node: check_cluster()''s fix of a shard''s copy that lacks an index of its template: builds the template''s definition on the copy CONCURRENTLY (writes go on), over a dblink connection to this database while this session commits, dropping an invalid one a failed build left; refused first for a unique index over keys the copy holds twice (23505, HINT: copy_index_duplicates()). CALL it on its own.';
-- Node: check_cluster()'s fix of move_leftover: drops one thing an
-- interrupted move left here, by what it is and its name, which must be a
-- move's (shardid_move_<shard>_<move id>; 22023 otherwise): a
-- publication, a subscription (disabled and detached from its slot first,
-- _move_unsubscribe(), which drops 15's move role too), a replication slot
-- (55006 while a process uses it) or 15's move role. Touches no table; the
-- router knows which moves are in progress, so call it for what
-- check_cluster() reports. Returns whether it dropped something.
CREATE OR REPLACE FUNCTION shardid.drop_move_leftover(what text, name name) RETURNS boolean
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, pg_temp
    SET client_min_messages = warning
AS $$
BEGIN
    IF name IS NULL OR name::text !~ '^shardid_move_[0-9]+_[0-9]+$' THEN
        RAISE EXCEPTION 'shardid: % is not the name of a move''s object', pg_catalog.to_jsonb(name::text)::text
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'A move names what it makes shardid_move_<shard>_<move id>.';
    END IF;
    CASE what
        WHEN 'publication' THEN
            IF EXISTS (SELECT FROM pg_publication AS p WHERE p.pubname = drop_move_leftover.name) THEN
                EXECUTE pg_catalog.format('DROP PUBLICATION %I', name);
                RETURN true;
            END IF;
        WHEN 'subscription', 'role' THEN
            IF EXISTS (SELECT FROM pg_subscription AS s WHERE s.subname = drop_move_leftover.name)
               OR EXISTS (SELECT FROM pg_roles AS r WHERE r.rolname = drop_move_leftover.name) THEN
                PERFORM shardid_internal._move_unsubscribe(name);
                RETURN true;
            END IF;
        WHEN 'replication slot' THEN
            IF EXISTS (SELECT FROM pg_replication_slots AS s WHERE s.slot_name = drop_move_leftover.name
                                                              AND s.database = current_database()) THEN
                PERFORM pg_drop_replication_slot(name);
                RETURN true;
            END IF;
        ELSE
            RAISE EXCEPTION 'shardid: % is no kind of move leftover', pg_catalog.to_jsonb(what)::text
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'One of publication, subscription, replication slot, role.';
    END CASE;
    RETURN false;
END
$$;

REVOKE ALL ON FUNCTION shardid.drop_move_leftover(text, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid.drop_move_leftover(text, name) IS
    'Node: check_cluster()''s fix of move_leftover: drops a publication, subscription, replication slot or role an interrupted move left here, by its name (a move''s: shardid_move_<shard>_<move id>); returns whether it dropped something.';
-- Node: why the recorded retired copy in the schema schema_oid may not be
-- dropped, or NULL when it may. It may be dropped only while it holds
-- nothing but its own objects: the relations retire_shard() recorded
-- (relations) that are still in it, and what depends on those alone
-- (indexes, constraints, defaults, triggers, policies, TOAST, row types:
-- dropped with them). Anything else is another's and keeps the schema:
-- a registered shard there (attach_shard() took it back), an object in
-- the schema that was not recorded (a table moved in, a view, a function,
-- a type), an object elsewhere that depends on its objects (a view over
-- them, a foreign key to them, a partition attached to them, a default
-- that uses its generator, as a recorded table moved out keeps). Names
-- in the reason are described by PostgreSQL, control characters shown
-- as '?': it is read, never executed.
CREATE OR REPLACE FUNCTION shardid_internal._retired_copy_check(schema_oid oid, relations oid[]) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nsp    name;
    shard  integer;
    others text[];
BEGIN
    SELECT n.nspname INTO nsp FROM pg_namespace AS n WHERE n.oid = schema_oid;
    IF NOT FOUND THEN
        RETURN 'its schema was dropped by hand: drop_retired_copies() forgets the record';
    END IF;
    SELECT r.shard INTO shard FROM shardid.shard_registry AS r WHERE r.schema_name = nsp;
    IF FOUND THEN
        RETURN format('it is registered as shard %s here', shard);
    END IF;
    WITH RECURSIVE
    own AS (  -- the recorded relations still in the schema
        SELECT 'pg_class'::regclass::oid AS classid, c.oid AS objid
          FROM pg_class AS c
         WHERE c.oid = ANY (relations) AND c.relnamespace = schema_oid),
    mine (classid, objid) AS (  -- and what depends on them alone, in the schema (or TOAST)
        SELECT o.classid, o.objid FROM own AS o
        UNION
        SELECT d.classid, d.objid
          FROM mine AS m
          JOIN pg_depend AS d ON d.refclassid = m.classid AND d.refobjid = m.objid AND d.deptype IN ('a', 'i')
          LEFT JOIN pg_class AS c ON d.classid = 'pg_class'::regclass AND c.oid = d.objid
         WHERE c.oid IS NULL OR c.relnamespace IN (schema_oid, 'pg_toast'::regnamespace)),
    foreign_ AS (
        -- in the schema, not recorded
        SELECT d.classid, d.objid, d.objsubid
          FROM pg_depend AS d
         WHERE d.refclassid = 'pg_namespace'::regclass AND d.refobjid = schema_oid
           AND NOT EXISTS (SELECT FROM own AS o WHERE o.classid = d.classid AND o.objid = d.objid)
        UNION
        -- depending on its objects, not its own
        SELECT d.classid, d.objid, d.objsubid
          FROM pg_depend AS d
          JOIN mine AS m ON m.classid = d.refclassid AND m.objid = d.refobjid
         WHERE d.deptype NOT IN ('e', 'x')
           AND NOT EXISTS (SELECT FROM mine AS m2 WHERE m2.classid = d.classid AND m2.objid = d.objid))
    SELECT array_agg(DISTINCT regexp_replace(COALESCE(pg_describe_object(COALESCE(v.classid, f.classid), COALESCE(v.objid, f.objid), 0),
                                                      'an object'), '[[:cntrl:]]', '?', 'g'))
      INTO others
      FROM foreign_ AS f
      LEFT JOIN LATERAL (  -- a view's rule: the view
          SELECT 'pg_class'::regclass::oid AS classid, w.ev_class AS objid
            FROM pg_rewrite AS w WHERE f.classid = 'pg_rewrite'::regclass AND w.oid = f.objid) AS v ON true;
    IF others IS NOT NULL THEN
        RETURN format('it holds or is used by objects it did not record: %s%s',
                      array_to_string(others[1:5], ', '),
                      CASE WHEN cardinality(others) > 5 THEN format(' and %s more', cardinality(others) - 5) ELSE '' END);
    END IF;
    RETURN NULL;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._retired_copy_check(oid, oid[]) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._retired_copy_check(oid, oid[]) IS
    'Node: why a recorded retired copy may not be dropped (registered again, objects it did not record in it or depending on its objects), or NULL when it holds only its own.';
-- Node: the retired copies of moved shards in this database. A retired
-- copy is what retire_shard() recorded in shardid.retired_schemas (the
-- schema by OID, named as it is now), with whether drop_retired_copies()
-- may drop it and, if not, why (_retired_copy_check; a record whose
-- schema was dropped by hand is droppable: the cleanup forgets it). Also listed, never
-- droppable: unregistered schemas that look like a retired copy (a table
-- there carries retire_shard()'s trigger, known by its function) but were
-- not recorded: a copy retired before 0.3, a restored node's, or a
-- tenant's schema its retired table was moved into; their shard and node
-- come from the trigger's arguments, retired_at from the move ID in the
-- name (<schema>_moved_<move id>, NULL when it has none).
CREATE OR REPLACE FUNCTION shardid_internal._retired_here()
    RETURNS TABLE (schema_name name, shard integer, moved_to text, retired_at timestamptz, bytes bigint,
                   recorded boolean, droppable boolean, reason text)
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    WITH copies AS (
        SELECT COALESCE(n.nspname, r.schema_name) AS schema_name, r.shard, r.moved_to, r.retired_at, n.oid AS nsp,
               true AS recorded, shardid_internal._retired_copy_check(r.schema_oid, r.relations) AS reason
          FROM shardid.retired_schemas AS r
          LEFT JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) r.schema_oid
        UNION ALL
        SELECT n.nspname,
               pg_catalog.min(pg_catalog.split_part(pg_catalog.encode(t.tgargs, 'escape'), '\000', 1))::integer,
               pg_catalog.min(pg_catalog.split_part(pg_catalog.encode(t.tgargs, 'escape'), '\000', 2)),
               pg_catalog.to_timestamp(pg_catalog.substring(n.nspname::text, '_moved_([0-9]{10,15})(_[0-9]+)?$')::double precision
                                       OPERATOR(pg_catalog./) 1000),
               n.oid, false,
               'not recorded by a move (retired before 0.3, on a restored node, or not a retired copy): drop_retired_copies() never drops it'
          FROM pg_catalog.pg_trigger AS t
          JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) t.tgrelid
          JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
         WHERE t.tgfoid OPERATOR(pg_catalog.=) 'shardid_internal._refuse_retired_write()'::pg_catalog.regprocedure
           AND NOT EXISTS (SELECT FROM shardid.shard_registry AS r WHERE r.schema_name OPERATOR(pg_catalog.=) n.nspname)
           AND NOT EXISTS (SELECT FROM shardid.retired_schemas AS x WHERE x.schema_oid OPERATOR(pg_catalog.=) n.oid)
         GROUP BY n.oid, n.nspname)
    SELECT c.schema_name, c.shard, c.moved_to, c.retired_at,
           (SELECT COALESCE(pg_catalog.sum(pg_catalog.pg_total_relation_size(c2.oid)), 0)::bigint
              FROM pg_catalog.pg_class AS c2
             WHERE c2.relnamespace OPERATOR(pg_catalog.=) c.nsp
               AND c2.relkind OPERATOR(pg_catalog.=) ANY ('{r,m,p}'::"char"[])),
           c.recorded, c.reason IS NULL OR (c.recorded AND c.nsp IS NULL), c.reason
      FROM copies AS c
     ORDER BY c.schema_name
$$;

REVOKE ALL ON FUNCTION shardid_internal._retired_here() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._retired_here() IS
    'Node: the retired copies recorded here (shardid.retired_schemas) and unregistered schemas that only look like one (never droppable): schema, shard, node it moved to, when, size in bytes, recorded, droppable, and why not.';
-- Node, for check_cluster() on the router: in one value, what the router
-- compares between nodes: the layout, the registered shards, the
-- templates' definitions, the shards' copies that differ from their
-- templates (_copy_drift()), the shards whose privileges differ from
-- the templates' (_privilege_steps()), the retired copies, and what a move leaves
-- behind when it is interrupted (its publication, subscription, slot and,
-- on 15, role, all named shardid_move_<shard>_<move id>; shardid's freeze
-- triggers, known by their function), and unfinished apply_ddl() changes
-- (ID, template, command) when this version has the ledger. The router
-- validates every name before it builds text with it
-- (_check_unsafe_name()).
CREATE OR REPLACE FUNCTION shardid_internal._node_facts() RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    facts jsonb;
    ddl   jsonb := '[]';
BEGIN
    SELECT jsonb_build_object(
        'layout', (SELECT jsonb_build_object('epoch', pg_catalog.to_char(l.epoch AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS') || '+00', 'shard_bits', l.shard_bits, 'seq_bits', l.seq_bits)
                     FROM shardid.layout() AS l),
        'shards', COALESCE((SELECT jsonb_agg(jsonb_build_object('shard', r.shard, 'schema', r.schema_name) ORDER BY r.shard)
                              FROM shardid.shard_registry AS r), '[]'),
        'templates', COALESCE((SELECT jsonb_object_agg(t.table_name, shardid_internal._template_definition(t.table_name))
                                 FROM shardid.sharded_tables AS t), '{}'),
        'drift', shardid_internal._copy_drift(),
        -- issue 46: the shards whose privileges differ from the templates'
        'privileges', COALESCE((SELECT jsonb_agg(jsonb_build_object('shard', p.shard, 'differences', p.d) ORDER BY p.shard)
                                  FROM (SELECT s.shard, jsonb_agg(s.what ORDER BY s.what COLLATE "C") AS d
                                          FROM shardid_internal._privilege_steps(NULL) AS s GROUP BY s.shard) AS p), '[]'),
        'retired', COALESCE((SELECT jsonb_agg(pg_catalog.to_jsonb(x)) FROM shardid_internal._retired_here() AS x), '[]'),
        'frozen', COALESCE((SELECT jsonb_agg(DISTINCT n.nspname)
                              FROM pg_trigger AS t
                              JOIN pg_class AS c ON c.oid = t.tgrelid
                              JOIN pg_namespace AS n ON n.oid = c.relnamespace
                             WHERE t.tgfoid = 'shardid_internal._refuse_frozen_write()'::regprocedure), '[]'),
        'publications', COALESCE((SELECT jsonb_agg(p.pubname ORDER BY p.pubname) FROM pg_publication AS p
                                   WHERE p.pubname LIKE 'shardid\_move\_%'), '[]'),
        'subscriptions', COALESCE((SELECT jsonb_agg(s.subname ORDER BY s.subname) FROM pg_subscription AS s
                                    WHERE s.subdbid = (SELECT d.oid FROM pg_database AS d WHERE d.datname = current_database())
                                      AND s.subname LIKE 'shardid\_move\_%'), '[]'),
        'slots', COALESCE((SELECT jsonb_agg(s.slot_name ORDER BY s.slot_name) FROM pg_replication_slots AS s
                            WHERE s.database = current_database() AND s.slot_name LIKE 'shardid\_move\_%'), '[]'),
        'roles', COALESCE((SELECT jsonb_agg(a.rolname ORDER BY a.rolname) FROM pg_roles AS a
                            WHERE a.rolname LIKE 'shardid\_move\_%'), '[]'))
      INTO facts;
    IF to_regclass('shardid.ddl_changes') IS NOT NULL THEN
        EXECUTE 'SELECT COALESCE(jsonb_agg(jsonb_build_object(''change_id'', c.change_id, ''template'', c.template, ''command'', c.command)
                                           ORDER BY c.started_at), ''[]'')
                   FROM shardid.ddl_changes AS c WHERE c.finished_at IS NULL'
           INTO ddl;
    END IF;
    RETURN facts || jsonb_build_object('ddl_unfinished', ddl);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._node_facts() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._node_facts() IS
    'Node, for check_cluster(): the layout, registered shards, template definitions, copies that differ from their templates, shards whose privileges differ from the templates'', retired copies, leftovers of moves and unfinished apply_ddl() changes here, as one jsonb value.';
-- Router, check_cluster(): a node's facts (_node_facts()) without what
-- holds a control character (_check_unsafe_name() reports it): sharded
-- tables, frozen schemas, publications, subscriptions, slots, roles and
-- unfinished apply_ddl() changes are left out; a shard stays (its place is
-- still checked), its schema name is never put into a fix.
CREATE OR REPLACE FUNCTION shardid_internal._node_facts_safe(facts jsonb) RETURNS jsonb
    LANGUAGE sql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT facts
        || jsonb_build_object('templates', COALESCE((SELECT jsonb_object_agg(t.key, t.value) FROM jsonb_each(facts->'templates') AS t
                                                      WHERE NOT shardid_internal._unsafe_text(t.key)
                                                        AND NOT COALESCE(shardid_internal._unsafe_text(t.value->>'template'), false)), '{}'))
        || (SELECT COALESCE(jsonb_object_agg(o.k, COALESCE((SELECT jsonb_agg(n.name) FROM jsonb_array_elements_text(facts->o.k) AS n(name)
                                                             WHERE NOT shardid_internal._unsafe_text(n.name)), '[]')), '{}')
              FROM unnest(ARRAY['frozen', 'publications', 'subscriptions', 'slots', 'roles']) AS o(k)
             WHERE facts ? o.k)
        || jsonb_build_object('ddl_unfinished', COALESCE((SELECT jsonb_agg(c) FROM jsonb_array_elements(facts->'ddl_unfinished') AS c
                                                           WHERE NOT shardid_internal._unsafe_text((c->>'template') || ' ' || (c->>'command'))), '[]'))
$$;

REVOKE ALL ON FUNCTION shardid_internal._node_facts_safe(jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._node_facts_safe(jsonb) IS
    'Router, check_cluster(): a node''s facts without the names and stored commands that hold a control character (sharded tables, frozen schemas, move leftovers, unfinished apply_ddl() changes).';
-- Router, check_cluster(): the fix of an unfinished apply_ddl() change
-- whose template or command holds a control character: the CALL of
-- finish_ddl() with the change's ID, which reads both from the ledger
-- (shardid.ddl_changes of the database it runs in), so that the text of
-- the fix holds neither.
CREATE OR REPLACE FUNCTION shardid_internal._ddl_finish_by_id(change_id bigint) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT pg_catalog.format('CALL shardid.finish_ddl(%s);', change_id)
$$;

REVOKE ALL ON FUNCTION shardid_internal._ddl_finish_by_id(bigint) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._ddl_finish_by_id(bigint) IS
    'Router, check_cluster(): the fix that finishes an unfinished apply_ddl() change by its ID in the ledger (CALL shardid.finish_ddl()), without its template or command in the text.';
-- Router: the retired copies on every node (_retired_here() there, over
-- dblink with search_path pinned), nodes in name order. A node that cannot
-- be read fails the call, naming it: a list that silently skipped a node
-- would hide its copies.
CREATE OR REPLACE FUNCTION shardid_internal._retired_copies()
    RETURNS TABLE (node text, shard integer, schema_name name, moved_to text, retired_at timestamptz, bytes bigint,
                   recorded boolean, droppable boolean, reason text)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    conn CONSTANT text := 'shardid_retired_copies';
    nd   record;
    got  jsonb;
BEGIN
    PERFORM shardid_internal._dblink_schema();
    FOR nd IN SELECT n.node FROM shardid.nodes AS n ORDER BY n.node COLLATE "C" LOOP
        PERFORM shardid_internal._node_close(conn);  -- not one left open to another node
        PERFORM shardid_internal._node_connect(conn, nd.node);
        PERFORM shardid_internal._node(conn, 'SET search_path = pg_catalog, pg_temp', nd.node);
        got := shardid_internal._node(conn, 'SELECT COALESCE(pg_catalog.jsonb_agg(pg_catalog.to_jsonb(r)), ''[]'')::pg_catalog.text FROM shardid_internal._retired_here() AS r', nd.node)::jsonb;
        PERFORM shardid_internal._node_close(conn);
        RETURN QUERY
        SELECT nd.node, x.shard, x.schema_name, x.moved_to, x.retired_at, x.bytes, x.recorded, x.droppable, x.reason
          FROM jsonb_to_recordset(got) AS x(schema_name name, shard integer, moved_to text, retired_at timestamptz, bytes bigint,
                                            recorded boolean, droppable boolean, reason text)
         ORDER BY x.schema_name;
    END LOOP;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._retired_copies() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._retired_copies() IS
    'Router: the retired copies of moved shards on every node (node, shard, schema, node it moved to, when, bytes, recorded, droppable, why not), read over dblink; what the view retired_copies shows.';
-- Router: the retired copies that moves left on their source nodes
-- (move_shard() without drop_old keeps the old copy, renamed
-- <schema>_moved_<move id>, its tables refusing writes, and records it on
-- the node in shardid.retired_schemas), for drop_retired_copies(): each
-- with whether the cleanup may drop it and, if not, why. Schemas that
-- only look like one (not recorded) are listed too, never droppable.
-- Reads every node over dblink: administrators only.
CREATE OR REPLACE VIEW shardid.retired_copies AS
SELECT c.node, c.shard, c.schema_name, c.moved_to, c.retired_at, c.bytes, c.recorded, c.droppable, c.reason
  FROM shardid_internal._retired_copies() AS c;

REVOKE ALL ON shardid.retired_copies FROM PUBLIC;

COMMENT ON VIEW shardid.retired_copies IS
    'Router: the retired copies of moved shards on every node: node, shard, schema, the node it moved to, when it was retired, size in bytes, whether a move recorded it, whether drop_retired_copies() may drop it and why not. Read over dblink; administrators only.';
COMMENT ON COLUMN shardid.retired_copies.node IS 'The node that keeps the copy (the move''s source).';
COMMENT ON COLUMN shardid.retired_copies.shard IS 'The shard it is a copy of.';
COMMENT ON COLUMN shardid.retired_copies.schema_name IS 'The copy''s schema, <schema>_moved_<move id>.';
COMMENT ON COLUMN shardid.retired_copies.moved_to IS 'The node the shard moved to.';
COMMENT ON COLUMN shardid.retired_copies.retired_at IS 'When it was retired: as recorded; for one not recorded, the move ID in its name (NULL when the name has none).';
COMMENT ON COLUMN shardid.retired_copies.bytes IS 'Its tables'' size with their indexes and TOAST.';
COMMENT ON COLUMN shardid.retired_copies.recorded IS 'Whether retire_shard() recorded it on the node (shardid.retired_schemas); one that is not is never dropped by drop_retired_copies().';
COMMENT ON COLUMN shardid.retired_copies.droppable IS 'Whether drop_retired_copies() may drop it: recorded, not registered again, holding nothing but its own objects.';
COMMENT ON COLUMN shardid.retired_copies.reason IS 'Why it may not be dropped (NULL when it may): not recorded, registered again, or the objects of others it holds or that use it.';
-- Node: drops one recorded retired copy (shardid.retired_schemas), found
-- by its schema's name now, if it holds nothing but its own objects
-- (_retired_copy_check); returns {"status": "dropped", "bytes": ...},
-- {"status": "skipped", "reason": ...} or {"status": "gone"} (no schema
-- of that name: dropped meanwhile, by hand or by another cleanup; its
-- record, if any, is forgotten). Refuses (55000) a schema that is not a
-- recorded retired copy, however it looks. Under the registry's lock
-- (SHARE ROW EXCLUSIVE on shard_registry and sharded_tables), which
-- attach_shard(), retire_shard(), a move's copy on its target and a second
-- cleanup take too, so none of them runs between the check and the drop.
-- The copy's relations are locked (for 2 s at most: else skipped as
-- busy) and checked again, then dropped RESTRICT, then the schema
-- RESTRICT: what the check could have missed or what appeared meanwhile
-- fails the drop (skipped, nothing dropped), never goes with it. Runs no
-- tenant code: DROP fires no trigger a tenant may create.
CREATE OR REPLACE FUNCTION shardid_internal._drop_retired_copy(schema_name name) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rec    shardid.retired_schemas;
    nsp    oid;
    why    text;
    freed  bigint;
    tabs   text;
    seqs   text;
    r      record;
BEGIN
    IF schema_name IS NULL THEN
        RAISE EXCEPTION 'schema_name must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    LOCK TABLE shardid.shard_registry, shardid.sharded_tables IN SHARE ROW EXCLUSIVE MODE;
    SELECT n.oid INTO nsp FROM pg_namespace AS n WHERE n.nspname = _drop_retired_copy.schema_name;
    IF NOT FOUND THEN
        DELETE FROM shardid.retired_schemas AS x
         WHERE x.schema_name = _drop_retired_copy.schema_name
           AND NOT EXISTS (SELECT FROM pg_namespace AS n WHERE n.oid = x.schema_oid);
        RETURN jsonb_build_object('status', 'gone');
    END IF;
    SELECT * INTO rec FROM shardid.retired_schemas AS x WHERE x.schema_oid = nsp;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'schema % is not a retired copy recorded by a move', quote_ident(schema_name)
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'drop_retired_copies() drops only a schema that retire_shard() recorded in shardid.retired_schemas, however another looks.',
                  HINT = 'If it is a copy retired before 0.3 (or on a node restored since), check what it holds and drop it by hand.';
    END IF;
    why := shardid_internal._retired_copy_check(nsp, rec.relations);
    IF why IS NULL THEN
        BEGIN
            PERFORM set_config('lock_timeout', '2s', true);
            FOR r IN SELECT c.oid FROM pg_class AS c
                      WHERE c.oid = ANY (rec.relations) AND c.relnamespace = nsp AND c.relkind IN ('r', 'p')
                      ORDER BY c.oid LOOP
                EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', r.oid::regclass);
            END LOOP;
        EXCEPTION WHEN lock_not_available THEN
            why := 'busy: its tables are in use (locked for more than 2 s); try again later';
        END;
    END IF;
    why := COALESCE(why, shardid_internal._retired_copy_check(nsp, rec.relations));
    IF why IS NOT NULL THEN
        RETURN jsonb_build_object('status', 'skipped', 'reason', why);
    END IF;
    SELECT COALESCE(sum(pg_total_relation_size(c.oid)), 0)::bigint INTO freed
      FROM pg_class AS c WHERE c.relnamespace = nsp AND c.relkind IN ('r', 'm', 'p');
    SELECT string_agg(c.oid::regclass::text, ', ' ORDER BY c.oid) INTO tabs
      FROM pg_class AS c WHERE c.oid = ANY (rec.relations) AND c.relnamespace = nsp AND c.relkind IN ('r', 'p');
    BEGIN
        IF tabs IS NOT NULL THEN
            EXECUTE 'DROP TABLE ' || tabs || ' RESTRICT';
        END IF;
        -- what the tables owned went with them
        SELECT string_agg(c.oid::regclass::text, ', ' ORDER BY c.oid) INTO seqs
          FROM pg_class AS c WHERE c.oid = ANY (rec.relations) AND c.relnamespace = nsp AND c.relkind = 'S';
        IF seqs IS NOT NULL THEN
            EXECUTE 'DROP SEQUENCE ' || seqs || ' RESTRICT';
        END IF;
        EXECUTE format('DROP SCHEMA %I RESTRICT', schema_name);
    EXCEPTION WHEN dependent_objects_still_exist THEN
        RETURN jsonb_build_object('status', 'skipped',
                                  'reason', regexp_replace('it holds or is used by objects it did not record: ' || SQLERRM, '[[:cntrl:]]', '?', 'g'));
    END;
    DELETE FROM shardid.retired_schemas AS x WHERE x.schema_oid = nsp;
    RETURN jsonb_build_object('status', 'dropped', 'bytes', freed);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._drop_retired_copy(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._drop_retired_copy(name) IS
    'Node: drops a recorded retired copy (shardid.retired_schemas) if it holds only its own objects, under the registry''s lock; returns its status (dropped with bytes, skipped with the reason, gone); refuses (55000) a schema that is not recorded.';
-- Router, drop_retired_copies(): one retired copy the view
-- shardid.retired_copies listed. One it said may not be dropped is kept
-- and reported with its reason (WARNING). Else it is dropped on its node
-- (_drop_retired_copy() there, over dblink with search_path pinned, which
-- checks again under its lock) and what became of it said: a NOTICE when
-- dropped, a WARNING with the node's reason when kept (it holds or is
-- used by another's objects, is registered again, or is busy); nothing
-- when it is gone meanwhile. Returns counts with it: {copies dropped,
-- bytes freed, copies kept}. The caller commits after each.
CREATE OR REPLACE FUNCTION shardid_internal._drop_retired_copy_on(counts bigint[], node text, schema_name name,
                                                                  droppable boolean, reason text)
    RETURNS bigint[]
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    conn CONSTANT text := 'shardid_drop_retired';
    res  jsonb;
BEGIN
    IF NOT droppable THEN
        RAISE WARNING 'kept % on node "%": %', quote_ident(schema_name), node, reason
            USING HINT = 'See shardid.retired_copies; drop_retired_copies() drops only a copy a move recorded that holds nothing but its own objects.';
        RETURN ARRAY[counts[1], counts[2], counts[3] + 1];
    END IF;
    PERFORM shardid_internal._node_close(conn);  -- not one left open to another node
    PERFORM shardid_internal._node_connect(conn, node);
    PERFORM shardid_internal._node(conn, 'SET search_path = pg_catalog, pg_temp', node);
    res := shardid_internal._node(conn, pg_catalog.format('SELECT shardid_internal._drop_retired_copy(%L)', schema_name), node)::jsonb;
    PERFORM shardid_internal._node_close(conn);
    CASE res->>'status'
        WHEN 'dropped' THEN
            RAISE NOTICE 'dropped the retired copy % on node "%" (%)', quote_ident(schema_name), node,
                pg_catalog.pg_size_pretty((res->>'bytes')::bigint);
            RETURN ARRAY[counts[1] + 1, counts[2] + (res->>'bytes')::bigint, counts[3]];
        WHEN 'skipped' THEN
            RAISE WARNING 'kept the retired copy % on node "%": %', quote_ident(schema_name), node, res->>'reason'
                USING HINT = 'See shardid.retired_copies; drop_retired_copies() drops only a copy that holds nothing but its own objects.';
            RETURN ARRAY[counts[1], counts[2], counts[3] + 1];
        ELSE
            RETURN counts;  -- gone meanwhile: nothing to do
    END CASE;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._drop_retired_copy_on(bigint[], text, name, boolean, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._drop_retired_copy_on(bigint[], text, name, boolean, text) IS
    'Router, drop_retired_copies(): drops one retired copy on its node over dblink if droppable (NOTICE when dropped, WARNING with the reason when kept), else reports it (WARNING) and keeps it; returns the counts of copies dropped, bytes freed and copies kept.';
-- Router, drop_retired_copies(): the retired copies retired at least
-- older_than ago (one that tells no time, not recorded, only with
-- older_than = 0), with whether each may be dropped and why not, in node
-- and schema order; 22023 for a NULL or negative older_than.
CREATE OR REPLACE FUNCTION shardid_internal._retired_copies_due(older_than interval)
    RETURNS TABLE (node text, schema_name name, droppable boolean, reason text)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF older_than IS NULL OR older_than < '0'::interval THEN
        RAISE EXCEPTION 'older_than must be an interval of 0 or more, not %', COALESCE(older_than::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN QUERY
        SELECT c.node, c.schema_name, c.droppable, c.reason
          FROM shardid.retired_copies AS c
         WHERE (c.retired_at IS NULL AND older_than = '0'::interval)
            OR c.retired_at <= (now() - older_than)
         ORDER BY c.node COLLATE "C", c.schema_name;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._retired_copies_due(interval) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._retired_copies_due(interval) IS
    'Router, drop_retired_copies(): the retired copies retired at least older_than ago, whether each may be dropped and why not, in node and schema order; 22023 for a NULL or negative interval.';
-- Router: drops the retired copies that moves left on their source nodes
-- (shardid.retired_copies) retired at least older_than ago (default 0:
-- all), one at a time, committing after each: only those a move recorded
-- that hold nothing but their own objects, each checked again on its node
-- under the lock attach_shard() and a move's steps there take. The
-- others (not recorded, registered again, holding or used by another's
-- objects, busy) are kept and reported (WARNING with the reason), and the
-- cleanup goes on.
-- No SET search_path (PostgreSQL refuses COMMIT in a procedure that has
-- one): this holds the loop and its COMMITs; the functions it calls pin it.
CREATE OR REPLACE PROCEDURE shardid.drop_retired_copies(older_than interval DEFAULT '0')
    LANGUAGE plpgsql
AS $$
DECLARE
    copies record;
    counts bigint[] := '{0,0,0}';  -- copies dropped, bytes freed, copies kept
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid.drop_retired_copies()',
                                             'after every copy it drops');
    FOR copies IN SELECT c.node, c.schema_name, c.droppable, c.reason FROM shardid_internal._retired_copies_due(older_than) AS c LOOP
        counts := shardid_internal._drop_retired_copy_on(counts, copies.node, copies.schema_name, copies.droppable, copies.reason);
        COMMIT;
    END LOOP;
    RAISE NOTICE 'drop_retired_copies: % dropped (%), % kept', counts[1], pg_catalog.pg_size_pretty(counts[2]), counts[3];
END
$$;

REVOKE ALL ON PROCEDURE shardid.drop_retired_copies(interval) FROM PUBLIC;

COMMENT ON PROCEDURE shardid.drop_retired_copies(interval) IS
    'Router: drops the retired copies of moved shards (shardid.retired_copies) retired at least older_than ago (default: all), one at a time, committing after each: only those a move recorded that hold nothing but their own objects; the others are kept and reported (WARNING).';
-- The launcher's visit of a database (src/pg/launcher.cpp: with shardid
-- in shared_preload_libraries, a worker per database at start, after a
-- promotion and every shardid.launcher_naptime, as the bootstrap
-- superuser with search_path pg_catalog, pg_temp): on a router, resumes
-- the background job whose driver is gone (_launcher_resume()), then
-- drops the retired copies older than retention seconds
-- (shardid.retired_copy_retention; -1: none) by drop_retired_copies()'s
-- rules (only what a move recorded, each checked again on its node). A
-- data node's database has no nodes: nothing to do.
-- No SET search_path (PostgreSQL refuses COMMIT in a procedure that has
-- one): this holds the calls and their COMMITs; the functions it calls
-- pin it.
CREATE OR REPLACE PROCEDURE shardid_internal._launcher_run(retention integer)
    LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid_internal._launcher_run()',
                                             'after it resumes a job, and after every copy it drops');
    IF NOT EXISTS (SELECT FROM shardid.nodes) THEN
        RETURN;
    END IF;
    PERFORM shardid_internal._launcher_resume();
    COMMIT;
    IF retention OPERATOR(pg_catalog.>=) 0 THEN
        CALL shardid.drop_retired_copies(older_than => pg_catalog.make_interval(secs => retention));
    END IF;
END
$$;

REVOKE ALL ON PROCEDURE shardid_internal._launcher_run(integer) FROM PUBLIC;

COMMENT ON PROCEDURE shardid_internal._launcher_run(integer) IS
    'The launcher''s visit of a router database: resumes the background rebalance job whose driver is gone, then drops retired copies older than the retention (seconds; -1: none).';
-- Router, check_cluster() step 3: the shards the nodes hold live
-- (registered, not retired: facts' shards), but for those being moved,
-- which are live on both of their nodes by design; each with its nodes in
-- name order.
CREATE OR REPLACE FUNCTION shardid_internal._live_shards(facts jsonb)
    RETURNS TABLE (shard integer, nodes text[])
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT (s->>'shard')::integer, pg_catalog.array_agg(f.key ORDER BY f.key COLLATE "C")
      FROM jsonb_each(facts) AS f, jsonb_array_elements(f.value->'shards') AS s
     WHERE NOT EXISTS (SELECT FROM shardid.shard_moves AS m WHERE m.shard = (s->>'shard')::integer)
     GROUP BY 1
$$;

REVOKE ALL ON FUNCTION shardid_internal._live_shards(jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._live_shards(jsonb) IS
    'Router, check_cluster(): the shards the nodes hold live, but those being moved, each with its nodes in name order.';
-- Router: the kinds of problem check_cluster() reports, a closed list
-- written here only. check_cluster() runs shardid_internal._check_<kind>()
-- for each, step by step; the exporters under examples/ read this view,
-- and test/lint/run (kinds) checks docs/reference.md and docs/monitoring.md
-- against it. Kinds of one step are reported together: step 1 reads each
-- node (its rows in node order), step 3 compares the shards with the
-- placement (by shard, then node); every other step has one kind. Readable
-- by everyone (what check_cluster() may say is no secret).
CREATE OR REPLACE VIEW shardid.check_cluster_kinds AS
SELECT k.step, k.kind, k.summary
  FROM (VALUES
    (1, 'node_unreachable', 'the node cannot be reached (its other checks are skipped)'),
    (1, 'node_unreadable', 'the node answered, but reading it failed (the detail ends with the SQLSTATE)'),
    (1, 'extension_missing', 'the node does not have the shardid extension'),
    (1, 'extension_version', 'the node runs another version of shardid than the router'),
    (1, 'unsafe_name', 'a name read on a node, or an unfinished apply_ddl() change''s text, holds a control character'),
    (2, 'layout_differs', 'the node''s layout is not the router''s'),
    (3, 'shard_live_twice', 'a shard registered (live, not retired) on two nodes'),
    (3, 'shard_live_nowhere', 'a placed shard that no node holds'),
    (3, 'placement_wrong_node', 'a placed shard that another node holds'),
    (3, 'shard_not_placed', 'a shard a node holds that is placed nowhere'),
    (4, 'template_differs', 'a sharded table''s template that differs from the one most nodes have, or is missing'),
    (5, 'move_leftover', 'a publication, subscription, slot, role or freeze trigger of a move no longer in progress'),
    (6, 'move_stalled', 'a move in progress that no session and no background job drives'),
    (6, 'job_stalled', 'a background rebalance or drain job that has not ended and whose driver is gone'),
    (7, 'proxy_out_of_step', 'the PL/Proxy cluster shardid differs from the placement'),
    (8, 'ddl_unfinished', 'an apply_ddl() change not finished, on the router or a node'),
    (9, 'copy_differs', 'a shard''s copy of a sharded table that differs from its node''s template'),
    (10, 'privileges_differ', 'a shard whose copies, schema or generator lack the privileges its node''s templates record, or whose copy has grants its template does not give')
  ) AS k(step, kind, summary);

GRANT SELECT ON shardid.check_cluster_kinds TO PUBLIC;

COMMENT ON VIEW shardid.check_cluster_kinds IS
    'Router: the kinds of problem check_cluster() reports, each with the step that reports it (in order) and a summary; the one list, read by the exporters and checked against the docs.';
COMMENT ON COLUMN shardid.check_cluster_kinds.step IS 'The step of check_cluster() that reports it; check_cluster() returns the rows of one step together.';
COMMENT ON COLUMN shardid.check_cluster_kinds.kind IS 'The kind, as check_cluster() returns it.';
COMMENT ON COLUMN shardid.check_cluster_kinds.summary IS 'What it means, in one line (docs/monitoring.md says more, with the fix).';
-- Router, check_cluster() step 1: the nodes that could not be reached (a
-- connection SQLSTATE, _node_unreachable()); their other checks are
-- skipped.
CREATE OR REPLACE FUNCTION shardid_internal._check_node_unreachable(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'node_unreachable', NULL::integer, n.key, n.value->>'error', NULL::text,
           '-- start the node, or correct its connect string (shardid.nodes); then check again'
      FROM jsonb_each(nodes) AS n
     WHERE n.value ? 'error' AND shardid_internal._node_unreachable(n.value->>'sqlstate')
     ORDER BY n.key COLLATE "C"
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_node_unreachable(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_node_unreachable(jsonb, jsonb) IS
    'Router, check_cluster(): node_unreachable, the nodes that could not be reached (a connection SQLSTATE).';
-- Router, check_cluster() step 1: the nodes that answered but could not be
-- read (any error but a connection's, such as the role of its connect
-- string lacking a privilege there; its SQLSTATE in the detail); their
-- other checks are skipped.
CREATE OR REPLACE FUNCTION shardid_internal._check_node_unreadable(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'node_unreadable', NULL::integer, n.key,
           pg_catalog.format('%s (SQLSTATE %s)', n.value->>'error', n.value->>'sqlstate'), NULL::text,
           '-- the node answered, but reading it failed: correct what the detail says (for a permission error, its connect string must name the owner of shardid there, or a superuser); then check again'
      FROM jsonb_each(nodes) AS n
     WHERE n.value ? 'error' AND NOT shardid_internal._node_unreachable(n.value->>'sqlstate')
     ORDER BY n.key COLLATE "C"
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_node_unreadable(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_node_unreadable(jsonb, jsonb) IS
    'Router, check_cluster(): node_unreadable, the nodes that answered but could not be read (the SQLSTATE in the detail).';
-- Router, check_cluster() step 1: the nodes without the shardid extension.
CREATE OR REPLACE FUNCTION shardid_internal._check_extension_missing(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'extension_missing', NULL::integer, n.key,
           pg_catalog.format('node "%s" does not have the shardid extension', n.key), n.key,
           'CREATE EXTENSION shardid;'
      FROM jsonb_each(nodes) AS n
     WHERE NOT n.value ? 'error' AND n.value->>'version' IS NULL
     ORDER BY n.key COLLATE "C"
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_extension_missing(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_extension_missing(jsonb, jsonb) IS
    'Router, check_cluster(): extension_missing, the nodes without shardid.';
-- Router, check_cluster() step 1: the nodes at another version of shardid
-- than the router's. There is no downgrade: a node at an older version is
-- updated, a newer one (updated first) is matched by updating the router.
-- A version with a control character is unsafe_name's.
CREATE OR REPLACE FUNCTION shardid_internal._check_extension_version(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'extension_version', NULL::integer, n.key,
           pg_catalog.format('node "%s" runs shardid %s, the router %s', n.key, n.value->>'version', e.extversion),
           CASE WHEN x.newer THEN NULL ELSE n.key END,
           pg_catalog.format('ALTER EXTENSION shardid UPDATE TO %L;', CASE WHEN x.newer THEN n.value->>'version' ELSE e.extversion END)
      FROM jsonb_each(nodes) AS n
      JOIN pg_extension AS e ON e.extname = 'shardid',
           LATERAL (SELECT CASE WHEN n.value->>'version' ~ '^[0-9]+(\.[0-9]+)*$' AND e.extversion ~ '^[0-9]+(\.[0-9]+)*$'
                                THEN pg_catalog.string_to_array(n.value->>'version', '.')::integer[]
                                     > pg_catalog.string_to_array(e.extversion, '.')::integer[]
                                ELSE false END AS newer) AS x
     WHERE n.value->>'version' <> e.extversion AND NOT shardid_internal._unsafe_text(n.value->>'version')
     ORDER BY n.key COLLATE "C"
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_extension_version(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_extension_version(jsonb, jsonb) IS
    'Router, check_cluster(): extension_version, the nodes at another version of shardid, with the update to run on the node, or on the router when the node is ahead.';
-- Router, check_cluster() step 1: what a node answered that holds a
-- control character (_unsafe_text()): its shardid version, or a name of
-- its facts (_node_facts(): a shard's schema, a sharded table or its
-- template, a schema with shardid's freeze triggers, a publication,
-- subscription, slot or role named like a move's, an unfinished
-- apply_ddl() change's template and command). Shown escaped in the
-- detail, never put into a fix (but an apply_ddl() change's, finished by
-- its ID in the ledger: _ddl_finish_by_id()); check_cluster() leaves them
-- out of every other check (_node_facts_safe()). In node order, each
-- node's in the order of its facts. The router's own unfinished changes
-- are reported with ddl_unfinished's.
CREATE OR REPLACE FUNCTION shardid_internal._check_unsafe_name(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'unsafe_name', u.shard, n.key,
           CASE WHEN u.what IS NULL
                THEN pg_catalog.format('node "%s" runs a shardid version named %s, with a control character: look at pg_extension there',
                                       n.key, pg_catalog.to_jsonb(u.name)::text)
                WHEN u.change_id IS NULL
                THEN pg_catalog.format('the %s on node "%s" has a control character in its name: %s; shardid did not make it so and builds no command with it: look at it there',
                                       u.what, n.key, pg_catalog.to_jsonb(u.name)::text)
                ELSE pg_catalog.format('apply_ddl() change %s on node "%s" is unfinished, and its template or command has a control character: %s; the fix finishes it by its ID, without the text',
                                       u.change_id, n.key, pg_catalog.to_jsonb(u.name)::text) END,
           n.key, shardid_internal._ddl_finish_by_id(u.change_id)
      FROM jsonb_each(nodes) AS n,
           LATERAL (SELECT 0, 0::bigint, NULL::text, n.value->>'version', NULL::integer, NULL::bigint
                     WHERE NOT n.value ? 'facts'
                    UNION ALL
                    SELECT 1, s.i, 'schema of shard ' || (s.v->>'shard'), s.v->>'schema', (s.v->>'shard')::integer, NULL
                      FROM jsonb_array_elements(n.value->'facts'->'shards') WITH ORDINALITY AS s(v, i)
                    UNION ALL
                    SELECT 2, t.i, 'sharded table', t.key, NULL, NULL
                      FROM jsonb_each(n.value->'facts'->'templates') WITH ORDINALITY AS t(key, value, i)
                    UNION ALL
                    SELECT 3, t.i, 'template of sharded table', t.value->>'template', NULL, NULL
                      FROM jsonb_each(n.value->'facts'->'templates') WITH ORDINALITY AS t(key, value, i)
                     WHERE NOT shardid_internal._unsafe_text(t.key)
                    UNION ALL
                    SELECT o.part, x.i, o.what, x.name, NULL, NULL
                      FROM (VALUES (4, 'schema with shardid''s freeze triggers', 'frozen'), (5, 'publication', 'publications'),
                                   (6, 'subscription', 'subscriptions'), (7, 'replication slot', 'slots'), (8, 'role', 'roles')) AS o(part, what, k),
                           jsonb_array_elements_text(n.value->'facts'->o.k) WITH ORDINALITY AS x(name, i)
                    UNION ALL
                    SELECT 9, c.i, 'apply_ddl() change ' || (c.v->>'change_id') || ' (template, command)',
                           (c.v->>'template') || ' ' || (c.v->>'command'), NULL, (c.v->>'change_id')::bigint
                      FROM jsonb_array_elements(n.value->'facts'->'ddl_unfinished') WITH ORDINALITY AS c(v, i)) AS u(part, i, what, name, shard, change_id)
     WHERE NOT n.value ? 'error' AND shardid_internal._unsafe_text(u.name)
     ORDER BY n.key COLLATE "C", u.part, u.i
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_unsafe_name(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_unsafe_name(jsonb, jsonb) IS
    'Router, check_cluster(): unsafe_name, what a node answered that holds a control character (its shardid version, names of its facts, an unfinished apply_ddl() change), escaped in the detail and never in a fix.';
-- Router, check_cluster() step 2: the nodes whose layout is not the
-- router's (shardid.layout()), with the configure() that matches it.
CREATE OR REPLACE FUNCTION shardid_internal._check_layout_differs(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'layout_differs', NULL::integer, f.key,
           pg_catalog.format('node "%s" has the layout epoch %s, %s shard bits, %s seq bits; the router %s, %s, %s (configure the node before it issues IDs, or the router if the node is right)',
                             f.key, f.value->'layout'->>'epoch', f.value->'layout'->>'shard_bits', f.value->'layout'->>'seq_bits',
                             m.layout->>'epoch', m.layout->>'shard_bits', m.layout->>'seq_bits'),
           f.key,
           pg_catalog.format('SELECT shardid.configure(%L, %s, %s);',
                             m.layout->>'epoch', m.layout->>'shard_bits', m.layout->>'seq_bits')
      FROM jsonb_each(facts) AS f,
           (SELECT jsonb_build_object('epoch', pg_catalog.to_char(l.epoch AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS') || '+00',
                                      'shard_bits', l.shard_bits, 'seq_bits', l.seq_bits) AS layout
              FROM shardid.layout() AS l) AS m
     WHERE f.value->'layout' <> m.layout
     ORDER BY f.key COLLATE "C"
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_layout_differs(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_layout_differs(jsonb, jsonb) IS
    'Router, check_cluster(): layout_differs, the nodes whose layout is not the router''s, with the configure() that matches it.';
-- Router, check_cluster() step 3: a shard live on two nodes: a row for the
-- copy that is not where the placement points, with the retire_shard()
-- that retires it (named after the shard's usual schema name,
-- _shard_schema_name(): no schema name read on a node is put into a fix);
-- with no placement, one row, placing it on its first node.
CREATE OR REPLACE FUNCTION shardid_internal._check_shard_live_twice(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'shard_live_twice', ls.shard, s.node,
           pg_catalog.format('shard %s is live on nodes %s; the router places it on %s', ls.shard,
                             pg_catalog.array_to_string(ls.nodes, ', '), COALESCE('"' || p.node || '"', 'no node')),
           CASE WHEN p.node IS NULL THEN NULL ELSE s.node END,
           CASE WHEN p.node IS NULL
                THEN pg_catalog.format('SELECT shardid.place_shards(%L, %s, %s);', s.node, ls.shard, ls.shard)
                ELSE pg_catalog.format('SELECT shardid.retire_shard(%s, %L, %L);', ls.shard, p.node,
                                       shardid_internal._fit_name(shardid_internal._shard_schema_name(ls.shard), '_moved_' || t.ms)) END
      FROM shardid_internal._live_shards(facts) AS ls
     CROSS JOIN LATERAL pg_catalog.unnest(ls.nodes) AS s(node)
      LEFT JOIN shardid.shard_placement AS p ON p.shard = ls.shard
     CROSS JOIN (SELECT (pg_catalog.date_part('epoch', pg_catalog.clock_timestamp()) * 1000)::bigint AS ms) AS t
     WHERE pg_catalog.cardinality(ls.nodes) > 1
       AND p.node IS DISTINCT FROM s.node
       AND (p.node IS NOT NULL OR s.node = ls.nodes[1])
     ORDER BY 2, 3
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_shard_live_twice(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_shard_live_twice(jsonb, jsonb) IS
    'Router, check_cluster(): shard_live_twice, a shard live on two nodes: its copies the placement does not point at, with the retire_shard() of each (or the place_shards() of one when it is placed nowhere).';
-- Router, check_cluster() step 3: a placed shard that no node holds: the
-- fix creates it there, empty (restore its rows instead if a backup has
-- them). Shards being moved are skipped.
CREATE OR REPLACE FUNCTION shardid_internal._check_shard_live_nowhere(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'shard_live_nowhere', p.shard, p.node,
           pg_catalog.format('shard %s is placed on node "%s", which does not hold it, and no node does; the fix creates it there empty: restore its rows instead if a backup has them', p.shard, p.node),
           p.node,
           pg_catalog.format('SELECT shardid.create_shard(%s);', p.shard)
      FROM shardid.shard_placement AS p
     WHERE facts ? p.node
       AND NOT EXISTS (SELECT FROM shardid.shard_moves AS m WHERE m.shard = p.shard)
       AND NOT EXISTS (SELECT FROM shardid_internal._live_shards(facts) AS ls WHERE ls.shard = p.shard)
     ORDER BY 2, 3
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_shard_live_nowhere(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_shard_live_nowhere(jsonb, jsonb) IS
    'Router, check_cluster(): shard_live_nowhere, a placed shard that no node holds, with the create_shard() that makes it on its node, empty.';
-- Router, check_cluster() step 3: a placed shard that its node does not
-- hold and another does: the fix repoints it there (frozen meanwhile).
-- Shards being moved are skipped.
CREATE OR REPLACE FUNCTION shardid_internal._check_placement_wrong_node(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'placement_wrong_node', p.shard, p.node,
           pg_catalog.format('shard %s is placed on node "%s", which does not hold it; node %s does', p.shard, p.node,
                             pg_catalog.array_to_string(ls.nodes, ', ')),
           NULL::text,
           pg_catalog.format('SELECT shardid.freeze_shard(%s); SELECT shardid.repoint_shard(%s, %L); SELECT shardid.unfreeze_shard(%s);',
                             p.shard, p.shard, ls.nodes[1], p.shard)
      FROM shardid.shard_placement AS p
      JOIN shardid_internal._live_shards(facts) AS ls ON ls.shard = p.shard
     WHERE facts ? p.node
       AND NOT p.node = ANY (ls.nodes)
     ORDER BY 2, 3
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_placement_wrong_node(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_placement_wrong_node(jsonb, jsonb) IS
    'Router, check_cluster(): placement_wrong_node, a placed shard that another node holds, with the freeze_shard(), repoint_shard() and unfreeze_shard() that repoint it there.';
-- Router, check_cluster() step 3: a shard one node holds that is placed
-- nowhere (its IDs are routed nowhere), with the place_shards() that
-- places it there. Shards being moved are skipped.
CREATE OR REPLACE FUNCTION shardid_internal._check_shard_not_placed(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'shard_not_placed', ls.shard, ls.nodes[1],
           pg_catalog.format('shard %s is live on node "%s" but placed on no node: its IDs are routed nowhere', ls.shard, ls.nodes[1]),
           NULL::text,
           pg_catalog.format('SELECT shardid.place_shards(%L, %s, %s);', ls.nodes[1], ls.shard, ls.shard)
      FROM shardid_internal._live_shards(facts) AS ls
     WHERE pg_catalog.cardinality(ls.nodes) = 1
       AND NOT EXISTS (SELECT FROM shardid.shard_placement AS p WHERE p.shard = ls.shard)
     ORDER BY 2, 3
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_shard_not_placed(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_shard_not_placed(jsonb, jsonb) IS
    'Router, check_cluster(): shard_not_placed, a shard one node holds that is placed nowhere, with the place_shards() that places it there.';
-- Router, check_cluster() step 4: each node's templates against the
-- definition most nodes have (_template_definition() there): a template
-- that differs (advice: what differs, to change with apply_ddl()), or is
-- missing (the create_table() that registers it, once the table is made).
-- A node with only the extension (no sharded table, no shard) is empty,
-- not wrong: a move there makes the templates first.
CREATE OR REPLACE FUNCTION shardid_internal._check_template_differs(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    WITH defs AS (
        SELECT f.key AS node, t.key AS table_name, t.value AS def
          FROM jsonb_each(facts) AS f, jsonb_each(f.value->'templates') AS t
    ), names AS (
        SELECT DISTINCT d.table_name FROM defs AS d
    ), usual AS (
        SELECT DISTINCT ON (d.table_name) d.table_name, d.def, d.node
          FROM defs AS d
         GROUP BY d.table_name, d.def, d.node
         ORDER BY d.table_name, (SELECT pg_catalog.count(*) FROM defs AS o WHERE o.table_name = d.table_name AND o.def = d.def) DESC,
                  d.node COLLATE "C"
    )
    SELECT 'template_differs', NULL::integer, f.key,
           CASE WHEN d.def IS NULL
                THEN pg_catalog.format('sharded table %s is not registered on node "%s" (node "%s" has it): make its template table there as on node "%s", then run the fix',
                                       nm.table_name, f.key, u.node, u.node)
                ELSE pg_catalog.format('the template of sharded table %s on node "%s" differs from node "%s": %s', nm.table_name, f.key, u.node,
                                       (SELECT pg_catalog.string_agg(k.key, ', ' ORDER BY k.key)
                                          FROM jsonb_each(u.def) AS k WHERE d.def->k.key IS DISTINCT FROM k.value)) END,
           CASE WHEN d.def IS NULL THEN f.key END,
           CASE WHEN d.def IS NULL
                THEN pg_catalog.format('SELECT shardid.create_table(%L);', u.def->>'template')
                ELSE pg_catalog.format('-- ALTER TABLE the template %s (and its shards'' copies: CALL shardid.apply_ddl()) to match node "%s"',
                                       d.def->>'template', u.node) END
      FROM jsonb_each(facts) AS f
     CROSS JOIN names AS nm
      JOIN usual AS u ON u.table_name = nm.table_name
      LEFT JOIN defs AS d ON d.node = f.key AND d.table_name = nm.table_name
     WHERE d.def IS DISTINCT FROM u.def
       AND NOT (f.value->'templates' = '{}' AND f.value->'shards' = '[]')
     ORDER BY nm.table_name, f.key COLLATE "C"
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_template_differs(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_template_differs(jsonb, jsonb) IS
    'Router, check_cluster(): template_differs, a node''s template that differs from the one most nodes have (advice), or is missing (its create_table()).';
-- Router, check_cluster() step 5: what a move leaves on a node when it is
-- interrupted, with no such move in progress: a publication,
-- subscription, slot or role named like a move's
-- (shardid_move_<shard>_<move id>; roles belong to a server: nodes that
-- share one report it each), and shardid's freeze triggers (known by
-- their function on the node), each with the call that removes it there
-- (drop_move_leftover(), unfreeze_shard_tables()).
CREATE OR REPLACE FUNCTION shardid_internal._check_move_leftover(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    WITH moving AS (
        SELECT shardid_internal._move_name(m.shard, m.move_id)::text AS name, m.shard, m.source, m.schema_name FROM shardid.shard_moves AS m
    ), things AS (
        SELECT f.key AS node, o.what, x.name
          FROM jsonb_each(facts) AS f,
               (VALUES ('publication', 'publications'), ('subscription', 'subscriptions'),
                       ('replication slot', 'slots'), ('role', 'roles')) AS o(what, k),
               jsonb_array_elements_text(f.value->o.k) AS x(name)
    )
    SELECT 'move_leftover', pg_catalog.substring(t.name, '^shardid_move_([0-9]+)_')::integer, t.node,
           pg_catalog.format('%s %s on node "%s" belongs to no move in progress', t.what, t.name, t.node),
           t.node,
           pg_catalog.format('SELECT shardid.drop_move_leftover(%L, %L);', t.what, t.name)
      FROM things AS t
     WHERE NOT EXISTS (SELECT FROM moving AS m WHERE m.name = t.name)
    UNION ALL
    SELECT 'move_leftover', r.shard, f.key,
           pg_catalog.format('schema %s on node "%s" has shardid''s freeze triggers and no move from there is in progress', x.schema_name, f.key),
           f.key,
           pg_catalog.format('SELECT shardid.unfreeze_shard_tables(%L);', x.schema_name)
      FROM jsonb_each(facts) AS f
     CROSS JOIN jsonb_array_elements_text(f.value->'frozen') AS x(schema_name)
      LEFT JOIN LATERAL (SELECT (s->>'shard')::integer AS shard FROM jsonb_array_elements(f.value->'shards') AS s
                          WHERE s->>'schema' = x.schema_name) AS r ON true
     WHERE NOT EXISTS (SELECT FROM moving AS m WHERE m.source = f.key AND m.schema_name = x.schema_name)
     ORDER BY 3, 4
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_move_leftover(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_move_leftover(jsonb, jsonb) IS
    'Router, check_cluster(): move_leftover, a publication, subscription, slot, role or freeze trigger of a move no longer in progress, with the call that removes it on its node (drop_move_leftover(), unfreeze_shard_tables()).';
-- Router, check_cluster() step 6: the moves in progress (rows of
-- shard_moves) that no live session and no live background job drives
-- (_move_stalled(): a restart of the router, a terminated session); in
-- their phases frozen and caught_up the shard refuses writes until the
-- move is finished (the fix) or rolled back (abort_move(), in the detail).
CREATE OR REPLACE FUNCTION shardid_internal._check_move_stalled(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'move_stalled', m.shard, m.source,
           pg_catalog.format('the %s move of shard %s from node "%s" to node "%s" is in phase %s, and no session or background job drives it (a restart, a terminated session)%s; the fix finishes it; to roll it back instead: CALL shardid.abort_move(%s);',
                             m.mode, m.shard, m.source, m.target, m.phase,
                             CASE WHEN m.phase IN ('frozen', 'caught_up') THEN ': the shard refuses writes until then' ELSE '' END,
                             m.shard),
           NULL::text,
           CASE WHEN m.phase = 'aborting' OR m.mode = 'offline'
                THEN pg_catalog.format('CALL shardid.abort_move(%s);', m.shard)
                ELSE pg_catalog.format('CALL shardid.move_shard(%s, %L);', m.shard, m.target) END
      FROM shardid.shard_moves AS m
     WHERE shardid_internal._move_stalled(m)
     ORDER BY m.shard
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_move_stalled(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_move_stalled(jsonb, jsonb) IS
    'Router, check_cluster(): move_stalled, a move in progress that no session and no background job drives, with the CALL that finishes it.';
-- Router, check_cluster() step 6: a background rebalance or drain job
-- that has not ended and whose driver is gone (_rebalance_job_alive(): no
-- worker registered with this server's postmaster, e.g. after a restart of
-- the router or a promotion of its standby without the launcher); its
-- moves left in progress are reported as move_stalled. The fix starts its
-- driver again, as the role that started it (rebalance_resume()).
CREATE OR REPLACE FUNCTION shardid_internal._check_job_stalled(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'job_stalled', NULL::integer, j.drain_node,
           pg_catalog.format('background %s job %s (started by %s at %s, %s) has not ended and its driver is gone (a restart or a promotion of the router without the launcher); the fix resumes it, as the role that started it; to end it instead: SELECT shardid.rebalance_stop(%s); then the fix',
                             j.kind, j.job_id, j.started_by, j.started_at, j.state, j.job_id),
           NULL::text,
           pg_catalog.format('SELECT shardid.rebalance_resume(%s);', j.job_id)
      FROM shardid.rebalance_jobs AS j
     WHERE j.state IN ('starting', 'running', 'stopping') AND NOT j.in_session
       AND NOT shardid_internal._rebalance_job_alive(j)
     ORDER BY j.job_id
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_job_stalled(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_job_stalled(jsonb, jsonb) IS
    'Router, check_cluster(): job_stalled, a background rebalance or drain job that has not ended and whose driver is gone, with the call that resumes it.';
-- Router, check_cluster() step 7: the PL/Proxy cluster 'shardid' against
-- the placement (_proxy_diff()), when PL/Proxy is installed and a shard
-- is placed: one row, the number of partitions that differ and the first.
CREATE OR REPLACE FUNCTION shardid_internal._check_proxy_out_of_step(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF EXISTS (SELECT FROM pg_foreign_data_wrapper AS w WHERE w.fdwname = 'plproxy')
       AND EXISTS (SELECT FROM shardid.shard_placement) THEN
        RETURN QUERY
        SELECT 'proxy_out_of_step'::text, pg_catalog.min(d.shard), NULL::text,
               pg_catalog.format('the PL/Proxy cluster ''shardid'' differs from the placement in %s partitions (the first: shard %s)',
                                 pg_catalog.count(*), pg_catalog.min(d.shard)),
               NULL::text,
               'SELECT shardid.refresh_cluster();'::text
          FROM shardid_internal._proxy_diff() AS d
        HAVING pg_catalog.count(*) > 0;
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_proxy_out_of_step(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_proxy_out_of_step(jsonb, jsonb) IS
    'Router, check_cluster(): proxy_out_of_step, when the PL/Proxy cluster shardid differs from the placement, with the refresh_cluster() that aligns it.';
-- Router, check_cluster() step 8: unfinished apply_ddl() changes, on the
-- router (by start) and then on the nodes, each with the CALL that
-- finishes it; the detail names abandon_ddl(), which leaves it as far as
-- it got. The router's change whose template or command has a control
-- character is reported here as unsafe_name, finished by its ID
-- (_ddl_finish_by_id()); a node's is unsafe_name's, left out of facts.
CREATE OR REPLACE FUNCTION shardid_internal._check_ddl_unfinished(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN QUERY
    SELECT CASE WHEN x.unsafe THEN 'unsafe_name' ELSE 'ddl_unfinished' END, NULL::integer, NULL::text,
           CASE WHEN x.unsafe
                THEN pg_catalog.format('apply_ddl() change %s on the router is unfinished, and its template or command has a control character: %s; the fix finishes it by its ID, without the text',
                                       c.change_id, pg_catalog.to_jsonb(c.template || ' ' || c.command)::text)
                ELSE pg_catalog.format('apply_ddl() of %s on %s, started %s, is unfinished', c.command, c.template, c.started_at) END,
           NULL::text,
           CASE WHEN x.unsafe THEN shardid_internal._ddl_finish_by_id(c.change_id)
                ELSE pg_catalog.format('CALL shardid.apply_ddl(%L, %L);', c.template, c.command) END
      FROM shardid.ddl_changes AS c,
           LATERAL (SELECT shardid_internal._unsafe_text(c.template || ' ' || c.command) AS unsafe) AS x
     WHERE c.finished_at IS NULL
     ORDER BY c.started_at;
    RETURN QUERY
    SELECT 'ddl_unfinished'::text, NULL::integer, f.key,
           pg_catalog.format('apply_ddl() of %s on %s is unfinished on node "%s"; to leave it as far as it got instead: SELECT * FROM shardid.abandon_ddl(%L);',
                             c->>'command', c->>'template', f.key, c->>'template'),
           f.key,
           pg_catalog.format('CALL shardid.apply_ddl(%L, %L);', c->>'template', c->>'command')
      FROM jsonb_each(facts) AS f, jsonb_array_elements(f.value->'ddl_unfinished') AS c
     ORDER BY f.key COLLATE "C";
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_ddl_unfinished(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_ddl_unfinished(jsonb, jsonb) IS
    'Router, check_cluster(): ddl_unfinished, an apply_ddl() change not finished on the router or a node, with the CALL that finishes it (a router''s change with a control character: unsafe_name, finished by its ID).';
-- Router, check_cluster() step 9: the shards' copies that differ from
-- their node's template (_copy_drift() there: columns, their order,
-- types, NOT NULL, defaults, constraints, the template's indexes, owner),
-- each with a call on the node (never text to paste): shardid.align_copy()
-- for what it repairs in a transaction (statements built from the
-- template's catalog entries, run as the copy's owner in the fence); a
-- row of its own for each index the copy lacks (or has invalid), whose
-- fix builds it CONCURRENTLY, so that writes go on
-- (shardid.build_copy_index()), or, for a unique index over keys the copy
-- holds twice, lists them (shardid.copy_index_duplicates()): a build that
-- cannot succeed is not offered; and a row for each column the copy has
-- and its template lacks, whose advice names the node and both ways out
-- (drop it there, or give the template and every copy it with
-- apply_ddl()). Text with a control character is shown escaped and gets
-- no fix.
CREATE OR REPLACE FUNCTION shardid_internal._check_copy_differs(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    WITH c AS (
        SELECT f.key AS node, d, (d->>'shard')::integer AS shard, x.unsafe,
               EXISTS (SELECT FROM jsonb_array_elements(d->'steps') AS s WHERE (s->>0)::integer < 4) AS aligns,
               EXISTS (SELECT FROM jsonb_array_elements(d->'steps') AS s WHERE (s->>0)::integer = 4)
                   OR COALESCE(jsonb_array_length(d->'extra'), 0) > 0 AS rows_of_their_own
          FROM jsonb_each(facts) AS f, jsonb_array_elements(COALESCE(f.value->'drift', '[]')) AS d,
               LATERAL (SELECT shardid_internal._unsafe_text(pg_catalog.concat(d->>'table', d->>'table_name', d->>'template', (d->'extra')::text))
                            OR EXISTS (SELECT FROM jsonb_array_elements_text(d->'differences') AS s WHERE shardid_internal._unsafe_text(s))
                            AS unsafe) AS x
    )
    SELECT r.kind, r.shard, r.node, r.detail, r.run_on, r.fix
      FROM (
        -- what align_copy() repairs; text with a control character; no repair at all
        SELECT 'copy_differs' AS kind, c.shard, c.node, 0 AS ord, '' AS what,
               pg_catalog.format('%s on node "%s" differs from its template: %s', c.d->>'table', c.node,
                                 CASE WHEN c.unsafe THEN (c.d->'differences')::text
                                      ELSE (SELECT pg_catalog.string_agg(s, '; ') FROM jsonb_array_elements_text(c.d->'differences') AS s) END) AS detail,
               CASE WHEN c.unsafe OR NOT c.aligns THEN NULL ELSE c.node END AS run_on,
               CASE WHEN c.unsafe THEN '-- a name here has a control character: shardid builds no command with it; look at the copy on the node'
                    WHEN NOT c.aligns THEN '-- the copy has what its template lacks (see the detail): drop it there, or give the template it with apply_ddl()'
                    ELSE pg_catalog.format('SELECT * FROM shardid.align_copy(%s, %L);', c.shard, c.d->>'table_name') END AS fix
          FROM c WHERE c.unsafe OR c.aligns OR NOT c.rows_of_their_own
        UNION ALL
        -- each index to build, CONCURRENTLY; a unique one over duplicates is reported as such
        SELECT 'copy_differs', c.shard, c.node, 1, s->>1,
               CASE WHEN COALESCE((s->>2)::bigint, 0) > 0
                    THEN pg_catalog.format('%s on node "%s" lacks unique index %I of its template, and holds %s %s it refuses: a build would fail; the fix lists them, then CALL shardid.build_copy_index(%s, %L, %L);',
                                           c.d->>'table', c.node, s->>1, s->>2, CASE WHEN (s->>2)::bigint = 1 THEN 'key' ELSE 'keys' END,
                                           c.shard, c.d->>'table_name', s->>1)
                    ELSE pg_catalog.format('%s on node "%s" lacks index %I of its template (or has it invalid); the fix builds it CONCURRENTLY', c.d->>'table', c.node, s->>1) END,
               c.node,
               CASE WHEN COALESCE((s->>2)::bigint, 0) > 0
                    THEN pg_catalog.format('SELECT * FROM shardid.copy_index_duplicates(%s, %L, %L);', c.shard, c.d->>'table_name', s->>1)
                    ELSE pg_catalog.format('CALL shardid.build_copy_index(%s, %L, %L);', c.shard, c.d->>'table_name', s->>1) END
          FROM c, jsonb_array_elements(c.d->'steps') AS s
         WHERE NOT c.unsafe AND (s->>0)::integer = 4
        UNION ALL
        -- each column the template lacks: advice that names the node and the statements
        SELECT 'copy_differs', c.shard, c.node, 2, e->>'column',
               pg_catalog.format('%s on node "%s" has column %I %s, which its template %s lacks', c.d->>'table', c.node, e->>'column', e->>'type', c.d->>'template'),
               c.node,
               pg_catalog.format('-- its data is yours to keep or drop: on node "%s", ALTER TABLE %s DROP COLUMN %I; or, on the router, give the template and every copy it: CALL shardid.apply_ddl(%L, %L);',
                                 c.node, c.d->>'table', e->>'column', c.d->>'template',
                                 pg_catalog.format('ALTER TABLE %%s ADD COLUMN IF NOT EXISTS %I %s', e->>'column', e->>'type'))
          FROM c, jsonb_array_elements(c.d->'extra') AS e
         WHERE NOT c.unsafe
      ) AS r
     ORDER BY r.node COLLATE "C", r.shard, r.detail COLLATE "C", r.ord, r.what COLLATE "C"
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_copy_differs(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_copy_differs(jsonb, jsonb) IS
    'Router, check_cluster(): copy_differs, a shard''s copy that differs from its node''s template: the align_copy() call that aligns it on the node; for each index it lacks, the build_copy_index() call that builds it CONCURRENTLY (a unique one over duplicates: the copy_index_duplicates() call that lists them); for each column its template lacks, advice that names the node and the statements (none when a text has a control character).';
-- Router, check_cluster() step 10: the shards whose privileges differ from
-- what their node's templates record (_privilege_steps() there: a copy
-- without its template's grants, or with grants its template does not
-- give; a schema or generator without the USAGE those grants need), each
-- with the call that aligns the shard on the node,
-- shardid.align_privileges() (each statement run as the owner of what it
-- touches, in the fence; never text to paste). The fix holds the shard's
-- number only; a detail with a control character is shown escaped.
CREATE OR REPLACE FUNCTION shardid_internal._check_privileges_differ(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'privileges_differ', (d->>'shard')::integer, f.key,
           pg_catalog.format('shard %s on node "%s" differs from the privileges its templates record: %s', (d->>'shard')::integer, f.key,
                             CASE WHEN EXISTS (SELECT FROM jsonb_array_elements_text(d->'differences') AS s WHERE shardid_internal._unsafe_text(s))
                                  THEN (d->'differences')::text
                                  ELSE (SELECT pg_catalog.string_agg(s, '; ') FROM jsonb_array_elements_text(d->'differences') AS s) END),
           f.key,
           pg_catalog.format('SELECT * FROM shardid.align_privileges(%s);', (d->>'shard')::integer)
      FROM jsonb_each(facts) AS f, jsonb_array_elements(COALESCE(f.value->'privileges', '[]')) AS d
     ORDER BY f.key COLLATE "C", (d->>'shard')::integer
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_privileges_differ(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_privileges_differ(jsonb, jsonb) IS
    'Router, check_cluster(): privileges_differ, a shard whose copies, schema or generator differ from the privileges its node''s templates record, with the align_privileges() call that aligns it on the node.';
-- Router: what is wrong with the cluster, one row per problem, each with
-- the command that fixes it (fix) and where to run it (run_on: a node's
-- name; NULL for the router, and for a fix that is only advice, a comment
-- of one line); no row on a healthy cluster.
--
-- Every node is read once over dblink (search_path pinned): its shardid
-- version and, at the router's version, its facts
-- (shardid_internal._node_facts() there); a node that cannot be read is
-- recorded with the error and its SQLSTATE. Then each kind of
-- shardid.check_cluster_kinds, the one list of them, is checked by its
-- function shardid_internal._check_<kind>(nodes, facts): nodes holds what
-- was read of every node, facts the facts of the nodes read without what
-- holds a control character (_node_facts_safe(); _check_unsafe_name()
-- reports that), so that no name read on a node with a control character
-- reaches a fix. Rows come step by step (the view's step); the rows of a
-- step with several kinds are merged: reading the nodes (step 1) by node,
-- the shards against the placement (step 3) by shard, then node; within
-- a kind, in its function's order. Shards being moved (rows of
-- shard_moves) are live on both of their nodes by design and are not
-- reported but by move_stalled.
CREATE OR REPLACE FUNCTION shardid.check_cluster()
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    conn CONSTANT text := 'shardid_check_cluster';
    my_version text := (SELECT e.extversion FROM pg_extension AS e WHERE e.extname = 'shardid');
    nd    record;
    v     text;
    got   jsonb;
    nodes jsonb := '{}';  -- node: {version, facts} as read, or {error, sqlstate}
    facts jsonb;          -- node: its facts without what holds a control character
    msg   text;
    st    text;
BEGIN
    PERFORM shardid_internal._dblink_schema();
    FOR nd IN SELECT n.node FROM shardid.nodes AS n ORDER BY n.node COLLATE "C" LOOP
        BEGIN
            PERFORM shardid_internal._node_close(conn);  -- not one left open to another node
            PERFORM shardid_internal._node_connect(conn, nd.node);
            PERFORM shardid_internal._node(conn, 'SET search_path = pg_catalog, pg_temp', nd.node);
            v := shardid_internal._node(conn, 'SELECT e.extversion FROM pg_catalog.pg_extension AS e WHERE e.extname OPERATOR(pg_catalog.=) ''shardid''', nd.node);
            got := jsonb_build_object('version', v);
            IF v = my_version THEN
                got := got || jsonb_build_object('facts',
                    shardid_internal._node(conn, 'SELECT shardid_internal._node_facts()::pg_catalog.text', nd.node)::jsonb);
            END IF;
            PERFORM shardid_internal._node_close(conn);
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, st = RETURNED_SQLSTATE;
            PERFORM shardid_internal._node_close(conn);
            got := jsonb_build_object('error', msg, 'sqlstate', st);
        END;
        nodes := nodes || jsonb_build_object(nd.node, got);
    END LOOP;
    SELECT COALESCE(jsonb_object_agg(n.key, shardid_internal._node_facts_safe(n.value->'facts')), '{}') INTO facts
      FROM jsonb_each(nodes) AS n WHERE n.value ? 'facts';

    RETURN QUERY EXECUTE
        'SELECT r.kind, r.shard, r.node, r.detail, r.run_on, r.fix FROM ('
        || (SELECT pg_catalog.string_agg(pg_catalog.format('SELECT %s AS step, c.* FROM shardid_internal.%I($1, $2) WITH ORDINALITY AS c',
                                                           k.step, '_check_' || k.kind), ' UNION ALL ')
              FROM shardid.check_cluster_kinds AS k)
        || ') AS r ORDER BY r.step, CASE r.step WHEN 1 THEN r.node COLLATE "C" END,
                            CASE r.step WHEN 3 THEN r.shard END, CASE r.step WHEN 3 THEN r.node END, r.ordinality'
        USING nodes, facts;
END
$$;

REVOKE ALL ON FUNCTION shardid.check_cluster() FROM PUBLIC;

COMMENT ON FUNCTION shardid.check_cluster() IS
    'Router: one row per problem of the cluster (kind, shard, node, detail, run_on: the node to run the fix on, NULL for the router or advice; fix: the command that fixes it), none when healthy: unreachable or unreadable nodes, names with control characters, layouts, shards live twice or nowhere, placements, templates, leftovers of moves, moves nothing drives, the PL/Proxy cluster, unfinished apply_ddl(), shard copies that differ from their template. No fix holds a name read on a node that has a control character.';
