-- shardid 0.1 -> 0.2: what CREATE OR REPLACE cannot do. The build appends
-- every function and view of sql/install/*.sql (sql/include.awk), so the
-- upgrade script sql/shardid--0.1--0.2.sql re-creates each of them from the
-- same source as the install script; test/e2e/update.sh checks that both
-- give the same objects.

\echo Use "ALTER EXTENSION shardid UPDATE TO '0.2'" to load this file. \quit

-- The install script's schema check, so a 0.1 installed into a schema that
-- a non-superuser owns or may create in is not updated either.
\ir ../checks/extension_schema.sql

-- The layout marker is advanced only when an ID is issued, and by no
-- ordinary role.
REVOKE USAGE ON SEQUENCE shardid.ids_issued FROM PUBLIC;
GRANT SELECT ON SEQUENCE shardid.ids_issued TO PUBLIC;
COMMENT ON SEQUENCE shardid.ids_issued IS
    'Marker: advanced by next_id() once an ID has been issued; from then on the layout is frozen. Readable by PUBLIC, advanced by no ordinary role.';

-- The freeze record (written by next_id() from now on), started for a
-- database whose marker says IDs were issued under 0.1.
\ir ../tables/layout_freeze.sql
INSERT INTO shardid.layout_freeze (issued_at, epoch_ms, shard_bits, seq_bits)
SELECT pg_catalog.now(), coalesce(c.epoch_ms, 1314220021721), coalesce(c.shard_bits, 13), coalesce(c.seq_bits, 10)
  FROM (SELECT) AS one LEFT JOIN shardid.layout_config AS c ON true
 WHERE (SELECT s.is_called FROM shardid.ids_issued AS s);

-- Connect strings must not hold passwords: the PL/Proxy server's options and
-- shardid.nodes are readable by other roles and copied by pg_dump. libpq
-- parses each one (the functions are re-created below with the others).
\ir ../functions/_connstr_options.sql
\ir ../functions/_connstr_secret.sql
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
\ir ../tables/shard_moves.sql

-- placement gains the move's target and phase (re-created below).
DROP VIEW shardid.placement;
