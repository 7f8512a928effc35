-- Router, moves: warns (a NOTICE, never an error) when an online move's
-- target would make the copy wait for its logical replication launcher.
-- Up to PostgreSQL 15 the launcher keeps one last start time for all
-- subscriptions (ApplyLauncherMain in launcher.c): after it has started an
-- apply worker, it starts no other, for any subscription, until
-- wal_retrieve_retry_interval (default 5 s) has passed, and a wake-up
-- meanwhile sleeps a whole interval again. So the next move to that node
-- waits up to that long before its copy starts. From 16 the launcher keeps
-- a start time per subscription, and a move's subscription is always a new
-- one: no wait. Warns when server_version_num < 160000 and the interval is
-- over 1 s (retry_ms: pg_settings.setting, in ms).
CREATE OR REPLACE FUNCTION shardid_internal._move_check_launcher(node text, server_version_num integer, retry_ms integer)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF server_version_num < 160000 AND retry_ms > 1000 THEN
        RAISE NOTICE 'node "%" has wal_retrieve_retry_interval = %ms: on PostgreSQL % its logical replication launcher starts at most one subscription''s worker per interval, so this move''s copy may wait up to that long to start',
                node, retry_ms, server_version_num / 10000
            USING HINT = format('On node "%s": ALTER SYSTEM SET wal_retrieve_retry_interval = ''200ms''; SELECT pg_reload_conf(); (no restart)', node);
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_check_launcher(text, integer, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_check_launcher(text, integer, integer) IS
    'Router, moves: a NOTICE when an online move''s target is PostgreSQL 15 or older with wal_retrieve_retry_interval over 1 s, whose launcher would delay the move''s subscription by up to that interval.';
