-- Router, moves: a point where a test may pause a move in a phase. The
-- tests that do create shardid_test.move_pause(shard, phase) on the router
-- (test/lib/move_pause.sql: it waits while another session holds an
-- advisory lock); the extension has no test code. It is called only when
-- a superuser owns it and its schema, so that no other role's code runs
-- inside a move. Without it, as in production, this is one catalog lookup.
CREATE OR REPLACE FUNCTION shardid_internal._move_pause(shard integer, phase text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF EXISTS (SELECT FROM pg_proc AS p
                 JOIN pg_namespace AS n ON n.oid = p.pronamespace
                 JOIN pg_roles AS fo ON fo.oid = p.proowner
                 JOIN pg_roles AS so ON so.oid = n.nspowner
                WHERE p.oid = to_regprocedure('shardid_test.move_pause(integer, text)')
                  AND fo.rolsuper AND so.rolsuper) THEN
        PERFORM shardid_test.move_pause(shard, phase);
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_pause(integer, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_pause(integer, text) IS
    'Router, moves: a pause point for tests; calls shardid_test.move_pause(shard, phase) if a superuser created it (test/lib/move_pause.sql).';
