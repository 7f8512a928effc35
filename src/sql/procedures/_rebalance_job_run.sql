-- Router: the body of a background rebalance or drain, run by its worker
-- (src/pg/rebalance_worker.cpp) through SPI, non-atomic: the loop of
-- rebalance() and drain_node(), one move at a time with move_shard() and a
-- commit after each, with the job's row as its state (_rebalance_job_next()
-- says what to do, _rebalance_job_moved() counts it), so that
-- rebalance_stop() is seen between moves. An error ends the CALL; the
-- worker records it.
-- No SET search_path: PostgreSQL refuses COMMIT in a procedure that has
-- one, so every name and operator here is schema-qualified.
CREATE OR REPLACE PROCEDURE shardid_internal._rebalance_job_run(job_id bigint)
    LANGUAGE plpgsql
AS $$
DECLARE
    o    jsonb;
    step record;
BEGIN
    IF NOT shardid_internal._commit_allowed() THEN
        RAISE EXCEPTION 'shardid_internal._rebalance_job_run() cannot run inside a transaction block'
            USING ERRCODE = 'active_sql_transaction',
                  DETAIL = 'It commits after every move, which a CALL inside BEGIN ... COMMIT, a function, an EXCEPTION block or a multi-statement query string cannot do.',
                  HINT = 'Start a background rebalance with shardid.rebalance_start().';
    END IF;
    o := shardid_internal._rebalance_job_begin(job_id);
    COMMIT;
    LOOP
        SELECT n.action, n.shard, n.target INTO step FROM shardid_internal._rebalance_job_next(job_id) AS n;
        COMMIT;
        EXIT WHEN step.shard IS NULL;
        IF step.action OPERATOR(pg_catalog.=) 'abort' THEN
            CALL shardid.abort_move(step.shard);
        ELSE
            CALL shardid.move_shard(step.shard, step.target,
                                    drop_old => (o OPERATOR(pg_catalog.->>) 'drop_old')::pg_catalog.bool,
                                    lock_timeout => (o OPERATOR(pg_catalog.->>) 'lock_timeout')::pg_catalog.interval,
                                    cutover_timeout => (o OPERATOR(pg_catalog.->>) 'cutover_timeout')::pg_catalog.interval,
                                    catchup_timeout => (o OPERATOR(pg_catalog.->>) 'catchup_timeout')::pg_catalog.interval,
                                    node_timeout => (o OPERATOR(pg_catalog.->>) 'node_timeout')::pg_catalog.interval);
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
