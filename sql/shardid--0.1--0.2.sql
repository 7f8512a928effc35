-- shardid 0.1 -> 0.2: ALTER EXTENSION shardid UPDATE TO '0.2'.
-- Everything this script creates or changes is also in sql/install/*.sql,
-- the 0.2 install script; test/update checks that both give the same objects.

\echo Use "ALTER EXTENSION shardid UPDATE TO '0.2'" to load this file. \quit

-- moves: online shard moves (issue 11), node passwords (issue 10, item 5)
-- Connect strings must not hold passwords: the PL/Proxy server's options and
-- shardid.nodes are readable by other roles and copied by pg_dump.
DO $$
BEGIN
    IF EXISTS (SELECT FROM shardid.nodes AS n WHERE n.connstr OPERATOR(pg_catalog.~*) '(^|\s)password\s*=') THEN
        RAISE EXCEPTION 'shardid 0.2 refuses node connect strings that hold a password: %',
                (SELECT pg_catalog.string_agg(n.node, ', ' ORDER BY n.node) FROM shardid.nodes AS n
                  WHERE n.connstr OPERATOR(pg_catalog.~*) '(^|\s)password\s*=')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Put the passwords in ~/.pgpass of the router''s server user, remove password=... with UPDATE shardid.nodes SET connstr = ...; SELECT shardid.refresh_cluster(); then update again.';
    END IF;
END
$$;
ALTER TABLE shardid.nodes ADD CONSTRAINT nodes_connstr_no_password
    CHECK (connstr OPERATOR(pg_catalog.!~*) '(^|\s)password\s*=');
REVOKE SELECT ON shardid.nodes FROM PUBLIC;

CREATE TABLE shardid.shard_moves (
    shard       integer PRIMARY KEY REFERENCES shardid.shard_placement (shard),
    source      text NOT NULL REFERENCES shardid.nodes (node),
    target      text NOT NULL REFERENCES shardid.nodes (node),
    schema_name name NOT NULL,
    mode        text NOT NULL CHECK (mode OPERATOR(pg_catalog.=) ANY (ARRAY['online', 'offline'])),
    phase       text NOT NULL CHECK (phase OPERATOR(pg_catalog.=) ANY (ARRAY['schema', 'copy', 'frozen', 'caught_up', 'repointed', 'aborting'])),
    source_lsn  pg_lsn,
    progress    text,
    started_at  timestamptz NOT NULL DEFAULT pg_catalog.now(),
    updated_at  timestamptz NOT NULL DEFAULT pg_catalog.now(),
    CHECK (source OPERATOR(pg_catalog.<>) target)
);
GRANT SELECT ON shardid.shard_moves TO PUBLIC;

DROP VIEW shardid.placement;
CREATE VIEW shardid.placement AS
SELECT p.shard, p.node, p.frozen, p.placed_at, m.target AS moving_to, m.phase AS move_phase
  FROM shardid.shard_placement AS p
  LEFT JOIN shardid.shard_moves AS m ON m.shard OPERATOR(pg_catalog.=) p.shard;
GRANT SELECT ON shardid.placement TO PUBLIC;

CREATE OR REPLACE FUNCTION shardid.add_node(name text, connstr text) RETURNS void
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
    IF connstr OPERATOR(pg_catalog.~*) '(^|\s)password\s*=' THEN
        RAISE EXCEPTION 'the connect string of node % must not hold a password', name
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'Connect strings are stored in the PL/Proxy cluster''s options, which every role can read, and in dumps.',
                  HINT = 'Put the password in ~/.pgpass of the OS user that connects (the router''s and each node''s server user), or name a passfile= or service= in the connect string.';
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
     WHERE s.srvname OPERATOR(pg_catalog.=) 'shardid'
       AND o.option_name OPERATOR(pg_catalog.=) ('p' OPERATOR(pg_catalog.||) _refresh_partition.shard);
    IF cur IS NULL THEN
        RETURN shardid.refresh_cluster();
    END IF;
    SELECT CASE WHEN p.shard IS NULL THEN
                    pg_catalog.format('service=''shardid: shard %s is not placed on any node''', g.s)
                WHEN p.frozen THEN
                    n.connstr OPERATOR(pg_catalog.||) ' options=''-c default_transaction_read_only=on'''
                ELSE n.connstr END
      INTO want
      FROM (SELECT _refresh_partition.shard AS s) AS g
      LEFT JOIN shardid.shard_placement AS p ON p.shard OPERATOR(pg_catalog.=) g.s
      LEFT JOIN shardid.nodes AS n ON n.node OPERATOR(pg_catalog.=) p.node;
    IF want OPERATOR(pg_catalog.=) cur THEN
        RETURN 0;
    END IF;
    EXECUTE pg_catalog.format('ALTER SERVER shardid OPTIONS (SET %I %L)', ('p' OPERATOR(pg_catalog.||) shard), want);
    RETURN 1;
END
$$;

CREATE OR REPLACE FUNCTION shardid.freeze_shard(shard integer) RETURNS text
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
    PERFORM shardid._refresh_partition(shard);
    RETURN p.node;
END
$$;

CREATE OR REPLACE FUNCTION shardid.unfreeze_shard(shard integer) RETURNS void
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
    PERFORM shardid._refresh_partition(shard);
END
$$;

CREATE OR REPLACE FUNCTION shardid.repoint_shard(shard integer, node text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p shardid.shard_placement;
    m shardid.shard_moves;
BEGIN
    LOCK TABLE shardid.shard_placement IN SHARE ROW EXCLUSIVE MODE;
    SELECT * INTO p FROM shardid.shard_placement AS x WHERE x.shard OPERATOR(pg_catalog.=) repoint_shard.shard;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'shard % is not placed on any node', shard USING ERRCODE = 'undefined_object';
    END IF;
    IF NOT EXISTS (SELECT FROM shardid.nodes AS n WHERE n.node OPERATOR(pg_catalog.=) repoint_shard.node) THEN
        RAISE EXCEPTION 'node "%" does not exist', node USING ERRCODE = 'undefined_object';
    END IF;
    SELECT * INTO m FROM shardid.shard_moves AS x WHERE x.shard OPERATOR(pg_catalog.=) repoint_shard.shard FOR UPDATE;
    IF m.shard IS NOT NULL AND (m.phase OPERATOR(pg_catalog.<>) 'caught_up' OR m.target OPERATOR(pg_catalog.<>) repoint_shard.node) THEN
        RAISE EXCEPTION 'shard % is being moved to node "%" (phase %)', shard, m.target, m.phase
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Only a move that has caught up on its target may be repointed, to that target.',
                  HINT = 'Resume the move with bin/shardid-move-shard, or abort it with --abort.';
    END IF;
    IF m.shard IS NULL AND NOT p.frozen THEN
        RAISE EXCEPTION 'shard % is not frozen', shard
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Repointing a shard that takes writes would lose the writes made during the copy.',
                  HINT = 'Use bin/shardid-move-shard, which freezes, copies, checks and repoints.';
    END IF;
    UPDATE shardid.shard_placement AS x
       SET node = repoint_shard.node, frozen = false, placed_at = pg_catalog.now()
     WHERE x.shard OPERATOR(pg_catalog.=) repoint_shard.shard;
    UPDATE shardid.shard_moves AS x SET phase = 'repointed', updated_at = pg_catalog.now()
     WHERE x.shard OPERATOR(pg_catalog.=) repoint_shard.shard;
    PERFORM shardid._refresh_partition(shard);
END
$$;

CREATE OR REPLACE FUNCTION shardid._refuse_frozen_write() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION 'shard % is being moved to node %: %.% refuses writes for the cut-over', TG_ARGV[0], TG_ARGV[1],
            pg_catalog.quote_ident(TG_TABLE_SCHEMA), pg_catalog.quote_ident(TG_TABLE_NAME)
        USING ERRCODE = 'read_only_sql_transaction',
              HINT = 'Retry in a new transaction: the move finishes within seconds.';
END
$$;

CREATE OR REPLACE FUNCTION shardid.freeze_shard_tables(schema_name name, shard integer, target text) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t record;
    n integer := 0;
BEGIN
    FOR t IN SELECT c.oid, c.relname FROM pg_catalog.pg_class AS c
              WHERE c.relnamespace OPERATOR(pg_catalog.=)
                    (SELECT x.oid FROM pg_catalog.pg_namespace AS x WHERE x.nspname OPERATOR(pg_catalog.=) freeze_shard_tables.schema_name)
                AND c.relkind OPERATOR(pg_catalog.=) ANY (ARRAY['r', 'p']::"char"[])
              ORDER BY c.relname LOOP
        n := n OPERATOR(pg_catalog.+) 1;
        CONTINUE WHEN EXISTS (SELECT FROM pg_catalog.pg_trigger AS g
                               WHERE g.tgrelid OPERATOR(pg_catalog.=) t.oid AND g.tgname OPERATOR(pg_catalog.=) 'shardid_move_frozen');
        EXECUTE pg_catalog.format('CREATE TRIGGER shardid_move_frozen BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON %I.%I
                                   FOR EACH STATEMENT EXECUTE FUNCTION shardid._refuse_frozen_write(%L, %L)',
                                  schema_name, t.relname, shard, target);
    END LOOP;
    RETURN n;
END
$$;

CREATE OR REPLACE FUNCTION shardid.thaw_shard_tables(schema_name name) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t record;
    n integer := 0;
BEGIN
    FOR t IN SELECT c.relname FROM pg_catalog.pg_class AS c
               JOIN pg_catalog.pg_trigger AS g ON g.tgrelid OPERATOR(pg_catalog.=) c.oid
              WHERE c.relnamespace OPERATOR(pg_catalog.=)
                    (SELECT x.oid FROM pg_catalog.pg_namespace AS x WHERE x.nspname OPERATOR(pg_catalog.=) thaw_shard_tables.schema_name)
                AND g.tgname OPERATOR(pg_catalog.=) 'shardid_move_frozen' LOOP
        EXECUTE pg_catalog.format('DROP TRIGGER shardid_move_frozen ON %I.%I', schema_name, t.relname);
        n := n OPERATOR(pg_catalog.+) 1;
    END LOOP;
    RETURN n;
END
$$;

CREATE OR REPLACE FUNCTION shardid.retire_shard(shard integer, target text, new_name name) RETURNS name
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nsp name;
    t   record;
BEGIN
    nsp := shardid.detach_shard(shard);
    PERFORM shardid.thaw_shard_tables(nsp);
    IF new_name IS NULL THEN
        EXECUTE pg_catalog.format('DROP SCHEMA %I CASCADE', nsp);
        RETURN NULL;
    END IF;
    FOR t IN SELECT c.relname FROM pg_catalog.pg_class AS c
              WHERE c.relnamespace OPERATOR(pg_catalog.=)
                    (SELECT x.oid FROM pg_catalog.pg_namespace AS x WHERE x.nspname OPERATOR(pg_catalog.=) nsp)
                AND c.relkind OPERATOR(pg_catalog.=) ANY (ARRAY['r', 'p']::"char"[]) LOOP
        EXECUTE pg_catalog.format('CREATE TRIGGER shardid_retired BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON %I.%I
                                   FOR EACH STATEMENT EXECUTE FUNCTION shardid._refuse_retired_write(%L, %L)',
                                  nsp, t.relname, shard, target);
    END LOOP;
    EXECUTE pg_catalog.format('ALTER SCHEMA %I RENAME TO %I', nsp, new_name);
    RETURN new_name;
END
$$;

REVOKE ALL ON FUNCTION shardid._refresh_partition(integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION shardid.freeze_shard_tables(name, integer, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION shardid.thaw_shard_tables(name) FROM PUBLIC;
REVOKE ALL ON FUNCTION shardid.retire_shard(integer, text, name) FROM PUBLIC;

COMMENT ON TABLE shardid.nodes IS
    'Router: the data nodes, by name, with a libpq key=value connect string (never a password). Written by add_node(), remove_node(). Readable by administrators only.';
COMMENT ON TABLE shardid.shard_moves IS
    'Router: moves in progress (bin/shardid-move-shard), one row per shard: source, target, phase (schema, copy, frozen, caught_up, repointed, or aborting), progress. Deleted when the move is done or aborted.';
COMMENT ON VIEW shardid.placement IS
    'Router: each placed shard with its node, whether it is frozen on the router, and the target and phase of its move in progress.';
COMMENT ON FUNCTION shardid._refresh_partition(integer) IS
    'Router: updates the PL/Proxy partition of one shard from the placement (one ALTER SERVER option); returns 0 or 1.';
COMMENT ON FUNCTION shardid.repoint_shard(integer, text) IS
    'Router, last move step: points the partition of a frozen shard, or of a caught-up move to that node, at its new node, writable.';
COMMENT ON FUNCTION shardid._refuse_frozen_write() IS
    'Trigger on the tables of a shard during a move''s cut-over: refuses writes at once (25006, retry).';
COMMENT ON FUNCTION shardid.freeze_shard_tables(name, integer, text) IS
    'Node, move cut-over: puts trigger shardid_move_frozen on every table of the schema (writes fail with 25006); returns the number of tables.';
COMMENT ON FUNCTION shardid.thaw_shard_tables(name) IS
    'Node: drops the shardid_move_frozen triggers of a schema (abort of a move); returns how many.';
COMMENT ON FUNCTION shardid.retire_shard(integer, text, name) IS
    'Node, after a move: detaches the shard and drops its schema (new_name NULL) or renames it to new_name with triggers refusing writes.';
