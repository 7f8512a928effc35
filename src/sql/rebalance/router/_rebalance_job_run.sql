-- Router: the one rebalance driver, for every rebalance and drain. CALLed
-- in the caller's session by rebalance() and drain_node() (a job
-- in_session), and by the background worker of rebalance_start() and
-- drain_node_start() (src/pg/rebalance_worker.cpp, at top level: a
-- portal, non-atomic). One move at a time with move_shard() and a commit
-- after each, the job's row in shardid.rebalance_jobs as its state:
-- _rebalance_job_begin() takes the one rebalance lock,
-- _rebalance_job_next() says what to do (a move left in progress first:
-- rolled back to the end, resumed, or, offline, the job stops with the
-- hint), _rebalance_job_moved() counts it, _rebalance_job_end() ends it;
-- rebalance_stop() is seen between moves. With max_parallel > 1 or
-- move_retries > 0 each move runs in a background worker of its own
-- instead, and _rebalance_job_step() (every 0.2 s) reaps, retries and
-- starts them, several at once on disjoint nodes. An error ends the CALL: in a
-- session it reaches the caller (the job is then reported interrupted, and
-- the session keeps the lock until it ends or its next rebalance ends); a
-- worker records it (_rebalance_job_failed()). A job that has ended or
-- was interrupted is not run (a restarted worker of it exits).
-- No SET search_path (PostgreSQL refuses COMMIT in a procedure that has
-- one): this holds the loop and its COMMITs; the functions it calls pin it.
CREATE OR REPLACE PROCEDURE shardid_internal._rebalance_job_run(job_id bigint)
    LANGUAGE plpgsql
AS $$
DECLARE
    step record;
    err  text[];
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid_internal._rebalance_job_run()',
                                             'after every move',
                                             'Start a background rebalance with shardid.rebalance_start().');
    IF NOT shardid_internal._rebalance_job_begin(job_id) THEN
        COMMIT;
        RETURN;
    END IF;
    COMMIT;
    IF shardid_internal._rebalance_job_parallel(job_id) THEN
        LOOP
            EXIT WHEN shardid_internal._rebalance_job_step(job_id);
            COMMIT;
            PERFORM pg_catalog.pg_sleep(0.2);
        END LOOP;
        COMMIT;
    ELSE
        LOOP
            SELECT n.* INTO step FROM shardid_internal._rebalance_job_next(job_id) AS n;
            COMMIT;
            EXIT WHEN step.shard IS NULL;
            IF step.abort THEN
                CALL shardid.abort_move(step.shard);
            ELSE
                CALL shardid.move_shard(step.shard, step.target, drop_old => step.drop_old, lock_timeout => step.lock_timeout,
                                        cutover_timeout => step.cutover_timeout, catchup_timeout => step.catchup_timeout,
                                        node_timeout => step.node_timeout);
            END IF;
            PERFORM shardid_internal._rebalance_job_moved(job_id, step.action, step.shard, step.target);
            COMMIT;
        END LOOP;
    END IF;
    err := shardid_internal._rebalance_job_end(job_id);
    COMMIT;
    IF err IS NOT NULL THEN
        PERFORM shardid_internal._raise(err[1], err[2], err[3], err[4]);
    END IF;
END
$$;

REVOKE ALL ON PROCEDURE shardid_internal._rebalance_job_run(bigint) FROM PUBLIC;

COMMENT ON PROCEDURE shardid_internal._rebalance_job_run(bigint) IS
    'Router: the one rebalance driver, CALLed by rebalance() and drain_node() in their session and by a background job''s worker: one move at a time, committing after each, or (max_parallel > 1, move_retries > 0) each move in a worker of its own, several at once; its state in shardid.rebalance_jobs.';
