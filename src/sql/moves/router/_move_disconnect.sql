-- Router, moves: closes the move's node connections, cancelling what they
-- run (which also ends the source's freeze lease). Never fails.
CREATE OR REPLACE FUNCTION shardid_internal._move_disconnect() RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM shardid_internal._node_close('shardid_move_source');
    PERFORM shardid_internal._node_close('shardid_move_target');
    PERFORM shardid_internal._node_close('shardid_move_check');
EXCEPTION WHEN OTHERS THEN
    NULL;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_disconnect() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_disconnect() IS
    'Router, moves: cancels and closes the move''s dblink connections.';
