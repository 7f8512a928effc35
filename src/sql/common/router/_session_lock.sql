-- Router: takes the lock lock_name of shardid.session_locks for this
-- session, unless a live backend other than this one holds it; returns
-- NULL when taken (or held already), else the holder's process ID. The
-- caller commits at once, so that others see it (the insert of a new
-- lock name waits only for such a commit). A holder is live while
-- pg_stat_activity shows its process ID with its start time.
CREATE OR REPLACE FUNCTION shardid_internal._session_lock(lock_name text) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    me_start timestamptz;
    got      boolean;
    holder   integer;
BEGIN
    PERFORM pg_stat_clear_snapshot();
    SELECT a.backend_start INTO me_start FROM pg_stat_activity AS a WHERE a.pid = pg_backend_pid();
    INSERT INTO shardid.session_locks AS l (lock_name, pid, backend_start)
        VALUES (_session_lock.lock_name, pg_backend_pid(), me_start)
        ON CONFLICT ON CONSTRAINT session_locks_pkey DO UPDATE
           SET pid = excluded.pid, backend_start = excluded.backend_start, taken_at = excluded.taken_at
         WHERE (l.pid = excluded.pid AND l.backend_start = excluded.backend_start)
            OR NOT shardid_internal._backend_alive(l.pid, l.backend_start)
        RETURNING true INTO got;
    IF got THEN
        RETURN NULL;
    END IF;
    SELECT l.pid INTO holder FROM shardid.session_locks AS l WHERE l.lock_name = _session_lock.lock_name;
    RETURN holder;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._session_lock(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._session_lock(text) IS
    'Router: takes a lock of shardid.session_locks for this session unless a live backend holds it; NULL when taken, else the holder''s process ID.';
