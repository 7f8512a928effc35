-- apply_ddl(template, command): one DDL statement (%s: each table's
-- qualified name) on a sharded table's template and its copy in every
-- shard (a node), or on every node in name order (the router), as the
-- template's owner; batches that commit and a ledger (ddl_changes,
-- ddl_applied) so that a re-CALL finishes what is missing; CONCURRENTLY
-- one table at a time over dblink. No SET clause (it COMMITs): this holds
-- the loops and their COMMITs, the work and the NOTICEs are functions.
CREATE OR REPLACE PROCEDURE shardid.apply_ddl(template text, command text, batch_size integer DEFAULT 256,
                                             loopback text DEFAULT NULL)
    LANGUAGE plpgsql
AS $$
DECLARE
    s      record;
    change shardid.ddl_changes;
    c      record;
    node   text;
    made   integer;
    done   integer[] := '{0,0}';  -- tables, batches
    conn   text := 'shardid_apply_ddl';
    app    text := pg_catalog.current_setting('application_name');
BEGIN
    IF NOT shardid_internal._commit_allowed() THEN
        RAISE EXCEPTION 'shardid.apply_ddl() cannot run inside a transaction block'
            USING ERRCODE = 'active_sql_transaction',
                  DETAIL = 'It commits after every batch, which a CALL inside BEGIN ... COMMIT, a function, an EXCEPTION block or a multi-statement query string cannot do.',
                  HINT = 'CALL it on its own.';
    END IF;
    PERFORM shardid_internal._check_batch_size(batch_size);

    IF shardid_internal._apply_ddl_on_nodes() THEN
        change := shardid_internal._apply_ddl_router_start(template, command);
        COMMIT;
        RAISE NOTICE 'apply_ddl: change % of %: % on every node', change.change_id, change.template, change.kind;
        LOOP
            node := shardid_internal._apply_ddl_next_node(change.change_id);
            EXIT WHEN node IS NULL;
            PERFORM shardid_internal._apply_ddl_on_node(conn, change, node, batch_size);
            COMMIT;
            RAISE NOTICE 'apply_ddl: node % done', node;
        END LOOP;
        PERFORM shardid_internal._apply_ddl_finish(change.change_id);
        PERFORM pg_catalog.set_config('application_name', app, false);
        COMMIT;
        RAISE NOTICE 'apply_ddl: change % of % finished on every node', change.change_id, change.template;
        RETURN;
    END IF;

    SELECT * INTO s FROM shardid_internal._apply_ddl_start(template, command, true) AS x;
    change := s.change;
    COMMIT;
    PERFORM shardid_internal._apply_ddl_announce(change, s.todo, s.total, batch_size);
    IF change.concurrent THEN
        PERFORM shardid_internal._apply_ddl_connect(conn, NULL, loopback);
        LOOP
            SELECT * INTO c FROM shardid_internal._apply_ddl_claim(change.change_id);
            EXIT WHEN c.target IS NULL;
            COMMIT;
            PERFORM pg_catalog.set_config('application_name',
                                          pg_catalog.format('shardid apply_ddl %s %s/%s', change.template, done[1], s.todo), false);
            PERFORM shardid_internal._apply_ddl_send(conn, NULL, c.owner, c.cleanup, c.statement);
            -- commit while it runs: this session must hold no old snapshot
            WHILE shardid_internal._apply_ddl_busy(conn) LOOP
                COMMIT;
            END LOOP;
            PERFORM shardid_internal._apply_ddl_result(conn, NULL, c.retry);
            PERFORM shardid_internal._apply_ddl_done(change.change_id, c.target);
            COMMIT;
            done := shardid_internal._batch_progress('apply_ddl', 'tables', done, 1, s.todo, batch_size);
        END LOOP;
        PERFORM shardid_internal._node_close(conn);
        PERFORM pg_catalog.set_config('application_name', app, false);
    ELSE
        LOOP
            made := shardid_internal._apply_ddl_next_batch(change, batch_size, done[1], s.todo);
            EXIT WHEN made IS NULL;
            COMMIT;
            done := shardid_internal._batch_progress('apply_ddl', 'tables', done, made, s.todo);
        END LOOP;
    END IF;
    PERFORM shardid_internal._apply_ddl_finish(change.change_id);
    COMMIT;
    PERFORM shardid_internal._apply_ddl_finished(change, done[1], s.todo, s.total);
END
$$;

COMMENT ON PROCEDURE shardid.apply_ddl(text, text, integer, text) IS
    'Runs one DDL statement (%s = each table''s schema-qualified name) on a sharded table''s template and every shard''s copy (a node), or on every node in name order (a router), as the template''s owner; commits per batch, recorded in shardid.ddl_changes / ddl_applied, so a re-CALL of the same command finishes what is missing. CONCURRENTLY runs one table at a time over dblink (loopback: the node''s own connect string). Progress: NOTICEs, application_name. CALL it on its own.';
