-- Node, source of a move, when it ends: drops the move's replication
-- slots and its publication. The slots are the subscription's own and the
-- table-sync slots its workers made (pg_<subid>_sync_<relid>_<sysid>, for
-- the target's subscription OID and system identifier; subid NULL: none
-- was made); a walsender still holding one is terminated (the target's
-- subscription is gone, or unreachable). Waits up to wait_ms for them.
-- Returns the slots it could not drop ('' when none).
CREATE OR REPLACE FUNCTION shardid_internal._move_unpublish(name name, subid oid, sysid text, wait_ms integer) RETURNS text
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
    SET client_min_messages = warning
AS $$
DECLARE
    deadline timestamptz := clock_timestamp() + make_interval(secs => wait_ms / 1000.0);
    s        record;
    remaining text;
BEGIN
    LOOP
        remaining := NULL;
        FOR s IN SELECT r.slot_name, r.active_pid FROM pg_replication_slots AS r
                  WHERE r.datoid = (SELECT d.oid FROM pg_database AS d WHERE d.datname = current_database())
                    AND (r.slot_name = _move_unpublish.name
                         OR (subid IS NOT NULL AND sysid IS NOT NULL
                             AND r.slot_name::text ~ ('^pg_' || subid || '_sync_[0-9]+_' || sysid || '$')))
                  ORDER BY r.slot_name LOOP
            BEGIN
                IF s.active_pid IS NOT NULL THEN
                    PERFORM pg_terminate_backend(s.active_pid);
                    remaining := concat_ws(', ', remaining, s.slot_name);
                ELSE
                    PERFORM pg_drop_replication_slot(s.slot_name);
                END IF;
            EXCEPTION WHEN object_in_use OR undefined_object THEN
                remaining := concat_ws(', ', remaining, s.slot_name);
            END;
        END LOOP;
        EXIT WHEN remaining IS NULL OR clock_timestamp() > deadline;
        PERFORM pg_sleep(0.05);
    END LOOP;
    EXECUTE format('DROP PUBLICATION IF EXISTS %I', name);
    RETURN COALESCE(remaining, '');
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_unpublish(name, oid, text, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_unpublish(name, oid, text, integer) IS
    'Node, move on the source: drops the move''s slot, its subscription''s table-sync slots and its publication; returns the slots left.';
