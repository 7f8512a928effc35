-- apply_ddl(), CONCURRENTLY on several connections at once: the
-- next statement to have ended among those sent on conns (targets[i]: the
-- table conns[i] changes, NULL when idle), its result taken
-- (_apply_ddl_result: its error raised, a retried target that had the
-- change counted) and its target marked done in the ledger; returns its
-- index. NULL, after sleeping 10 ms, when all still run: the caller
-- commits between calls, since each CREATE INDEX CONCURRENTLY waits for
-- this session's transaction to end. Before an error is raised, the
-- statements still running on the other connections are cancelled and
-- those connections closed (their tables stay running in the ledger, and
-- the re-CALL drops what they left and changes them again); a cancel of
-- this session (statement_timeout, Ctrl-C) cancels every one of them,
-- which would otherwise run on and commit unrecorded. node: the node the
-- connections reach from the router, whose ledger is written over the
-- connection that ended (NULL: this one, on a node).
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_collect(change_id bigint, conns text[], targets text[], retries boolean[],
                                                               node text)
    RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    dbl   name := shardid_internal._dblink_schema();
    i     integer;
    j     integer;
    ended integer;
    busy  integer;
BEGIN
    BEGIN
        FOR i IN 1 .. cardinality(conns) LOOP
            CONTINUE WHEN targets[i] IS NULL;
            EXECUTE format('SELECT %I.dblink_is_busy($1)', dbl) INTO busy USING conns[i];
            IF busy = 0 THEN
                ended := i;
                EXIT;
            END IF;
        END LOOP;
        IF ended IS NULL THEN
            PERFORM pg_sleep(0.01);
            RETURN NULL;
        END IF;
    EXCEPTION WHEN query_canceled THEN
        FOR j IN 1 .. cardinality(conns) LOOP
            IF targets[j] IS NOT NULL THEN
                EXECUTE format('SELECT %I.dblink_cancel_query($1)', dbl) USING conns[j];
            END IF;
        END LOOP;
        RAISE;
    END;
    BEGIN
        PERFORM shardid_internal._apply_ddl_result(conns[ended], node, retries[ended], change_id, targets[ended]);
    EXCEPTION WHEN OTHERS OR query_canceled THEN
        FOR j IN 1 .. cardinality(conns) LOOP
            IF j <> ended AND targets[j] IS NOT NULL THEN
                PERFORM shardid_internal._node_close(conns[j]);
            END IF;
        END LOOP;
        RAISE;
    END;
    IF node IS NULL THEN
        PERFORM shardid_internal._apply_ddl_mark_done(change_id, targets[ended]);
    ELSE
        PERFORM shardid_internal._node(conns[ended], format('SELECT shardid_internal._apply_ddl_mark_done(%s, %L)', change_id, targets[ended]), node);
    END IF;
    RETURN ended;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._apply_ddl_collect(bigint, text[], text[], boolean[], text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_ddl_collect(bigint, text[], text[], boolean[], text) IS
    'apply_ddl(), CONCURRENTLY on several dblink connections (to this node, or from the router to node, whose ledger is written over them): takes the result of the next statement to have ended and marks its target done, returning its index; NULL (after 10 ms) when all still run. An error cancels the others first; a cancel of this session cancels them all.';
