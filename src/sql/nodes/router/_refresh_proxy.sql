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
