-- Router: the one scheduler of every rebalance and drain
-- (_rebalance_job_run()), serial being one slot. One call is one decision,
-- from one read of the job's ledger under the lock on the job's row:
--  1. a move whose worker has ended without a word (a background job's;
--     a job in a session runs its move itself) counts if it is done, is
--     resumed from its phase if it is left in progress (a restart of the
--     router, a terminated worker: not a try; three times at most, not
--     when the job is being cancelled), and is in error otherwise;
--  2. a move in error whose worker is gone is retried after retry_pause
--     while it has had at most move_retries retries (none once the job
--     is stopping), else given up: failed, or cancelled when the job was
--     stopped with cancel_move. A move given up that left its move in
--     progress (shardid.shard_moves), driven by no session, is first
--     rolled back by a worker of its own (action abort; resume, which
--     finishes it, when it was already repointed), at most three tries;
--  3. then what may start, while slots are free (max_parallel; NULL: one
--     per pair of nodes) and its nodes have room (no node the source or
--     target of more than max_moves_per_node moves at once, every move in
--     progress counted, a move's own row not): those rollbacks; unless
--     the job is stopping, the retries that are due, the moves left in
--     progress that no session drives (of a drain: from its node, or
--     being rolled back; an offline one stops the job with the hint, as
--     everywhere), and the steps of a fresh plan (_plan(): this job's
--     moves under way count on their targets, the shards it has touched
--     do not move again), in plan order, every step whose nodes have room
--     (a later step may start before an earlier one that waits for its
--     nodes: a plan's moves are independent, and the next decision plans
--     afresh with them counted where they go).
-- A background job starts each move in a background worker of its own
-- (_rebalance_launch(), its handle recorded); a job in a session gets the
-- one move to run itself (run_shard). Returns whether the job is to end
-- (nothing under way, nothing left to start: balanced, drained,
-- max_moves, or stopping), the move the session runs, and how long the
-- driver may sleep before it must decide again when no worker wakes it
-- (a retry falling due, a worker an earlier driver started).
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_job_step(job_id bigint)
    RETURNS TABLE (done boolean, run_shard integer, wake_in double precision)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    j          shardid.rebalance_jobs;
    o          jsonb;
    r          shardid.rebalance_job_moves;
    m          shardid.shard_moves;
    plan       record;
    slots      integer;
    per_node   integer;
    retries    integer;
    pause      interval;
    prefix     text;
    in_flight  integer;
    pending    integer;
    max_left   integer;
    steps      integer := 0;
    given_up   text;
    left_move  shardid.shard_moves;
    next_retry timestamptz;
    going_shards integer[];
    going_to   text[];
BEGIN
    -- ROW EXCLUSIVE on the table before the row's lock (see rebalance_resume())
    LOCK TABLE shardid.rebalance_jobs IN ROW EXCLUSIVE MODE;
    SELECT * INTO j FROM shardid.rebalance_jobs AS x WHERE x.job_id = _rebalance_job_step.job_id FOR UPDATE;
    o := j.options;
    prefix := CASE WHEN j.kind = 'drain' THEN 'drain_node' ELSE 'rebalance' END;
    slots := CASE WHEN j.in_session THEN 1 ELSE COALESCE((o->>'max_parallel')::integer, 2147483647) END;
    per_node := COALESCE((o->>'max_moves_per_node')::integer, 1);
    retries := CASE WHEN j.in_session THEN 0 ELSE COALESCE((o->>'move_retries')::integer, 0) END;
    pause := COALESCE((o->>'retry_pause')::interval, '10 s');
    done := false;
    wake_in := 1;

    -- 1. workers gone without a word (a background job's; a job in a
    -- session runs its move itself): a move that is done counts; one left
    -- in progress is resumed from its phase (at most three times; not
    -- when its job is being cancelled); else the move is in error. A
    -- worker records its move's end, then exits: one found gone after the
    -- loop's snapshot may have recorded it since, which the row read
    -- again (this statement's new snapshot) shows; that move is not
    -- without a word.
    IF NOT j.in_session THEN
        FOR r IN SELECT * FROM shardid.rebalance_job_moves AS x
                  WHERE x.job_id = j.job_id AND x.state IN ('starting', 'running')
                    AND NOT COALESCE(shardid_internal._rebalance_worker_alive(x.worker_slot, x.worker_generation, x.worker_server), false)
                  ORDER BY x.shard LOOP
            CONTINUE WHEN NOT EXISTS (SELECT FROM shardid.rebalance_job_moves AS x
                                       WHERE x.job_id = r.job_id AND x.shard = r.shard AND x.state IN ('starting', 'running'));
            SELECT * INTO left_move FROM shardid.shard_moves AS x WHERE x.shard = r.shard;
            IF left_move.shard IS NULL AND (r.action = 'abort'
                                            OR EXISTS (SELECT FROM shardid.shard_placement AS p WHERE p.shard = r.shard AND p.node = r.target)) THEN
                PERFORM shardid_internal._rebalance_move_done(j.job_id, r.shard);
            ELSIF left_move.shard IS NOT NULL AND r.resumes < 3 AND NOT (j.state = 'stopping' AND j.cancel_moves) THEN
                UPDATE shardid.rebalance_job_moves AS x
                   SET state = 'retrying', retry_at = pg_catalog.clock_timestamp(), resumes = x.resumes + 1,
                       action = CASE WHEN x.action = 'abort' THEN 'abort' ELSE 'resume' END,
                       updated_at = pg_catalog.clock_timestamp()
                 WHERE x.job_id = r.job_id AND x.shard = r.shard;
                RAISE NOTICE '%: the worker of the move of shard % to node "%" ended without a word (phase %); the move is resumed',
                    prefix, r.shard, r.target, left_move.phase;
            ELSE
                UPDATE shardid.rebalance_job_moves AS x
                   SET state = 'error', last_error = COALESCE(x.last_error || '; ', '') || 'its worker ended without finishing it',
                       updated_at = pg_catalog.clock_timestamp()
                 WHERE x.job_id = r.job_id AND x.shard = r.shard;
            END IF;
        END LOOP;
    END IF;
    IF j.state = 'stopping' THEN
        UPDATE shardid.rebalance_job_moves AS x
           SET state = 'error', last_error = COALESCE(x.last_error || '; ', '') || 'not retried: the job was stopped',
               updated_at = pg_catalog.clock_timestamp()
         WHERE x.job_id = j.job_id AND x.state = 'retrying' AND x.outcome IS NULL AND (j.cancel_moves OR x.resumes = 0);
    END IF;

    -- 2. moves in error, once their worker is gone: retried, or given up
    FOR r IN SELECT * FROM shardid.rebalance_job_moves AS x
              WHERE x.job_id = j.job_id AND x.state = 'error'
                AND NOT COALESCE(shardid_internal._rebalance_worker_alive(x.worker_slot, x.worker_generation, x.worker_server), false)
              ORDER BY x.shard LOOP
        IF r.outcome IS NULL AND j.state <> 'stopping' AND r.tries <= retries THEN
            UPDATE shardid.rebalance_job_moves AS x
               SET state = 'retrying', retry_at = pg_catalog.clock_timestamp() + pause, updated_at = pg_catalog.clock_timestamp()
             WHERE x.job_id = r.job_id AND x.shard = r.shard;
            RAISE NOTICE '%: the move of shard % to node "%" failed (try %): %; retried in %', prefix, r.shard, r.target, r.tries, r.last_error, pause;
            CONTINUE;
        END IF;
        given_up := COALESCE(r.outcome, CASE WHEN j.state = 'stopping' AND j.cancel_moves THEN 'cancelled' ELSE 'failed' END);
        IF r.outcome IS NULL THEN
            UPDATE shardid.rebalance_jobs AS x SET last_error = r.last_error WHERE x.job_id = j.job_id;
        END IF;
        SELECT * INTO left_move FROM shardid.shard_moves AS x
         WHERE x.shard = r.shard
           AND NOT EXISTS (SELECT FROM shardid.session_locks AS l
                            WHERE l.lock_name = 'move ' || x.shard AND shardid_internal._backend_alive(l.pid, l.backend_start));
        IF left_move.shard IS NOT NULL AND left_move.mode <> 'offline'
           AND (r.outcome IS NULL OR r.tries < 3) AND NOT j.in_session THEN
            -- rolled back (finished, if repointed) by a worker before it counts as given up
            UPDATE shardid.rebalance_job_moves AS x
               SET state = 'retrying', retry_at = pg_catalog.clock_timestamp(), outcome = given_up,
                   action = CASE WHEN left_move.phase = 'repointed' THEN 'resume' ELSE 'abort' END,
                   tries = CASE WHEN r.outcome IS NULL THEN 0 ELSE x.tries END,
                   updated_at = pg_catalog.clock_timestamp()
             WHERE x.job_id = r.job_id AND x.shard = r.shard;
            RAISE NOTICE '%: the move of shard % to node "%" %: %; its move in progress (phase %) is %', prefix, r.shard, r.target,
                CASE WHEN given_up = 'cancelled' THEN 'was cancelled' ELSE pg_catalog.format('failed (try %s), given up', r.tries) END,
                r.last_error, left_move.phase, CASE WHEN left_move.phase = 'repointed' THEN 'finished' ELSE 'rolled back' END;
            CONTINUE;
        END IF;
        UPDATE shardid.rebalance_job_moves AS x SET state = given_up, updated_at = pg_catalog.clock_timestamp()
         WHERE x.job_id = r.job_id AND x.shard = r.shard;
        IF given_up = 'failed' THEN
            RAISE NOTICE '%: the move of shard % to node "%" failed (try %), given up: %', prefix, r.shard, r.target, r.tries, r.last_error;
        END IF;
    END LOOP;

    SELECT pg_catalog.count(*) FILTER (WHERE x.state IN ('starting', 'running')),
           pg_catalog.count(*) FILTER (WHERE x.state IN ('starting', 'running', 'retrying', 'error') AND x.action <> 'abort'
                                                  AND x.outcome IS NULL),
           pg_catalog.min(x.retry_at) FILTER (WHERE x.state = 'retrying')
      INTO in_flight, pending, next_retry
      FROM shardid.rebalance_job_moves AS x WHERE x.job_id = j.job_id;
    max_left := (o->>'max_moves')::integer - j.moves_done - pending;

    -- 3a. rollbacks of moves given up, and the retries that are due
    FOR r IN SELECT * FROM shardid.rebalance_job_moves AS x
              WHERE x.job_id = j.job_id AND x.state = 'retrying' AND x.retry_at <= pg_catalog.clock_timestamp()
                AND (j.state <> 'stopping' OR x.outcome IS NOT NULL OR x.resumes > 0)
              ORDER BY x.outcome IS NULL, x.shard LOOP
        EXIT WHEN in_flight >= slots;
        CONTINUE WHEN shardid_internal._rebalance_node_busy(j.job_id, r.source, r.target, r.shard, per_node);
        IF r.outcome IS NULL THEN
            RAISE NOTICE '%: retrying the move of shard % to node "%" (try %)', prefix, r.shard, r.target, r.tries + 1;
        END IF;
        IF NOT shardid_internal._rebalance_move_start(j, r.shard, r.action, r.source, r.target, r.tries + 1, r.outcome) THEN
            slots := in_flight;
            EXIT;
        END IF;
        run_shard := CASE WHEN j.in_session THEN r.shard END;
        in_flight := in_flight + 1;
        EXIT WHEN j.in_session;
    END LOOP;

    IF j.state <> 'stopping' AND run_shard IS NULL THEN
        -- 3b. moves left in progress that no session drives
        FOR m IN SELECT * FROM shardid.shard_moves AS x
                  WHERE (j.kind = 'rebalance' OR x.source = j.drain_node OR x.phase = 'aborting')
                    AND NOT EXISTS (SELECT FROM shardid.rebalance_job_moves AS y
                                     WHERE y.job_id = j.job_id AND y.shard = x.shard
                                       AND y.state IN ('starting', 'running', 'error', 'retrying'))
                    AND NOT EXISTS (SELECT FROM shardid.session_locks AS l
                                     WHERE l.lock_name = 'move ' || x.shard
                                       AND shardid_internal._backend_alive(l.pid, l.backend_start))
                  ORDER BY x.shard LOOP
            PERFORM shardid_internal._rebalance_refuse_offline(m);
            EXIT WHEN in_flight >= slots;
            CONTINUE WHEN m.phase <> 'aborting' AND max_left <= 0;
            CONTINUE WHEN shardid_internal._rebalance_node_busy(j.job_id, m.source, m.target, m.shard, per_node);
            IF m.phase = 'aborting' THEN
                RAISE NOTICE '%: finishing the rollback of the move of shard % to node "%"', prefix, m.shard, m.target;
            ELSE
                RAISE NOTICE '%: resuming the move of shard % to node "%" (phase %)', prefix, m.shard, m.target, m.phase;
                max_left := max_left - 1;
            END IF;
            IF NOT shardid_internal._rebalance_move_start(j, m.shard, CASE WHEN m.phase = 'aborting' THEN 'abort' ELSE 'resume' END,
                                                          m.source, m.target, 1, NULL) THEN
                slots := in_flight;
                EXIT;
            END IF;
            run_shard := CASE WHEN j.in_session THEN m.shard END;
            in_flight := in_flight + 1;
            EXIT WHEN j.in_session;
        END LOOP;
    END IF;

    IF j.state <> 'stopping' AND run_shard IS NULL AND COALESCE(max_left, 1) > 0 THEN
        -- 3c. a fresh plan, its moves under way counted where they go
        SELECT COALESCE(pg_catalog.array_agg(x.shard ORDER BY x.shard), '{}'),
               COALESCE(pg_catalog.array_agg(x.target ORDER BY x.shard), '{}')
          INTO going_shards, going_to
          FROM shardid.rebalance_job_moves AS x
         WHERE x.job_id = j.job_id AND x.state IN ('starting', 'running', 'retrying', 'error') AND x.action <> 'abort';
        FOR plan IN
            SELECT p.* FROM shardid_internal._plan(
                     j.kind, j.drain_node, o->>'strategy', max_left,
                     ARRAY(SELECT pg_catalog.jsonb_array_elements_text(o->'excluded_shards')::integer) || j.moved
                         || ARRAY(SELECT x.shard FROM shardid.rebalance_job_moves AS x WHERE x.job_id = j.job_id),
                     going_shards, going_to) AS p
             ORDER BY p.step
        LOOP
            steps := steps + 1;
            CONTINUE WHEN run_shard IS NOT NULL OR in_flight >= slots
                       OR shardid_internal._rebalance_node_busy(j.job_id, plan.source, plan.target, plan.shard, per_node);
            RAISE NOTICE '%: shard % from node "%" to node "%"%', prefix, plan.shard, plan.source, plan.target,
                CASE WHEN plan.bytes IS NULL THEN '' ELSE pg_catalog.format(' (%s)', pg_catalog.pg_size_pretty(plan.bytes)) END;
            IF NOT shardid_internal._rebalance_move_start(j, plan.shard, 'move', plan.source, plan.target, 1, NULL) THEN
                slots := in_flight;
                CONTINUE;
            END IF;
            run_shard := CASE WHEN j.in_session THEN plan.shard END;
            in_flight := in_flight + 1;
            steps := steps - 1;
        END LOOP;
    END IF;

    SELECT pg_catalog.count(*) FILTER (WHERE x.state IN ('starting', 'running', 'retrying', 'error')),
           pg_catalog.count(*) FILTER (WHERE x.state IN ('starting', 'running', 'retrying', 'error') AND x.action <> 'abort'
                                                  AND x.outcome IS NULL)
      INTO in_flight, pending
      FROM shardid.rebalance_job_moves AS x WHERE x.job_id = j.job_id;
    UPDATE shardid.rebalance_jobs AS x
       SET moves_planned = x.moves_done + pending + steps,
           (current_shard, current_source, current_target) =
               (SELECT y.shard, y.source, y.target FROM shardid.rebalance_job_moves AS y
                 WHERE y.job_id = x.job_id AND y.state IN ('starting', 'running') ORDER BY y.shard LIMIT 1),
           updated_at = pg_catalog.clock_timestamp()
     WHERE x.job_id = j.job_id;
    -- a plan whose steps all wait for moves of others: wait for them too
    done := in_flight = 0 AND run_shard IS NULL AND (j.state = 'stopping' OR steps = 0 OR COALESCE(max_left, 1) <= 0);
    IF next_retry IS NOT NULL THEN
        wake_in := LEAST(1, GREATEST(0.05, EXTRACT(epoch FROM next_retry - pg_catalog.clock_timestamp())));
    END IF;
    RETURN NEXT;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_job_step(bigint) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_job_step(bigint) IS
    'Router: the one rebalance scheduler (serial is one slot): one decision from one read of the job''s ledger: moves whose worker ended are retried or given up (a move left in progress rolled back first), then rollbacks, due retries, moves left in progress and the steps of a fresh plan start where slots and nodes have room; whether the job is to end, the move a session runs itself, and how long the driver may sleep.';
