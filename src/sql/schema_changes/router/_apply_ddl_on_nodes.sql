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
