-- Router: whether a move in progress is driven by nothing: no live backend
-- holds its lock ('move <shard>' of shardid.session_locks: a move_shard()
-- or rebalance() session, or a background job's worker), and no live
-- background job would resume it (_rebalance_job_alive(): a worker the
-- postmaster restarts counts). Such a move stays in its phase (a shard
-- frozen in frozen or caught_up refuses writes) until someone CALLs
-- move_shard() or abort_move(): check_cluster() reports it (move_stalled).
CREATE OR REPLACE FUNCTION shardid_internal._move_stalled(m shardid.shard_moves) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT NOT EXISTS (SELECT FROM shardid.session_locks AS l
                        WHERE l.lock_name = 'move ' || m.shard
                          AND shardid_internal._backend_alive(l.pid, l.backend_start))
       AND NOT EXISTS (SELECT FROM shardid.rebalance_jobs AS j
                        WHERE j.state IN ('starting', 'running', 'stopping')
                          AND (j.kind = 'rebalance' OR j.drain_node = m.source OR m.phase = 'aborting')
                          AND shardid_internal._rebalance_job_alive(j))
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_stalled(shardid.shard_moves) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_stalled(shardid.shard_moves) IS
    'Router: whether a move in progress has no live session holding its lock and no live background job to resume it (check_cluster()''s move_stalled).';
