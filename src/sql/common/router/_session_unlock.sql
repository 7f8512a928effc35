-- Router: releases the lock lock_name of shardid.session_locks if this
-- session holds it (the caller commits). Returns whether it held it.
CREATE OR REPLACE FUNCTION shardid_internal._session_unlock(lock_name text) RETURNS boolean
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    WITH d AS (DELETE FROM shardid.session_locks AS l
                WHERE l.lock_name = _session_unlock.lock_name AND l.pid = pg_backend_pid() RETURNING 1)
    SELECT EXISTS (SELECT FROM d)
$$;

REVOKE ALL ON FUNCTION shardid_internal._session_unlock(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._session_unlock(text) IS
    'Router: releases a lock of shardid.session_locks held by this session; whether it held it.';
