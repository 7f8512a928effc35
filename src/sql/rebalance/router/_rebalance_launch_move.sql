-- Router: starts the background worker of one move of a job, whose row of
-- shardid.rebalance_job_moves the caller's transaction has written
-- (src/pg/rebalance_worker.cpp; never restarted: the driver sees it gone
-- and retries the move); returns its process ID. 53400 naming
-- max_worker_processes when no slot is free.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_launch_move(job_id bigint, shard integer) RETURNS integer
    LANGUAGE c STRICT
    AS 'MODULE_PATHNAME', 'shardid_rebalance_launch_move';

REVOKE ALL ON FUNCTION shardid_internal._rebalance_launch_move(bigint, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_launch_move(bigint, integer) IS
    'Router: registers and starts the dynamic background worker of one move of a rebalance job; its process ID. 53400 naming max_worker_processes when none is free.';
