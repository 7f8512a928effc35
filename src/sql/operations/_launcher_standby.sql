-- The launcher's visit of a database on a hot standby (src/pg/launcher.cpp:
-- with shardid in shared_preload_libraries, every
-- shardid.launcher_naptime, as the bootstrap superuser with search_path
-- pg_catalog, pg_temp): drops the slots of moves that this server made
-- while it was a primary: a logical slot of this database named as a
-- move names its slot (shardid_move_<shard>_<move id>), not in use and
-- not synchronized from the primary (the synced column of 17 and later;
-- on 15 and 16 no slot is). A leader demoted by a switchover keeps them
-- (Patroni 4 leaves a failover slot alone; PostgreSQL's slot
-- synchronization drops only the synced copies it made). A move only ever
-- reads its slot on its source's primary, so such a copy serves nothing:
-- it holds this standby's WAL, and from 17 it keeps the move's failover
-- slot, of the same name, from being synchronized here, so that a
-- failover back to this server would find no slot to go on from. Each
-- slot dropped is logged; a slot that became active or went away
-- meanwhile is left. Returns how many were dropped; on a primary, none.
CREATE OR REPLACE FUNCTION shardid_internal._launcher_standby() RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    slot    name;
    dropped integer := 0;
BEGIN
    IF NOT pg_catalog.pg_is_in_recovery() THEN
        RETURN 0;
    END IF;
    FOR slot IN SELECT s.slot_name FROM pg_catalog.pg_replication_slots AS s
                 WHERE s.slot_type = 'logical' AND s.database = pg_catalog.current_database() AND NOT s.active
                   AND s.slot_name ~ '^shardid_move_[0-9]+_[0-9]+$'
                   AND NOT COALESCE((pg_catalog.to_jsonb(s)->>'synced')::boolean, false)
                 ORDER BY s.slot_name LOOP
        BEGIN
            PERFORM pg_catalog.pg_drop_replication_slot(slot);
            dropped := dropped + 1;
            RAISE LOG 'shardid launcher: dropped replication slot "%" on this standby: a move''s slot made while it was the primary, not synchronized from the primary', slot;
        EXCEPTION WHEN object_in_use OR undefined_object THEN
            NULL;
        END;
    END LOOP;
    RETURN dropped;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._launcher_standby() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._launcher_standby() IS
    'The launcher''s visit of a database on a hot standby: drops the slots of moves made here while this server was the primary (logical, named shardid_move_<shard>_<move id>, not in use, not synchronized from the primary); returns how many.';
