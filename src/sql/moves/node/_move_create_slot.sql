-- Node, source of a move: the logical replication slot (pgoutput) the
-- move's subscription reads, made unless it exists. Made here rather than
-- by CREATE SUBSCRIPTION so the router waits for it asynchronously (a new
-- slot waits for the transactions running on this node) and can cancel.
-- From PostgreSQL 17 it is a failover slot (failover = true): a standby of
-- this node running sync_replication_slots keeps a copy of it, so the move
-- goes on from its promoted standby (docs/high-availability.md). The
-- source's major decides, whatever the target's: the slot carries the
-- property, which a subscription's failover option would only set on it.
CREATE OR REPLACE FUNCTION shardid_internal._move_create_slot(slot_name name) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF EXISTS (SELECT FROM pg_replication_slots AS s WHERE s.slot_name = _move_create_slot.slot_name) THEN
        RETURN false;
    END IF;
    IF current_setting('server_version_num')::integer >= 170000 THEN
        PERFORM pg_create_logical_replication_slot(slot_name, 'pgoutput', failover => true);
    ELSE
        PERFORM pg_create_logical_replication_slot(slot_name, 'pgoutput');
    END IF;
    RETURN true;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_create_slot(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_create_slot(name) IS
    'Node, move on the source: creates the move''s logical replication slot (pgoutput) unless it exists; a failover slot from PostgreSQL 17.';
