-- Router, the driver (_rebalance_job_run()): the next thing to do,
-- recorded as the job's current move, with its NOTICE (rebalance: or
-- drain_node:, seen by the caller of rebalance() and drain_node()). First
-- a move left in progress (of a drain: from its node, or being rolled
-- back), whatever ran it: one being rolled back is rolled back to the end
-- (action 'abort', abort_move(), not counted), an offline one stops the
-- job (55000 with the hint: a client copies its rows), any other is
-- resumed ('resume'). Else the first step of a fresh plan
-- (rebalance_plan() without the shards this job has moved, or
-- drain_plan() of the drained node), with moves_planned = moves done +
-- that plan's length. No row when the job is to end: stopped
-- (rebalance_stop()), max_moves reached, or nothing left to move; a job
-- being stopped still finishes its current move when its worker was
-- restarted in it. With it, the job's move options for move_shard().
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_job_next(job_id bigint)
    RETURNS TABLE (action text, shard integer, target text, abort boolean, drop_old boolean, lock_timeout interval,
                   cutover_timeout interval, catchup_timeout interval, node_timeout interval)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    j        shardid.rebalance_jobs;
    o        jsonb;
    max_left integer;
    m        shardid.shard_moves;
    plan     record;
    steps    integer;
    prefix   text;
BEGIN
    SELECT * INTO j FROM shardid.rebalance_jobs AS x WHERE x.job_id = _rebalance_job_next.job_id FOR UPDATE;
    prefix := CASE WHEN j.kind = 'drain' THEN 'drain_node' ELSE 'rebalance' END;
    o := j.options;
    drop_old := (o->>'drop_old')::boolean;
    lock_timeout := (o->>'lock_timeout')::interval;
    cutover_timeout := (o->>'cutover_timeout')::interval;
    catchup_timeout := (o->>'catchup_timeout')::interval;
    node_timeout := (o->>'node_timeout')::interval;
    max_left := (o->>'max_moves')::integer - j.moves_done;
    -- a job being stopped, or at max_moves, still finishes its own move
    -- (its worker died in it and was restarted), and nothing else
    SELECT * INTO m FROM shardid.shard_moves AS x
     WHERE (j.kind = 'rebalance' OR x.source = j.drain_node OR x.phase = 'aborting')
       AND ((j.state <> 'stopping' AND COALESCE(max_left, 1) > 0) OR x.shard = j.current_shard)
     ORDER BY x.shard LIMIT 1;
    IF FOUND THEN
        PERFORM shardid_internal._rebalance_refuse_offline(m);
        IF m.phase = 'aborting' THEN
            RAISE NOTICE '%: finishing the rollback of the move of shard % to node "%"', prefix, m.shard, m.target;
        ELSE
            RAISE NOTICE '%: resuming the move of shard % to node "%" (phase %)', prefix, m.shard, m.target, m.phase;
        END IF;
        action := CASE WHEN m.phase = 'aborting' THEN 'abort' ELSE 'resume' END;
        abort := m.phase = 'aborting';
        shard := m.shard; target := m.target;
        UPDATE shardid.rebalance_jobs AS x
           SET current_shard = m.shard, current_source = m.source, current_target = m.target,
               updated_at = pg_catalog.clock_timestamp()
         WHERE x.job_id = j.job_id;
        RETURN NEXT;
        RETURN;
    END IF;
    IF j.state = 'stopping' OR max_left <= 0 THEN
        RETURN;
    END IF;
    IF j.kind = 'drain' THEN
        SELECT pg_catalog.count(*) OVER () AS n, p.* INTO plan
          FROM shardid.drain_plan(j.drain_node, o->>'strategy') AS p ORDER BY p.step LIMIT 1;
    ELSE
        SELECT pg_catalog.count(*) OVER () AS n, p.* INTO plan
          FROM shardid.rebalance_plan(o->>'strategy', max_left,
                                      ARRAY(SELECT pg_catalog.jsonb_array_elements_text(o->'excluded_shards')::integer) || j.moved) AS p
         ORDER BY p.step LIMIT 1;
    END IF;
    steps := COALESCE(plan.n, 0);
    UPDATE shardid.rebalance_jobs AS x
       SET moves_planned = j.moves_done + steps,
           current_shard = plan.shard, current_source = plan.source, current_target = plan.target,
           updated_at = pg_catalog.clock_timestamp()
     WHERE x.job_id = j.job_id;
    IF steps > 0 THEN
        RAISE NOTICE '%: shard % from node "%" to node "%"%', prefix, plan.shard, plan.source, plan.target,
            CASE WHEN plan.bytes IS NULL THEN '' ELSE pg_catalog.format(' (%s)', pg_catalog.pg_size_pretty(plan.bytes)) END;
        action := 'move'; shard := plan.shard; target := plan.target; abort := false;
        RETURN NEXT;
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_job_next(bigint) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_job_next(bigint) IS
    'Router, the rebalance driver: the next move with its NOTICE (a move left in progress: resumed, rolled back if being rolled back, 55000 if offline; else a new one from a fresh plan), recorded as the job''s current move; no row when the job is to end.';
