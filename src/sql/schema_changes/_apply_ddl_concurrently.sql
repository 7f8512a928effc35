-- apply_ddl(), a statement that cannot run in a transaction block
-- (CONCURRENTLY): up to o.connections tables of a node at once, each on a
-- dblink connection of its own (_apply_ddl_connect): on a node to the node
-- itself (node NULL; o.loopback: its connect string), from the router to
-- that node (node; change: the node's change, the ledger there). Each
-- table is claimed in the node's ledger before its statement is sent
-- (_apply_ddl_claim_next) and marked done once it ended
-- (_apply_ddl_collect); on a node this commits while the statements run so
-- that this session holds no old snapshot (they wait for their snapshots
-- together); the router holds none there, and calls this from the
-- function that catches a node's error (no COMMIT: it needs none). Until one table has the change, one table
-- at a time: a change whose first table fails is not kept
-- (_apply_ddl_failed), and no other build may have started meanwhile.
-- done counts the tables ({tables, batches}, for the closing NOTICE); todo
-- and total are the node's (NULL from the router: one at a time until a
-- table has the change). A procedure of its own because it commits; executable by PUBLIC as
-- apply_ddl() is (the claim checks the caller). No SET clause: it holds
-- the loop and its COMMITs.
CREATE OR REPLACE PROCEDURE shardid_internal._apply_ddl_concurrently(change shardid.ddl_changes, todo integer, total integer,
                                                                    o shardid.ddl_options, node text, INOUT done integer[])
    LANGUAGE plpgsql
AS $$
DECLARE
    c       record;
    conns   text[] := '{}';
    targets text[] := '{}';   -- the table each connection changes, NULL when idle
    retries boolean[] := '{}';
    i       integer;
    wide    boolean := todo OPERATOR(pg_catalog.<) total;  -- some table has the change
    more    boolean := true;
    app     text := pg_catalog.current_setting('application_name');
BEGIN
    PERFORM shardid_internal._require_commit(node IS NOT NULL OR shardid_internal._commit_allowed(), 'shardid_internal._apply_ddl_concurrently()',
                                             'after every table',
                                             'It is called by shardid.apply_ddl(): CALL that on its own.');
    LOOP
        -- an idle connection (opened when first needed) gets the next table
        FOR i IN 1 .. CASE WHEN wide THEN o.connections ELSE 1 END LOOP
            EXIT WHEN NOT more;
            CONTINUE WHEN targets[i] IS NOT NULL;
            IF conns[i] IS NULL THEN
                conns[i] := pg_catalog.format('shardid_apply_ddl_%s', i);
                PERFORM shardid_internal._apply_ddl_connect(conns[i], node, o.loopback);
            END IF;
            SELECT * INTO c FROM shardid_internal._apply_ddl_claim_next(conns[i], node, change.change_id, targets);
            IF c.target IS NULL THEN
                more := false;
                EXIT;
            END IF;
            IF node IS NULL THEN
                COMMIT;
            END IF;
            PERFORM shardid_internal._apply_ddl_send(conns[i], node, c.cleanup, c.statement);
            targets[i] := c.target;
            retries[i] := c.retry;
        END LOOP;
        EXIT WHEN pg_catalog.cardinality(pg_catalog.array_remove(targets, NULL)) OPERATOR(pg_catalog.=) 0;
        PERFORM pg_catalog.set_config('application_name',
                                      pg_catalog.format('shardid apply_ddl %s %s/%s', change.template, done[1], todo), false);
        -- commit while they run: this session must hold no old snapshot
        i := shardid_internal._apply_ddl_collect(change.change_id, conns, targets, retries, node);
        IF node IS NULL THEN
            COMMIT;
        END IF;
        IF i IS NOT NULL THEN
            targets[i] := NULL;
            wide := true;
            done := shardid_internal._batch_progress('apply_ddl', 'tables', done, 1, todo, o.batch_size);
        END IF;
    END LOOP;
    FOR i IN 1 .. pg_catalog.cardinality(conns) LOOP
        PERFORM shardid_internal._node_close(conns[i]);
    END LOOP;
    PERFORM pg_catalog.set_config('application_name', app, false);
END
$$;

COMMENT ON PROCEDURE shardid_internal._apply_ddl_concurrently(shardid.ddl_changes, integer, integer, shardid.ddl_options, text, integer[]) IS
    'apply_ddl(), CONCURRENTLY: up to connections tables of a node at once, each over a dblink connection of its own (to this node, or from the router to node), claimed and recorded in the node''s ledger, committing while they run on a node (one at a time until a table has the change). Executable by PUBLIC (apply_ddl() calls it; the claim checks the caller).';
