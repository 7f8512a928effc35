-- build_copy_index(shard, table_name, index_name): check_cluster()'s fix of
-- a shard's copy that lacks an index of its template (or has an invalid
-- one a failed build left): the template's definition built on the copy
-- CONCURRENTLY, so writes to the copy go on. The build runs outside a
-- transaction block, on a dblink connection to this database (this
-- server's socket, the session's role, as apply_ddl() CONCURRENTLY does;
-- PostgreSQL runs the owner's index expressions as the owner), and this
-- session commits while it runs, holding no snapshot the build waits for.
-- Refused before anything is built when it could not succeed: a unique
-- index over keys the copy holds twice (23505, HINT: the
-- copy_index_duplicates() call that lists them). A procedure because it
-- commits; no SET clause: it holds only the steps and their COMMITs.
CREATE OR REPLACE PROCEDURE shardid.build_copy_index(shard integer, table_name name, index_name name)
    LANGUAGE plpgsql
AS $$
DECLARE
    conn CONSTANT text := 'shardid_build_copy_index';
    b    jsonb;
    sql  text;
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid.build_copy_index()',
                                             'while the index is built',
                                             'CALL it on its own.');
    b := shardid_internal._build_copy_index_start(shard, table_name, index_name);
    COMMIT;
    IF (b OPERATOR(pg_catalog.->>) 'statement') IS NULL THEN
        RETURN;
    END IF;
    PERFORM shardid_internal._apply_ddl_connect(conn, NULL, NULL);
    FOR sql IN SELECT pg_catalog.jsonb_array_elements_text(b OPERATOR(pg_catalog.->) 'cleanup') LOOP
        PERFORM shardid_internal._node(conn, sql);
    END LOOP;
    PERFORM shardid_internal._node_send(conn, b OPERATOR(pg_catalog.->>) 'statement');
    COMMIT;
    WHILE shardid_internal._build_copy_index_wait(conn, (shardid_internal._copy_index(shard, table_name, index_name)).copy, index_name) LOOP
        COMMIT;
    END LOOP;
END
$$;

REVOKE ALL ON PROCEDURE shardid.build_copy_index(integer, name, name) FROM PUBLIC;

COMMENT ON PROCEDURE shardid.build_copy_index(integer, name, name) IS
    'Node: check_cluster()''s fix of a shard''s copy that lacks an index of its template: builds the template''s definition on the copy CONCURRENTLY (writes go on), over a dblink connection to this database while this session commits, dropping an invalid one a failed build left; refused first for a unique index over keys the copy holds twice (23505, HINT: copy_index_duplicates()). CALL it on its own.';
