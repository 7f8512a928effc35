-- Router, moves: a cancel request reaches a backend twice (the postmaster
-- signals the backend and its process group), so a procedure that catches
-- the first to roll a move back would see its rollback cancelled by the
-- second. This waits a moment and swallows a cancel that arrives meanwhile.
CREATE OR REPLACE FUNCTION shardid_internal._absorb_cancel() RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM pg_sleep(0.05);
EXCEPTION WHEN query_canceled THEN
    NULL;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._absorb_cancel() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._absorb_cancel() IS
    'Router, moves: swallows the second signal of a cancel request (sent to the backend and to its process group) before a rollback.';
