-- run_on_shards() on the router: the caller checked (an administrator, who
-- may read shardid.nodes), dblink, the template's name (schema-qualified:
-- the router has no search_path of the nodes) and the command, then every
-- node in name order over one dblink connection (_node_session, as
-- apply_ddl()'s: search_path pinned): its template, then the shards placed on it, in
-- batches of batch_size, each batch one transaction there
-- (_run_on_shards_batch, committed when it returns), for the caller's
-- role (as_role: a role of that name there must have the privileges of
-- each copy's owner, as on a node). The router writes
-- nothing: this is a function, and its rows are the nodes' rows with the
-- node's name. A node it cannot reach, or whose batch fails as a whole
-- (no such template there, a refusal), gives one row (shard NULL, success
-- false, the error) and the next node goes on; a cancel stops it all.
-- A node with neither the template nor a shard gives no row.
CREATE OR REPLACE FUNCTION shardid_internal._run_on_shards_router(template text, command text, batch_size integer)
    RETURNS TABLE (shard integer, node text, success boolean, result text)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    conn  CONSTANT text := 'shardid_run_on_shards';
    parts text[];
    canon text;
    n     text;
    after integer;
    batch integer[];
    first boolean;
    got   jsonb;
    st    text;
    msg   text;
BEGIN
    parts := shardid_internal._router_template('run_on_shards()', 'run a command', template, command);
    canon := format('%I.%I', parts[1], parts[2]);
    PERFORM shardid_internal._run_on_shards_check(command, parts[1], parts[2]);
    PERFORM shardid_internal._run_on_shards_check(command, 'shard_0000', parts[2]);
    FOR n IN SELECT d.node FROM shardid.nodes AS d ORDER BY d.node LOOP
        after := -1;
        first := true;
        BEGIN
            -- a batch there ends within a second of this session's end
            PERFORM shardid_internal._node_session(conn, n, 'shardid_run_on_shards');
            LOOP
                SELECT array_agg(g.shard ORDER BY g.shard) INTO batch
                  FROM (SELECT p.shard FROM shardid.shard_placement AS p
                         WHERE p.node = n AND p.shard > after ORDER BY p.shard LIMIT batch_size) AS g;
                EXIT WHEN batch IS NULL AND NOT first;
                got := shardid_internal._run_on_shards_send(conn, n, canon, command, batch, first, current_user, true);
                RETURN QUERY SELECT b.shard, n, b.success, b.result
                               FROM jsonb_to_recordset(got) AS b(shard integer, success boolean, result text);
                first := false;
                EXIT WHEN batch IS NULL;
                after := batch[cardinality(batch)];
            END LOOP;
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
            PERFORM shardid_internal._node_close(conn);
            RETURN QUERY SELECT NULL::integer, n, false, format('%s (SQLSTATE %s)', msg, st);
        END;
    END LOOP;
    PERFORM shardid_internal._node_close(conn);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._run_on_shards_router(text, text, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._run_on_shards_router(text, text, integer) IS
    'Internal: run_on_shards() on the router: checks caller, dblink, template name and command, then runs it on every node in name order (its template, then its placed shards, a node transaction per batch); a row per target, one failed row for a node that fails as a whole.';
