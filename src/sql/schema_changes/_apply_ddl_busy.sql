-- apply_ddl() on a node, outside a transaction block: whether the
-- statement sent on conn still runs (then after sleeping 10 ms). The
-- procedure commits between calls: a CREATE INDEX CONCURRENTLY on the
-- loopback connection waits for every transaction of this database older
-- than its snapshot, this session's too. A cancel of this session (a
-- statement_timeout, Ctrl-C) cancels the statement at the other end too,
-- which would otherwise run on and commit unrecorded.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_busy(conn text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    busy integer;
BEGIN
    EXECUTE format('SELECT %I.dblink_is_busy($1)', shardid_internal._dblink_schema()) INTO busy USING conn;
    IF busy = 1 THEN
        PERFORM pg_sleep(0.01);
    END IF;
    RETURN busy = 1;
EXCEPTION WHEN query_canceled THEN
    EXECUTE format('SELECT %I.dblink_cancel_query($1)', shardid_internal._dblink_schema()) USING conn;
    RAISE;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._apply_ddl_busy(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_ddl_busy(text) IS
    'apply_ddl() on a node, outside a transaction block: whether the statement sent on a dblink connection still runs (sleeps 10 ms if so); a cancel of this session cancels it there too.';
