-- run_on_shards() on a node: the command checked here (_run_on_shards_start),
-- then the template and every registered shard's copy in batches of
-- batch_size, each batch one transaction on a dblink connection to this
-- database itself (_apply_ddl_connect: loopback, or this server's socket,
-- port, database and session user; search_path pinned), committed there
-- whatever becomes of the caller's transaction, so that no transaction
-- holds a lock on every copy. The statements are for the caller's
-- current_user (as_role): a copy whose owner's privileges it lacks is not
-- run, whoever the loopback connects as. Refused (25001) in a transaction
-- that holds a lock a batch could wait for, which would wait forever. One
-- row per target (node NULL): see _run_on_shards_batch.
CREATE OR REPLACE FUNCTION shardid_internal._run_on_shards_here(template text, command text, batch_size integer, loopback text)
    RETURNS TABLE (shard integer, node text, success boolean, result text)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    conn  CONSTANT text := 'shardid_run_on_shards';
    s     record;
    canon text;
    after integer := -1;
    batch integer[];
    first boolean := true;
    got   jsonb;
BEGIN
    s := shardid_internal._run_on_shards_start(template, command, current_user, false);
    canon := format('%I.%I', (s.t).template_schema, (s.t).template_name);
    IF pg_current_xact_id_if_assigned() IS NOT NULL
       OR EXISTS (SELECT FROM pg_locks AS l
                   WHERE l.pid = pg_backend_pid() AND l.locktype = 'relation'
                     AND l.mode NOT IN ('AccessShareLock', 'RowShareLock')) THEN
        RAISE EXCEPTION 'run_on_shards() cannot run in a transaction that has written or locked tables'
            USING ERRCODE = 'active_sql_transaction',
                  DETAIL = 'It runs each batch on a connection of its own to this database, which could wait for this transaction''s locks forever.',
                  HINT = 'Run it on its own, or after COMMIT.';
    END IF;
    IF NOT EXISTS (SELECT FROM pg_extension AS e WHERE e.extname = 'dblink') THEN
        RAISE EXCEPTION 'run_on_shards() needs the dblink extension'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'It commits each batch of copies on a connection of its own to this database, so that no transaction holds a lock on every copy.',
                  HINT = 'CREATE EXTENSION dblink; in this database (contrib, shipped with PostgreSQL).';
    END IF;
    PERFORM shardid_internal._apply_ddl_connect(conn, NULL, loopback);
    PERFORM shardid_internal._node(conn, 'SET application_name = ''shardid_run_on_shards''');
    LOOP
        SELECT array_agg(g.shard ORDER BY g.shard) INTO batch
          FROM (SELECT r.shard FROM shardid.shard_registry AS r WHERE r.shard > after ORDER BY r.shard LIMIT batch_size) AS g;
        EXIT WHEN batch IS NULL AND NOT first;
        got := shardid_internal._run_on_shards_send(conn, NULL, canon, command, batch, first, current_user, false);
        RETURN QUERY SELECT b.shard, NULL::text, b.success, b.result
                       FROM jsonb_to_recordset(got) AS b(shard integer, success boolean, result text);
        first := false;
        EXIT WHEN batch IS NULL;
        after := batch[cardinality(batch)];
    END LOOP;
    PERFORM shardid_internal._node_close(conn);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._run_on_shards_here(text, text, integer, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._run_on_shards_here(text, text, integer, text) IS
    'Internal: run_on_shards() on a node: the template and every registered copy in batches, each batch committed on a dblink connection to this database (loopback); the statements for the caller''s role; 25001 in a transaction holding locks a batch could wait for.';
