-- Router: the last background rebalance or drain (or job's): its state
-- (running, stopping; finished, stopped, failed; interrupted when its
-- worker is gone without ending it: a restart of the server, a terminated
-- worker), moves done and planned (done + the current plan's length), the
-- current move with its phase and progress from shardid.shard_moves, the
-- last error, who started it and when, when it ended; every move in flight
-- (moves_in_flight: the move's row of shardid.move_progress, so a column
-- added there shows here too, with the job's shard, source, target,
-- action, state, tries, worker and error over it; several with
-- max_parallel) and the shards whose moves failed after their retries
-- (moves_failed). current_* is the lowest shard in flight.
CREATE OR REPLACE FUNCTION shardid.rebalance_status(job bigint DEFAULT NULL)
    RETURNS TABLE (job_id bigint, kind text, drain_node text, state text, moves_done integer, moves_planned integer,
                   current_shard integer, current_source text, current_target text, current_phase text,
                   current_bytes_copied bigint, current_bytes_total bigint, current_lag_bytes bigint,
                   last_error text, worker_pid integer, started_by name, started_at timestamptz,
                   updated_at timestamptz, finished_at timestamptz, options jsonb,
                   moves_in_flight jsonb, moves_failed integer[])
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT j.job_id, j.kind, j.drain_node,
           CASE WHEN j.state IN ('starting', 'running', 'stopping') AND NOT shardid_internal._rebalance_job_alive(j)
                THEN 'interrupted' ELSE j.state END,
           j.moves_done, j.moves_planned, j.current_shard, j.current_source, j.current_target,
           m.phase, m.bytes_copied, m.bytes_total, m.lag_bytes,
           COALESCE(j.last_error, m.last_error), j.worker_pid, j.started_by, j.started_at, j.updated_at, j.finished_at, j.options,
           COALESCE((SELECT pg_catalog.jsonb_agg(COALESCE(pg_catalog.to_jsonb(y), '{}') OPERATOR(pg_catalog.||) pg_catalog.jsonb_build_object(
                                'shard', x.shard, 'source', x.source, 'target', x.target, 'action', x.action, 'state', x.state,
                                'tries', x.tries, 'worker_pid', x.worker_pid, 'last_error', x.last_error) ORDER BY x.shard)
                       FROM shardid.rebalance_job_moves AS x
                       LEFT JOIN shardid.move_progress AS y ON y.shard = x.shard
                      WHERE x.job_id = j.job_id AND x.state IN ('starting', 'running', 'error', 'retrying')),
                    CASE WHEN j.current_shard IS NOT NULL AND NOT EXISTS (SELECT FROM shardid.rebalance_job_moves AS x WHERE x.job_id = j.job_id)
                         THEN pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object(
                                'shard', j.current_shard, 'source', j.current_source, 'target', j.current_target, 'state', 'running',
                                'tries', 1, 'phase', m.phase, 'bytes_copied', m.bytes_copied, 'bytes_total', m.bytes_total,
                                'lag_bytes', m.lag_bytes, 'worker_pid', j.worker_pid)) END,
                    '[]'),
           ARRAY(SELECT x.shard FROM shardid.rebalance_job_moves AS x WHERE x.job_id = j.job_id AND x.state = 'failed' ORDER BY x.shard)
      FROM shardid.rebalance_jobs AS j
      LEFT JOIN shardid.shard_moves AS m ON m.shard = j.current_shard AND m.target = j.current_target
     WHERE j.job_id = COALESCE(rebalance_status.job, (SELECT max(x.job_id) FROM shardid.rebalance_jobs AS x))
$$;

REVOKE ALL ON FUNCTION shardid.rebalance_status(bigint) FROM PUBLIC;

COMMENT ON FUNCTION shardid.rebalance_status(bigint) IS
    'Router: the state of the last (or the given) background rebalance or drain: running, stopping, finished, stopped, failed or interrupted; moves done and planned; the current move, its phase and progress; the last error; the worker; times; every move in flight (moves_in_flight) and the shards whose moves failed (moves_failed).';
