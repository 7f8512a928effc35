-- Node, target of a move, when it ends: drops the move's subscription
-- without touching the source: disabled, detached from its slot, pointed
-- at a connection that fails at once (DROP SUBSCRIPTION would otherwise
-- connect to drop the table-sync slots, and wait for a source that is
-- down), dropped; all in one transaction. The router drops the slots on
-- the source. Then the role a move makes on 15, with its privileges. Returns the subscription's OID and this node's system
-- identifier (for the table-sync slots on the source), NULL if there was
-- none.
CREATE OR REPLACE FUNCTION shardid_internal._move_unsubscribe(name name) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
    SET client_min_messages = warning
AS $$
DECLARE
    had jsonb;
BEGIN
    SELECT jsonb_build_object('subid', s.oid, 'sysid', (pg_control_system()).system_identifier::text) INTO had
      FROM pg_subscription AS s WHERE s.subname = _move_unsubscribe.name;
    IF had IS NOT NULL THEN
        EXECUTE format('ALTER SUBSCRIPTION %I DISABLE', name);
        EXECUTE format('ALTER SUBSCRIPTION %I SET (slot_name = NONE)', name);
        EXECUTE format('ALTER SUBSCRIPTION %I CONNECTION %L', name, 'service=shardid_move_dropped');
        EXECUTE format('DROP SUBSCRIPTION %I', name);
    END IF;
    IF EXISTS (SELECT FROM pg_roles AS r WHERE r.rolname = _move_unsubscribe.name) THEN
        EXECUTE format('DROP OWNED BY %I', name);
        EXECUTE format('DROP ROLE %I', name);
    END IF;
    RETURN had;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_unsubscribe(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_unsubscribe(name) IS
    'Node, move on the target: disables, detaches and drops the move''s subscription, and drops the role a move makes on 15; returns the subscription''s OID and the node''s system identifier.';
