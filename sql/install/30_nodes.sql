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
-- (EXECUTE revoked from PUBLIC).
--
-- Secrets: connect strings never hold a password (add_node refuses one, a
-- CHECK enforces it): the foreign server's options are readable by every
-- role, and so is whatever pg_dump copies. Passwords belong in .pgpass (or a
-- passfile / service file) of the OS user that connects. shardid.nodes is
-- readable by administrators only; placement and shard_moves by everyone.
--
-- Moves: bin/shardid-move-shard keeps each move as a row of
-- shardid.shard_moves on the router, and freezes a shard on its node (a
-- trigger on every table of the shard) rather than on the router, so a move
-- changes the cluster once, at repoint_shard().

-- The data nodes: a name and a libpq key=value connect string.
CREATE TABLE shardid.nodes (
    node     text PRIMARY KEY
             CHECK (node OPERATOR(pg_catalog.~) '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,62}$'),
    connstr  text NOT NULL
             CONSTRAINT nodes_connstr_no_password
             CHECK (connstr OPERATOR(pg_catalog.!~*) '(^|\s)password\s*='),
    added_at timestamptz NOT NULL DEFAULT pg_catalog.now()
);
SELECT pg_catalog.pg_extension_config_dump('shardid.nodes', '');
-- administrators only (an explicit ACL, as an update from 0.1 leaves it)
REVOKE SELECT ON shardid.nodes FROM PUBLIC;

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

-- Moves in progress, one row per shard, written by bin/shardid-move-shard:
-- schema (DDL copied) -> copy (publication, subscription, initial copy and
-- catch-up) -> frozen (writes refused on the source, waiting for the target
-- to confirm source_lsn) -> caught_up (target attached, generator raised)
-- -> repointed (router switched; the old copy is being retired); the row is
-- deleted when the move is done or rolled back (phase aborting meanwhile). Not dumped: a restored router
-- has no move in progress.
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

-- The placement, with the move in progress if any; no connect strings
-- (shardid.nodes is for administrators).
CREATE VIEW shardid.placement AS
SELECT p.shard, p.node, p.frozen, p.placed_at, m.target AS moving_to, m.phase AS move_phase
  FROM shardid.shard_placement AS p
  LEFT JOIN shardid.shard_moves AS m ON m.shard OPERATOR(pg_catalog.=) p.shard;
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

-- Brings the partition of one shard in line with the placement: a single
-- ALTER SERVER ... OPTIONS (SET pN ...), instead of refresh_cluster()'s diff
-- of every partition (the whole cluster when the server or the option is
-- missing). Returns the number of partitions changed (0 or 1).
CREATE FUNCTION shardid._refresh_partition(shard integer) RETURNS integer
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

-- Freezes a shard on the router: its partition turns read-only on its node,
-- so writers through the router fail with 25006 (retry) and reads go on.
-- (bin/shardid-move-shard freezes on the source node instead, which leaves
-- the cluster alone.)
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
    PERFORM shardid._refresh_partition(shard);
    RETURN p.node;
END
$$;

-- Undoes freeze_shard().
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
    PERFORM shardid._refresh_partition(shard);
END
$$;

-- Last step of a move, once the new node holds a verified copy: the
-- partition points at the new node, writable. The shard must be frozen on
-- the router, or have a move to this node in phase caught_up (frozen on its
-- node), which turns repointed in the same transaction.
CREATE FUNCTION shardid.repoint_shard(shard integer, node text) RETURNS void
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

-- On the source node during a move's cut-over: writes to the shard fail
-- at once with 25006 (retry), instead of waiting behind a lock.
CREATE FUNCTION shardid._refuse_frozen_write() RETURNS trigger
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

-- Node, move cut-over: every table of the shard's schema gets the trigger
-- shardid_move_frozen, which refuses writes. Waits for writes in flight
-- (the caller sets lock_timeout). Returns the number of tables.
CREATE FUNCTION shardid.freeze_shard_tables(schema_name name, shard integer, target text) RETURNS integer
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

-- Node: undoes freeze_shard_tables() (abort of a move). Returns the number
-- of triggers dropped.
CREATE FUNCTION shardid.thaw_shard_tables(schema_name name) RETURNS integer
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

-- Node, last move step on the source: unregisters the shard and retires
-- its schema: dropped, or kept under new_name with a trigger on every table
-- that refuses writes. Returns the schema's new name (NULL when dropped).
CREATE FUNCTION shardid.retire_shard(shard integer, target text, new_name name) RETURNS name
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

REVOKE ALL ON FUNCTION shardid.refresh_cluster() FROM PUBLIC;
REVOKE ALL ON FUNCTION shardid._refresh_partition(integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION shardid.add_node(text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION shardid.remove_node(text) FROM PUBLIC;
REVOKE ALL ON FUNCTION shardid.place_shards(text, integer, integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION shardid.freeze_shard(integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION shardid.unfreeze_shard(integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION shardid.repoint_shard(integer, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION shardid.freeze_shard_tables(name, integer, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION shardid.thaw_shard_tables(name) FROM PUBLIC;
REVOKE ALL ON FUNCTION shardid.retire_shard(integer, text, name) FROM PUBLIC;

COMMENT ON TABLE shardid.nodes IS
    'Router: the data nodes, by name, with a libpq key=value connect string (never a password). Written by add_node(), remove_node(). Readable by administrators only.';
COMMENT ON TABLE shardid.shard_moves IS
    'Router: moves in progress (bin/shardid-move-shard), one row per shard: source, target, phase (schema, copy, frozen, caught_up, repointed, or aborting), progress. Deleted when the move is done or aborted.';
COMMENT ON TABLE shardid.shard_placement IS
    'Router: the node holding each placed logical shard; frozen (read-only through the router) by freeze_shard().';
COMMENT ON VIEW shardid.placement IS
    'Router: each placed shard with its node, whether it is frozen on the router, and the target and phase of its move in progress.';
COMMENT ON FUNCTION shardid.partition_connstrs() IS
    'Router: the connect string of each PL/Proxy partition (= logical shard) of cluster ''shardid'', in order; unplaced shards get one that fails naming the shard, frozen ones a read-only one.';
COMMENT ON FUNCTION shardid.refresh_cluster() IS
    'Router: creates or updates the PL/Proxy cluster ''shardid'' (SQL/MED server) from the placement; returns the number of partitions changed. Needs CREATE EXTENSION plproxy.';
COMMENT ON FUNCTION shardid._refresh_partition(integer) IS
    'Router: updates the PL/Proxy partition of one shard from the placement (one ALTER SERVER option); returns 0 or 1.';
COMMENT ON FUNCTION shardid.add_node(text, text) IS
    'Router: registers a data node (name, libpq key=value connect string) and creates the PL/Proxy cluster ''shardid'' if needed.';
COMMENT ON FUNCTION shardid.remove_node(text) IS
    'Router: unregisters a data node that holds no shard.';
COMMENT ON FUNCTION shardid.place_shards(text, integer, integer) IS
    'Router: routes shards first..last to a node that already holds them; returns how many were newly placed. Refuses shards placed on another node.';
COMMENT ON FUNCTION shardid.placed_shards() IS
    'Router: the placed shard numbers, for fan-out with SPLIT i_shards; RUN ON i_shards;';
COMMENT ON FUNCTION shardid.freeze_shard(integer) IS
    'Router: makes the shard''s partition read-only (writes fail with 25006, reads go on); returns its node.';
COMMENT ON FUNCTION shardid.unfreeze_shard(integer) IS
    'Router: undoes freeze_shard().';
COMMENT ON FUNCTION shardid.repoint_shard(integer, text) IS
    'Router, last move step: points the partition of a frozen shard, or of a caught-up move to that node, at its new node, writable.';
COMMENT ON FUNCTION shardid._refuse_retired_write() IS
    'Trigger on the retired copy of a moved shard: refuses writes (25006, retry through the router).';
COMMENT ON FUNCTION shardid._refuse_frozen_write() IS
    'Trigger on the tables of a shard during a move''s cut-over: refuses writes at once (25006, retry).';
COMMENT ON FUNCTION shardid.freeze_shard_tables(name, integer, text) IS
    'Node, move cut-over: puts trigger shardid_move_frozen on every table of the schema (writes fail with 25006); returns the number of tables.';
COMMENT ON FUNCTION shardid.thaw_shard_tables(name) IS
    'Node: drops the shardid_move_frozen triggers of a schema (abort of a move); returns how many.';
COMMENT ON FUNCTION shardid.retire_shard(integer, text, name) IS
    'Node, after a move: detaches the shard and drops its schema (new_name NULL) or renames it to new_name with triggers refusing writes.';
