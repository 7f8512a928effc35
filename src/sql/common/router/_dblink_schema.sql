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
