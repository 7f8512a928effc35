-- run_on_shards(): one batch on the dblink connection conn (to this
-- database, or from the router to node), in one transaction there
-- (_run_on_shards_batch, committed when it returns), waited for so that a
-- cancel of this session (a statement_timeout, Ctrl-C) cancels the batch
-- at the other end too (_apply_ddl_busy); returns its rows as a JSON
-- array (shard, success, result). An error of the batch as a whole is
-- raised, naming node.
CREATE OR REPLACE FUNCTION shardid_internal._run_on_shards_send(conn text, node text, template text, command text,
                                                                shards integer[], with_template boolean, as_role name,
                                                                optional boolean)
    RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM shardid_internal._node_send(conn,
        format('SELECT pg_catalog.jsonb_agg(b) FROM shardid_internal._run_on_shards_batch(%L, %L, %L, %L, %L, %L) AS b',
               template, command, COALESCE(shards, '{}'), with_template, as_role, optional));
    WHILE shardid_internal._apply_ddl_busy(conn) LOOP
    END LOOP;
    RETURN COALESCE(shardid_internal._node_wait(conn, node)::jsonb, '[]');
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._run_on_shards_send(text, text, text, text, integer[], boolean, name, boolean) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._run_on_shards_send(text, text, text, text, integer[], boolean, name, boolean) IS
    'Internal: run_on_shards(), one batch on a dblink connection (this database or a node) in one transaction there, waited for so that a cancel of this session cancels it there too; its rows as a JSON array.';
