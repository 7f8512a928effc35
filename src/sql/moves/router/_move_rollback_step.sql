-- Router, one step of _move_rollback(): runs sql on node over the dblink
-- connection conn (opened unless it is) and says how it went, without
-- raising, so that a failure on one node stops none of the other steps:
-- {"value": its first value as text}; {"cancelled": true} when the step was
-- cancelled (the rollback stops there); {"left": "<what> on node "<node>"
-- (<error>)"} for what is left undone (on one line), the connection
-- closed.
CREATE OR REPLACE FUNCTION shardid_internal._move_rollback_step(conn text, node text, sql text, what text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    msg text;
BEGIN
    PERFORM shardid_internal._node_connect(conn, node);
    RETURN jsonb_build_object('value', shardid_internal._node(conn, sql, node));
EXCEPTION WHEN query_canceled THEN
    RETURN '{"cancelled": true}';
WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT;
    PERFORM shardid_internal._node_close(conn);
    RETURN jsonb_build_object('left', format('%s on node "%s" (%s)', what, node, shardid_internal._one_line(msg)));
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_rollback_step(text, text, text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_rollback_step(text, text, text, text) IS
    'Router, one step of a move''s rollback: runs a statement on a node and returns its value, that it was cancelled, or what it left undone; never raises.';
