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
    err text[];
BEGIN
    IF shardid_internal._apply_ddl_busy(conn) THEN
        RETURN true;
    END IF;
    err := shardid_internal._node_outcome(conn);
    IF err IS NOT NULL THEN
        BEGIN
            PERFORM shardid_internal._node(conn, format('DROP INDEX CONCURRENTLY IF EXISTS %I.%I',
                                                        (SELECT n.nspname FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
                                                          WHERE c.oid = copy), index_name));
        EXCEPTION WHEN OTHERS THEN
            NULL;
        END;
    END IF;
    PERFORM shardid_internal._node_close(conn);
    IF err IS NOT NULL THEN
        PERFORM shardid_internal._raise(err[1], format('%s (on %s)', err[2], copy), err[3], err[4]);
    END IF;
    RETURN false;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._build_copy_index_wait(text, regclass, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._build_copy_index_wait(text, regclass, name) IS
    'Node, build_copy_index(): whether the build sent on a dblink connection still runs; once it ended, its error raised after the invalid index it left is dropped; the connection closed.';
