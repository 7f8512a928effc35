-- Router: wakes a job's driver (sets the latch of the backend with that
-- process ID), so that it decides at once: rebalance_stop(), and a move
-- worker that ends (src/pg/rebalance_worker.cpp). False when no backend
-- has that process ID.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_wake(pid integer) RETURNS boolean
    LANGUAGE c STRICT
    AS 'MODULE_PATHNAME', 'shardid_rebalance_wake';

REVOKE ALL ON FUNCTION shardid_internal._rebalance_wake(integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_wake(integer) IS
    'Router: wakes a rebalance job''s driver (sets its latch); false when no backend has that process ID.';
