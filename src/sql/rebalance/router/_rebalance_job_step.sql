-- Router, the driver (_rebalance_job_run()) of a job whose moves run in
-- sessions of their own (max_parallel > 1 or move_retries > 0): one step
-- of its loop, called every 0.2 s. First the moves that ended: a worker
-- gone without a word failed; a failed move is retried after retry_pause
-- while it has had at most move_retries retries (not once the job is
-- stopping), else given up (failed, with a NOTICE; the job ends failed,
-- listing it). Then, unless the job is stopping, what may start, each
-- move in a background worker of its own (_rebalance_launch_move()): the
-- retries that are due; the moves left in progress that no session
-- drives (of a drain: from its node, or being rolled back: rolled back to
-- the end; an offline one stops the job with the hint, as everywhere);
-- and the first step of a fresh plan whose nodes have room, one per step:
-- no node is the source or target of more than max_moves_per_node moves
-- at once (every move in progress counts), no more than max_parallel
-- moves of the job run at once, and a new plan waits until the move
-- started last has its row in shardid.shard_moves, so that its shard
-- counts on its target (the planners count a shard in a move there).
-- Returns true when the job is to end: nothing in flight and nothing left
-- to start (balanced, drained, max_moves, or stopping).
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_job_step(job_id bigint) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    j            shardid.rebalance_jobs;
    o            jsonb;
    r            shardid.rebalance_job_moves;
    m            shardid.shard_moves;
    plan         record;
    max_parallel integer;
    per_node     integer;
    retries      integer;
    pause        interval;
    in_flight    integer;
    active       integer;
    max_left     integer;
    steps        integer := 0;
    started_new  boolean := false;
    prefix       text;
    job_shards   integer[];
    plans        jsonb;
BEGIN
    SELECT * INTO j FROM shardid.rebalance_jobs AS x WHERE x.job_id = _rebalance_job_step.job_id FOR UPDATE;
    o := j.options;
    max_parallel := COALESCE((o->>'max_parallel')::integer, 1);
    per_node := COALESCE((o->>'max_moves_per_node')::integer, 1);
    retries := COALESCE((o->>'move_retries')::integer, 0);
    pause := COALESCE((o->>'retry_pause')::interval, '10 s');
    prefix := CASE WHEN j.kind = 'drain' THEN 'drain_node' ELSE 'rebalance' END;

    IF j.state = 'stopping' THEN
        UPDATE shardid.rebalance_job_moves AS x
           SET state = 'failed', last_error = COALESCE(x.last_error || '; ', '') || 'not retried: the job was stopped',
               updated_at = pg_catalog.clock_timestamp()
         WHERE x.job_id = j.job_id AND x.state = 'retrying';
    END IF;
    -- a move's worker gone without recording its end (one starting shows
    -- in pg_stat_activity only once connected: given a minute)
    PERFORM pg_catalog.pg_stat_clear_snapshot();
    UPDATE shardid.rebalance_job_moves AS x
       SET state = 'error', last_error = 'its worker ended without finishing it', updated_at = pg_catalog.clock_timestamp()
     WHERE x.job_id = j.job_id
       AND (x.state = 'running' OR (x.state = 'starting' AND x.updated_at < pg_catalog.clock_timestamp() - interval '1 min'))
       AND NOT EXISTS (SELECT FROM pg_stat_activity AS a
                        WHERE a.pid = x.worker_pid AND (x.worker_start IS NULL OR a.backend_start = x.worker_start));
    FOR r IN SELECT * FROM shardid.rebalance_job_moves AS x WHERE x.job_id = j.job_id AND x.state = 'error' ORDER BY x.shard LOOP
        IF j.state <> 'stopping' AND r.tries <= retries THEN
            UPDATE shardid.rebalance_job_moves AS x
               SET state = 'retrying', retry_at = pg_catalog.clock_timestamp() + pause, updated_at = pg_catalog.clock_timestamp()
             WHERE x.job_id = r.job_id AND x.shard = r.shard;
            RAISE NOTICE '%: the move of shard % to node "%" failed (try %): %; retried in %', prefix, r.shard, r.target, r.tries, r.last_error, pause;
        ELSE
            UPDATE shardid.rebalance_job_moves AS x SET state = 'failed', updated_at = pg_catalog.clock_timestamp()
             WHERE x.job_id = r.job_id AND x.shard = r.shard;
            UPDATE shardid.rebalance_jobs AS x SET last_error = r.last_error WHERE x.job_id = j.job_id;
            RAISE NOTICE '%: the move of shard % to node "%" failed (try %), given up: %', prefix, r.shard, r.target, r.tries, r.last_error;
        END IF;
    END LOOP;

    SELECT pg_catalog.count(*) FILTER (WHERE x.state IN ('starting', 'running')),
           pg_catalog.count(*) FILTER (WHERE x.state IN ('starting', 'running', 'retrying'))
      INTO in_flight, active
      FROM shardid.rebalance_job_moves AS x WHERE x.job_id = j.job_id;
    max_left := (o->>'max_moves')::integer - j.moves_done - active;

    IF j.state <> 'stopping' THEN
        -- the retries that are due, where their nodes have room
        FOR r IN SELECT * FROM shardid.rebalance_job_moves AS x
                  WHERE x.job_id = j.job_id AND x.state = 'retrying' AND x.retry_at <= pg_catalog.clock_timestamp()
                  ORDER BY x.shard LOOP
            EXIT WHEN in_flight >= max_parallel;
            CONTINUE WHEN shardid_internal._rebalance_node_busy(j.job_id, r.source) >= per_node
                       OR shardid_internal._rebalance_node_busy(j.job_id, r.target) >= per_node;
            UPDATE shardid.rebalance_job_moves AS x
               SET state = 'starting', tries = x.tries + 1, retry_at = NULL, worker_pid = NULL, worker_start = NULL,
                   updated_at = pg_catalog.clock_timestamp()
             WHERE x.job_id = r.job_id AND x.shard = r.shard;
            UPDATE shardid.rebalance_job_moves AS x SET worker_pid = shardid_internal._rebalance_launch_move(r.job_id, r.shard)
             WHERE x.job_id = r.job_id AND x.shard = r.shard;
            RAISE NOTICE '%: retrying the move of shard % to node "%" (try %)', prefix, r.shard, r.target, r.tries + 1;
            in_flight := in_flight + 1;
        END LOOP;
        -- moves left in progress that no session drives
        FOR m IN SELECT * FROM shardid.shard_moves AS x
                  WHERE (j.kind = 'rebalance' OR x.source = j.drain_node OR x.phase = 'aborting')
                    AND NOT EXISTS (SELECT FROM shardid.rebalance_job_moves AS y
                                     WHERE y.job_id = j.job_id AND y.shard = x.shard AND y.state <> 'done')
                    AND NOT EXISTS (SELECT FROM shardid.session_locks AS l
                                     WHERE l.lock_name = 'move ' || x.shard
                                       AND shardid_internal._backend_alive(l.pid, l.backend_start))
                  ORDER BY x.shard LOOP
            PERFORM shardid_internal._rebalance_refuse_offline(m);
            EXIT WHEN in_flight >= max_parallel;
            CONTINUE WHEN m.phase <> 'aborting' AND max_left <= 0;
            IF m.phase = 'aborting' THEN
                RAISE NOTICE '%: finishing the rollback of the move of shard % to node "%"', prefix, m.shard, m.target;
            ELSE
                RAISE NOTICE '%: resuming the move of shard % to node "%" (phase %)', prefix, m.shard, m.target, m.phase;
                max_left := max_left - 1;
            END IF;
            INSERT INTO shardid.rebalance_job_moves AS x (job_id, shard, action, source, target, state)
            VALUES (j.job_id, m.shard, CASE WHEN m.phase = 'aborting' THEN 'abort' ELSE 'resume' END, m.source, m.target, 'starting')
            ON CONFLICT ON CONSTRAINT rebalance_job_moves_pkey DO UPDATE
               SET action = excluded.action, source = excluded.source, target = excluded.target, state = 'starting',
                   tries = 1, retry_at = NULL, last_error = NULL, started_at = excluded.started_at, updated_at = excluded.updated_at;
            UPDATE shardid.rebalance_job_moves AS x SET worker_pid = shardid_internal._rebalance_launch_move(j.job_id, m.shard)
             WHERE x.job_id = j.job_id AND x.shard = m.shard;
            in_flight := in_flight + 1;
            active := active + 1;
        END LOOP;
        -- the first step of a fresh plan whose nodes have room, once the
        -- move started last counts on its target
        IF in_flight < max_parallel AND COALESCE(max_left, 1) > 0
           AND NOT EXISTS (SELECT FROM shardid.rebalance_job_moves AS x
                            JOIN shardid.shard_placement AS p ON p.shard = x.shard
                           WHERE x.job_id = j.job_id AND x.state IN ('starting', 'running') AND p.node IS DISTINCT FROM x.target
                             AND NOT EXISTS (SELECT FROM shardid.shard_moves AS y WHERE y.shard = x.shard)) THEN
            job_shards := ARRAY(SELECT x.shard FROM shardid.rebalance_job_moves AS x WHERE x.job_id = j.job_id);
            IF j.kind = 'drain' THEN
                plans := (SELECT pg_catalog.jsonb_agg(pg_catalog.to_jsonb(p) ORDER BY p.step)
                            FROM shardid.drain_plan(j.drain_node, o->>'strategy') AS p WHERE p.shard <> ALL (job_shards));
            ELSE
                plans := (SELECT pg_catalog.jsonb_agg(pg_catalog.to_jsonb(p) ORDER BY p.step)
                            FROM shardid.rebalance_plan(o->>'strategy', max_left,
                                                        ARRAY(SELECT pg_catalog.jsonb_array_elements_text(o->'excluded_shards')::integer)
                                                        || j.moved || job_shards) AS p);
            END IF;
            FOR plan IN SELECT * FROM pg_catalog.jsonb_to_recordset(COALESCE(plans, '[]'))
                                      AS p(step integer, shard integer, source text, target text, bytes bigint)
                         ORDER BY p.step
            LOOP
                steps := steps + 1;
                CONTINUE WHEN started_new
                           OR shardid_internal._rebalance_node_busy(j.job_id, plan.source) >= per_node
                           OR shardid_internal._rebalance_node_busy(j.job_id, plan.target) >= per_node;
                RAISE NOTICE '%: shard % from node "%" to node "%"%', prefix, plan.shard, plan.source, plan.target,
                    CASE WHEN plan.bytes IS NULL THEN '' ELSE pg_catalog.format(' (%s)', pg_catalog.pg_size_pretty(plan.bytes)) END;
                INSERT INTO shardid.rebalance_job_moves AS x (job_id, shard, action, source, target, state)
                VALUES (j.job_id, plan.shard, 'move', plan.source, plan.target, 'starting')
                ON CONFLICT ON CONSTRAINT rebalance_job_moves_pkey DO UPDATE
                   SET action = 'move', source = excluded.source, target = excluded.target, state = 'starting',
                       tries = 1, retry_at = NULL, last_error = NULL, started_at = excluded.started_at, updated_at = excluded.updated_at;
                UPDATE shardid.rebalance_job_moves AS x SET worker_pid = shardid_internal._rebalance_launch_move(j.job_id, plan.shard)
                 WHERE x.job_id = j.job_id AND x.shard = plan.shard;
                started_new := true;
                in_flight := in_flight + 1;
                active := active + 1;
            END LOOP;
        ELSIF in_flight > 0 AND COALESCE(max_left, 1) > 0 THEN
            steps := 1;   -- a plan may follow once the moves in flight have room
        END IF;
    END IF;

    UPDATE shardid.rebalance_jobs AS x
       SET moves_planned = x.moves_done + active + steps - CASE WHEN started_new THEN 1 ELSE 0 END,
           (current_shard, current_source, current_target) =
               (SELECT y.shard, y.source, y.target FROM shardid.rebalance_job_moves AS y
                 WHERE y.job_id = x.job_id AND y.state IN ('starting', 'running') ORDER BY y.shard LIMIT 1),
           updated_at = pg_catalog.clock_timestamp()
     WHERE x.job_id = j.job_id;
    RETURN active = 0 AND (j.state = 'stopping' OR steps = 0 OR COALESCE(max_left, 1) <= 0);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_job_step(bigint) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_job_step(bigint) IS
    'Router, the rebalance driver with moves in sessions of their own: one step: retries or gives up failed moves, starts due retries, moves left in progress and the next planned move whose nodes have room (max_parallel, max_moves_per_node), each in its own background worker; true when the job is to end.';
