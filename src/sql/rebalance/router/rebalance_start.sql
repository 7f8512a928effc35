-- Router: CALL rebalance() in the background: returns the job's ID at
-- once, while a dynamic background worker (no shared_preload_libraries
-- needed) makes the moves as the calling role, committing after each. The
-- job outlives the caller's session; rebalance_status() follows it,
-- rebalance_wait() waits for it, rebalance_stop() stops it. After a restart
-- of the server the job is reported interrupted, and rebalance_start()
-- resumes the work (a move left in progress first); rebalance_resume(),
-- or the launcher with shardid preloaded, resumes the job itself. Each
-- move runs in a background worker of its own; moves whose nodes are
-- disjoint run at the same time: by default as many as there are pairs
-- of free nodes (each node in at most max_moves_per_node moves at once),
-- at most max_parallel when given (1: one move at a time). With
-- move_retries > 0 a failed move is retried (after retry_pause) up to
-- that many times, and then the job goes on with the others and ends
-- failed, listing it.
CREATE OR REPLACE FUNCTION shardid.rebalance_start(strategy text DEFAULT 'by_size', max_moves integer DEFAULT NULL,
    excluded_shards integer[] DEFAULT '{}',
    drop_old boolean DEFAULT NULL, lock_timeout interval DEFAULT NULL, cutover_timeout interval DEFAULT NULL,
    catchup_timeout interval DEFAULT NULL, node_timeout interval DEFAULT NULL,
    max_parallel integer DEFAULT NULL, max_moves_per_node integer DEFAULT 1,
    move_retries integer DEFAULT 0, retry_pause interval DEFAULT '10 s') RETURNS bigint
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT shardid_internal._rebalance_job_create('rebalance', NULL, shardid_internal._rebalance_options('rebalance', NULL,
               strategy, max_moves, excluded_shards, drop_old, lock_timeout, cutover_timeout, catchup_timeout, node_timeout,
               max_parallel, max_moves_per_node, move_retries, retry_pause))
$$;

REVOKE ALL ON FUNCTION shardid.rebalance_start(text, integer, integer[], boolean, interval, interval, interval, interval, integer, integer, integer, interval) FROM PUBLIC;

COMMENT ON FUNCTION shardid.rebalance_start(text, integer, integer[], boolean, interval, interval, interval, interval, integer, integer, integer, interval) IS
    'Router: starts rebalance() in a background job and returns the job''s ID at once; options as rebalance(); each move in a worker of its own, moves on disjoint nodes at once (max_moves_per_node each; at most max_parallel, default no bound, 1 for one at a time), a failed move retried move_retries times after retry_pause. Follow it with rebalance_status(), rebalance_wait(), rebalance_stop().';
