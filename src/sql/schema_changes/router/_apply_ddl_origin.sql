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
