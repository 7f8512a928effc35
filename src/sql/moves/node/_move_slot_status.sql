-- Node, source of a move: the move's slot: whether it exists and is in
-- use, how many bytes of WAL the target has yet to confirm, and whether it
-- has confirmed lsn (the cut-over's position; NULL: not asked); and when
-- this server's postmaster started (another time: the source restarted
-- or failed over since, _move_copy).
CREATE OR REPLACE FUNCTION shardid_internal._move_slot_status(slot_name name, lsn pg_lsn DEFAULT NULL) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT jsonb_build_object('exists', s.slot_name IS NOT NULL,
                              'active', COALESCE(s.active, false),
                              'lag', pg_wal_lsn_diff(pg_current_wal_lsn(), s.confirmed_flush_lsn)::bigint,
                              'confirmed', s.confirmed_flush_lsn >= lsn,
                              'started', pg_postmaster_start_time())
      FROM (SELECT 1) AS one
      LEFT JOIN pg_replication_slots AS s ON s.slot_name = _move_slot_status.slot_name
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_slot_status(name, pg_lsn) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_slot_status(name, pg_lsn) IS
    'Node, move on the source: the move''s slot: exists, active, lag in bytes, and whether it confirmed lsn; and when this server started.';
