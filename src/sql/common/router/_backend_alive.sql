-- Router: whether the backend with process ID pid that started at
-- backend_start still runs (a process ID is reused; its start time is
-- not). A role that may not see another role's start time sees it NULL,
-- and such a backend counts as live.
CREATE OR REPLACE FUNCTION shardid_internal._backend_alive(pid integer, backend_start timestamptz) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT EXISTS (SELECT FROM pg_stat_activity AS a
                    WHERE a.pid = _backend_alive.pid
                      AND (a.backend_start = _backend_alive.backend_start OR a.backend_start IS NULL))
$$;

REVOKE ALL ON FUNCTION shardid_internal._backend_alive(integer, timestamptz) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._backend_alive(integer, timestamptz) IS
    'Router: whether the backend of a process ID that started at a given time still runs.';
