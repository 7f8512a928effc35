-- apply_ddl() on a node, a statement that cannot run in a transaction
-- block (CONCURRENTLY): one table at a time over a dblink connection to
-- this node (loopback: its connect string), each claimed and recorded in
-- the ledger, committing while the statement runs so that this session
-- holds no old snapshot; done counts the tables ({tables, batches}, for
-- the closing NOTICE). A procedure of its own because it commits;
-- executable by PUBLIC as apply_ddl() is (the claim checks the caller).
-- No SET clause: it holds the loop and its COMMITs.
CREATE OR REPLACE PROCEDURE shardid_internal._apply_ddl_concurrently(change shardid.ddl_changes, todo integer, batch_size integer,
                                                                    loopback text, INOUT done integer[])
    LANGUAGE plpgsql
AS $$
DECLARE
    c    record;
    conn text := 'shardid_apply_ddl';
    app  text := pg_catalog.current_setting('application_name');
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid_internal._apply_ddl_concurrently()',
                                             'after every table',
                                             'It is called by shardid.apply_ddl(): CALL that on its own.');
    PERFORM shardid_internal._apply_ddl_connect(conn, NULL, loopback);
    LOOP
        SELECT * INTO c FROM shardid_internal._apply_ddl_claim(change.change_id);
        EXIT WHEN c.target IS NULL;
        COMMIT;
        PERFORM pg_catalog.set_config('application_name',
                                      pg_catalog.format('shardid apply_ddl %s %s/%s', change.template, done[1], todo), false);
        PERFORM shardid_internal._apply_ddl_send(conn, NULL, c.cleanup, c.statement);
        -- commit while it runs: this session must hold no old snapshot
        WHILE shardid_internal._apply_ddl_busy(conn) LOOP
            COMMIT;
        END LOOP;
        PERFORM shardid_internal._apply_ddl_result(conn, NULL, c.retry, change.change_id, c.target);
        PERFORM shardid_internal._apply_ddl_done(change.change_id, c.target);
        COMMIT;
        done := shardid_internal._batch_progress('apply_ddl', 'tables', done, 1, todo, batch_size);
    END LOOP;
    PERFORM shardid_internal._node_close(conn);
    PERFORM pg_catalog.set_config('application_name', app, false);
END
$$;

COMMENT ON PROCEDURE shardid_internal._apply_ddl_concurrently(shardid.ddl_changes, integer, integer, text, integer[]) IS
    'apply_ddl() on a node, CONCURRENTLY: one table at a time over dblink to this node, each claimed and recorded in the ledger, committing while it runs. Executable by PUBLIC (apply_ddl() calls it; the claim checks the caller).';
