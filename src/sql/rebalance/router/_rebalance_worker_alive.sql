-- Router: whether the background worker of a handle recorded by
-- _rebalance_launch() is still registered with this server's postmaster:
-- running, or waiting to be started again (a job's driver that died). A
-- worker that ended for good is not, nor one of another server's life (a
-- restart, or a promoted standby, whose postmaster never started it).
-- Liveness comes from the postmaster's own record, never from comparing
-- start times (src/pg/rebalance_worker.cpp). NULL when the handle is.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_worker_alive(slot integer, generation bigint, server timestamptz)
    RETURNS boolean
    LANGUAGE c STRICT VOLATILE
    AS 'MODULE_PATHNAME', 'shardid_rebalance_worker_alive';

REVOKE ALL ON FUNCTION shardid_internal._rebalance_worker_alive(integer, bigint, timestamptz) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_worker_alive(integer, bigint, timestamptz) IS
    'Router: whether the background worker of a recorded handle is registered with this server''s postmaster (running, or to be restarted).';
