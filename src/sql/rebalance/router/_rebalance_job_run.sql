-- Router: the one rebalance driver, for every rebalance and drain. CALLed
-- in the caller's session by rebalance() and drain_node() (a job
-- in_session), and by the background worker of rebalance_start() and
-- drain_node_start() (src/pg/rebalance_worker.cpp, at top level: a
-- portal, non-atomic), the job's row in shardid.rebalance_jobs and its
-- moves' rows in shardid.rebalance_job_moves as its state:
-- _rebalance_job_begin() takes the one rebalance lock; then, until the
-- job is to end, the one scheduler _rebalance_job_step() decides, from
-- one read of the ledger, what starts (serial is one slot). A background
-- job runs each move in a worker of its own and sleeps on its latch
-- between decisions (_rebalance_sleep()): a move's worker that ends wakes
-- it at once, rebalance_stop() too. A job in a session runs its one move
-- itself (_rebalance_move_run(), as a worker does). _rebalance_job_end()
-- ends the job. An error ends the CALL: in a session it reaches the
-- caller (the job is then reported interrupted, and the session keeps
-- the lock until it ends or its next rebalance ends); a worker records it
-- (_rebalance_job_failed()). A job that has ended or was interrupted is
-- not run (a restarted worker of it exits).
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
    LOOP
        SELECT s.* INTO step FROM shardid_internal._rebalance_job_step(job_id) AS s;
        COMMIT;
        EXIT WHEN step.done;
        IF step.run_shard IS NOT NULL THEN
            CALL shardid_internal._rebalance_move_run(job_id, step.run_shard);
        ELSE
            PERFORM shardid_internal._rebalance_sleep(step.wake_in);
        END IF;
    END LOOP;
    err := shardid_internal._rebalance_job_end(job_id);
    COMMIT;
    IF err IS NOT NULL THEN
        PERFORM shardid_internal._raise(err[1], err[2], err[3], err[4]);
    END IF;
END
$$;

REVOKE ALL ON PROCEDURE shardid_internal._rebalance_job_run(bigint) FROM PUBLIC;

COMMENT ON PROCEDURE shardid_internal._rebalance_job_run(bigint) IS
    'Router: the one rebalance driver, CALLed by rebalance() and drain_node() in their session and by a background job''s worker: the one scheduler decides what starts (serial is one slot), a background job''s moves each in a worker of their own, woken when one ends; its state in shardid.rebalance_jobs and shardid.rebalance_job_moves.';
