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
