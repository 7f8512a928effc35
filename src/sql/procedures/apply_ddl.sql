-- apply_ddl(template, command): one DDL statement, %s standing for each
-- table's schema-qualified name, run on a sharded table's template and on
-- its copy in every shard (a node), or on every node in name order (the
-- router), as the template's owner. Batches that commit, and a ledger
-- (shardid.ddl_changes, ddl_applied), so a re-CALL of the same command
-- after any interruption finishes only what is missing. Statements that
-- cannot run in a transaction block (CONCURRENTLY) go one table at a time
-- over a dblink connection: to each node from the router, to the node
-- itself on a node. No SET clause (it COMMITs): the body schema-qualifies
-- every name and leaves the work to functions that pin search_path.
CREATE OR REPLACE PROCEDURE shardid.apply_ddl(template text, command text, batch_size integer DEFAULT 256,
                                             loopback text DEFAULT NULL)
    LANGUAGE plpgsql
AS $$
DECLARE
    s        record;
    change   shardid.ddl_changes;
    c        record;
    node     text;
    node_id  bigint;
    target   text;
    done     integer := 0;
    made     integer;
    batches  integer := 0;
    conn     text := 'shardid_apply_ddl';
    app      text := pg_catalog.current_setting('application_name');
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
            PERFORM pg_catalog.set_config('application_name',
                                          pg_catalog.format('shardid apply_ddl %s node %s', change.template, node), false);
            node_id := shardid_internal._apply_ddl_node(conn, change.change_id, node, batch_size);
            IF node_id IS NOT NULL THEN
                done := 0;
                LOOP
                    target := shardid_internal._apply_ddl_node_step(conn, node, node_id);
                    EXIT WHEN target IS NULL;
                    done := done OPERATOR(pg_catalog.+) 1;
                    IF done OPERATOR(pg_catalog.%) batch_size OPERATOR(pg_catalog.=) 0 THEN
                        RAISE NOTICE 'apply_ddl: node %: % tables done', node, done;
                        PERFORM pg_catalog.set_config('application_name',
                                                      pg_catalog.format('shardid apply_ddl %s node %s %s', change.template, node, done), false);
                    END IF;
                END LOOP;
            END IF;
            PERFORM shardid_internal._apply_ddl_node_done(conn, change.change_id, node);
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
    RAISE NOTICE 'apply_ddl: change % of %: % on % of % tables (template and shards)%',
        change.change_id, change.template, change.kind, s.todo, s.total,
        CASE WHEN change.concurrent THEN ', one at a time outside a transaction block'
             ELSE pg_catalog.format(', in batches of %s', batch_size) END;
    IF change.concurrent THEN
        PERFORM shardid_internal._apply_ddl_connect(conn, NULL, loopback);
        LOOP
            SELECT * INTO c FROM shardid_internal._apply_ddl_claim(change.change_id);
            EXIT WHEN c.target IS NULL;
            COMMIT;
            PERFORM pg_catalog.set_config('application_name',
                                          pg_catalog.format('shardid apply_ddl %s %s/%s', change.template, done, s.todo), false);
            PERFORM shardid_internal._apply_ddl_send(conn, NULL, c.owner, c.cleanup, c.statement);
            -- commit while it runs: this session must hold no old snapshot
            WHILE shardid_internal._apply_ddl_busy(conn) LOOP
                COMMIT;
            END LOOP;
            PERFORM shardid_internal._apply_ddl_result(conn, NULL, c.retry);
            PERFORM shardid_internal._apply_ddl_done(change.change_id, c.target);
            COMMIT;
            done := done OPERATOR(pg_catalog.+) 1;
            IF done OPERATOR(pg_catalog.%) batch_size OPERATOR(pg_catalog.=) 0 THEN
                RAISE NOTICE 'apply_ddl: % of % tables done', done, s.todo;
            END IF;
        END LOOP;
        PERFORM shardid_internal._node_close(conn);
        PERFORM pg_catalog.set_config('application_name', app, false);
    ELSE
        LOOP
            PERFORM pg_catalog.set_config('application_name',
                                          pg_catalog.format('shardid apply_ddl %s %s/%s', change.template, done, s.todo), true);
            made := shardid_internal._apply_ddl_batch(change.change_id, batch_size);
            EXIT WHEN made OPERATOR(pg_catalog.=) 0;
            COMMIT;
            done := done OPERATOR(pg_catalog.+) made;
            batches := batches OPERATOR(pg_catalog.+) 1;
            RAISE NOTICE 'apply_ddl: batch % committed: % of % tables done', batches, done, s.todo;
        END LOOP;
    END IF;
    PERFORM shardid_internal._apply_ddl_finish(change.change_id);
    COMMIT;
    RAISE NOTICE 'apply_ddl: change % of % finished: % tables changed now, % of % had it already',
        change.change_id, change.template, done, s.total OPERATOR(pg_catalog.-) s.todo, s.total;
END
$$;

COMMENT ON PROCEDURE shardid.apply_ddl(text, text, integer, text) IS
    'Runs one DDL statement (%s = each table''s schema-qualified name) on a sharded table''s template and every shard''s copy (a node), or on every node in name order (a router), as the template''s owner; commits per batch, recorded in shardid.ddl_changes / ddl_applied, so a re-CALL of the same command finishes what is missing. CONCURRENTLY runs one table at a time over dblink (loopback: the node''s own connect string). Progress: NOTICEs, application_name. CALL it on its own.';
