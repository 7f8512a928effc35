-- The end of the statement sent on conn (_node_wait: interruptibly, a
-- node's error naming it), as data: NULL when it succeeded, else its
-- error as {sqlstate, message, detail, hint}, for a caller that cleans up
-- after a failed statement before it raises the error (_raise).
CREATE OR REPLACE FUNCTION shardid_internal._node_outcome(conn text, node text DEFAULT NULL) RETURNS text[]
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    st  text;
    msg text;
    det text;
    hnt text;
BEGIN
    PERFORM shardid_internal._node_wait(conn, node);
    RETURN NULL;
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
    RETURN ARRAY[st, msg, det, hnt];
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._node_outcome(text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._node_outcome(text, text) IS
    'Router, moves: waits for the statement sent on a named dblink connection (_node_wait); NULL when it succeeded, else its error as {sqlstate, message, detail, hint}.';
