-- run_on_shards(template, command): one statement that changes no
-- definition the copies share (GRANT or REVOKE on the table, COMMENT ON
-- it, a column or a constraint, or a read: SELECT ... FROM %s) on a
-- sharded table's copy in every shard (%s = the copy's schema-qualified
-- name, replaced where the parser finds the table's name), as each copy's
-- owner in a security-restricted operation; a GRANT, REVOKE or COMMENT on
-- the template too (new shards are made from it). A node runs it in
-- batches over a dblink connection to itself (_run_on_shards_here), a
-- router on every node (_run_on_shards_router); each batch commits on its
-- own, so a function can return the rows: one per copy (and template),
-- with whether it succeeded and its result. Definition changes are
-- apply_ddl()'s.
CREATE OR REPLACE FUNCTION shardid.run_on_shards(template text, command text, batch_size integer DEFAULT 256,
                                                 loopback text DEFAULT NULL)
    RETURNS TABLE (shard integer, node text, success boolean, result text)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM shardid_internal._require_batch_size(batch_size);
    IF shardid_internal._apply_ddl_on_nodes() THEN
        RETURN QUERY SELECT * FROM shardid_internal._run_on_shards_router(template, command, batch_size);
    ELSIF NOT has_function_privilege('shardid_internal._run_on_shards_here(text,text,integer,text)', 'EXECUTE') THEN
        RAISE EXCEPTION 'permission denied to run a command on every shard of this node'
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'On a node, run_on_shards() commits each batch on a dblink connection to this database: it is for superusers, and roles granted EXECUTE on shardid_internal._run_on_shards_here() and the connection helpers it calls.';
    ELSE
        RETURN QUERY SELECT * FROM shardid_internal._run_on_shards_here(template, command, batch_size, loopback);
    END IF;
END
$$;

COMMENT ON FUNCTION shardid.run_on_shards(text, text, integer, text) IS
    'Node or router: runs one statement that changes no shared definition (GRANT/REVOKE on the table, COMMENT ON it or its column or constraint, or a read: SELECT ... FROM %s) on every shard''s copy of a sharded table (%s = its schema-qualified name) as the copy''s owner, and a GRANT, REVOKE or COMMENT on the template too; on a router, on every node. Batches commit on their own (dblink: to this database, loopback, or to each node). One row per copy: shard (NULL: the template), node, success, result (a read''s first value, the command tag, or the error with its SQLSTATE). Definition changes: apply_ddl().';
