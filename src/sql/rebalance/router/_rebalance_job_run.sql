-- Router: the body of a background rebalance or drain, run by its worker
-- (src/pg/rebalance_worker.cpp) through SPI, non-atomic: the loop of
-- rebalance() and drain_node(), one move at a time with move_shard() and a
-- commit after each, with the job's row as its state (_rebalance_job_next()
-- says what to do, _rebalance_job_moved() counts it), so that
-- rebalance_stop() is seen between moves. An error ends the CALL; the
-- worker records it. A job that has ended or was interrupted is not run
-- (a restarted worker of it exits).
-- No SET search_path (PostgreSQL refuses COMMIT in a procedure that has
-- one): this holds the loop and its COMMITs; the functions it calls pin it.
CREATE OR REPLACE PROCEDURE shardid_internal._rebalance_job_run(job_id bigint)
    LANGUAGE plpgsql
AS $$
DECLARE
    step record;
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
    PERFORM shardid_internal._rebalance_job_end(job_id);
    COMMIT;
END
$$;

REVOKE ALL ON PROCEDURE shardid_internal._rebalance_job_run(bigint) FROM PUBLIC;

COMMENT ON PROCEDURE shardid_internal._rebalance_job_run(bigint) IS
    'Router: the loop of a background rebalance or drain, run by its worker: one move at a time, committing after each, its state in shardid.rebalance_jobs.';
