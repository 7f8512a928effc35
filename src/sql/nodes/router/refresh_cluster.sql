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
