-- Router, one step of _move_rollback(): runs sql on node over the dblink
-- connection conn (opened unless it is) and says how it went, without
-- raising, so that a failure on one node stops none of the other steps:
-- {"value": its first value as text}; {"cancelled": true} when the step was
-- cancelled (the rollback stops there); {"left": "<what> on node "<node>"
-- (<error>)", "unreachable": whether the node could not be talked to} for
-- what is left undone (the error on one line), the connection closed.
CREATE OR REPLACE FUNCTION shardid_internal._move_rollback_step(conn text, node text, sql text, what text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    msg text;
    st  text;
BEGIN
    PERFORM shardid_internal._node_connect(conn, node);
    RETURN jsonb_build_object('value', shardid_internal._node(conn, sql, node));
EXCEPTION WHEN query_canceled THEN
    RETURN '{"cancelled": true}';
WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, st = RETURNED_SQLSTATE;
    PERFORM shardid_internal._node_close(conn);
    RETURN jsonb_build_object('left', format('%s on node "%s" (%s)', what, node, shardid_internal._one_line(msg)),
                              'unreachable', shardid_internal._node_unreachable(st));
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_rollback_step(text, text, text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_rollback_step(text, text, text, text) IS
    'Router, one step of a move''s rollback: runs a statement on a node and returns its value, that it was cancelled, or what it left undone (and whether its node could not be reached); never raises.';
