-- Router, in a move's worker (_rebalance_move_run(): a background worker,
-- or the session of rebalance() and drain_node()), first: records the
-- worker (process, start) in the move's row and turns it to running;
-- returns what to do (abort: roll back the shard's move in progress first,
-- for action 'abort' whatever its phase but repointed, else only one being
-- rolled back; then, but for action 'abort', the move to target) with the
-- job's move options, read back whole (_move_options: the record
-- shardid.move_options; the job's other options ignored). No row when the
-- move is not to run (its row is not starting).
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_move_begin(job_id bigint, shard integer)
    RETURNS TABLE (action text, target text, abort boolean, options shardid.move_options)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r shardid.rebalance_job_moves;
    o jsonb;
BEGIN
    SELECT * INTO r FROM shardid.rebalance_job_moves AS x
     WHERE x.job_id = _rebalance_move_begin.job_id AND x.shard = _rebalance_move_begin.shard FOR UPDATE;
    IF NOT FOUND OR r.state <> 'starting' THEN
        RETURN;
    END IF;
    UPDATE shardid.rebalance_job_moves AS x
       SET state = 'running', worker_pid = pg_catalog.pg_backend_pid(),
           worker_start = (SELECT a.backend_start FROM pg_stat_activity AS a WHERE a.pid = pg_catalog.pg_backend_pid()),
           updated_at = pg_catalog.clock_timestamp()
     WHERE x.job_id = r.job_id AND x.shard = r.shard;
    SELECT j.options INTO o FROM shardid.rebalance_jobs AS j WHERE j.job_id = r.job_id;
    action := r.action;
    target := r.target;
    abort := EXISTS (SELECT FROM shardid.shard_moves AS m
                      WHERE m.shard = r.shard
                        AND CASE WHEN r.action = 'abort' THEN m.phase <> 'repointed' ELSE m.phase = 'aborting' END);
    options := shardid_internal._move_options(o);
    RETURN NEXT;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_move_begin(bigint, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_move_begin(bigint, integer) IS
    'Router, a rebalance move''s worker: records the worker and turns the move running; what to do (roll back first, then move) with the job''s move options; none when the move is not to run.';
