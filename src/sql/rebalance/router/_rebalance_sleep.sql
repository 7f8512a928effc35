-- Router, a job's driver (_rebalance_job_run()) between two decisions:
-- waits on its latch until a move worker it started ends (the postmaster
-- tells the process that registered a worker), rebalance_stop() wakes it
-- (_rebalance_wake()), or seconds pass (a retry falls due; a move whose
-- worker an earlier driver started). Interruptible.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_sleep(seconds double precision) RETURNS void
    LANGUAGE c STRICT
    AS 'MODULE_PATHNAME', 'shardid_rebalance_sleep';

REVOKE ALL ON FUNCTION shardid_internal._rebalance_sleep(double precision) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_sleep(double precision) IS
    'Router, a job''s driver: waits until a move worker it started ends, it is woken, or the seconds pass.';
