-- Router: starts the background worker of a job whose row the caller's
-- transaction has inserted (src/pg/rebalance_worker.cpp); returns its
-- process ID. 53400 naming max_worker_processes when no slot is free.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_launch(job_id bigint) RETURNS integer
    LANGUAGE c STRICT
    AS 'MODULE_PATHNAME', 'shardid_rebalance_launch';

REVOKE ALL ON FUNCTION shardid_internal._rebalance_launch(bigint) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_launch(bigint) IS
    'Router: registers and starts the dynamic background worker of a rebalance job (no shared_preload_libraries needed); its process ID. 53400 naming max_worker_processes when none is free.';
