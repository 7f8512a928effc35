-- Whether a generator will make its failover move at its next ID: its
-- sequence page was last WAL-logged before this server's timeline began (a
-- promotion, a point-in-time restore), compared with the switch point
-- next_id() uses (src/pg/sequence_state.cpp). Reads the page's LSN, not
-- the state. For _generator_states(), which runs as the extension owner;
-- not executable by PUBLIC.
CREATE OR REPLACE FUNCTION shardid_internal._failover_pending(seq pg_catalog.regclass)
    RETURNS boolean
    LANGUAGE c VOLATILE STRICT AS 'MODULE_PATHNAME', 'shardid_failover_pending';

REVOKE ALL ON FUNCTION shardid_internal._failover_pending(pg_catalog.regclass) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._failover_pending(pg_catalog.regclass) IS
    'Internal (for _generator_states()): true when generator seq was last WAL-logged on an earlier timeline (before this server''s promotion or restore), so its next ID moves it past the old timeline''s IDs; NULL in recovery or for a sequence that is not permanent.';
