-- Router: waits until the last (or the given) background job has ended
-- (or timeout has passed, when given), polling its row every 0.2 s, and
-- returns its status as rebalance_status() does. Interruptible
-- (pg_cancel_backend, Ctrl-C): the job goes on. Refuses (25000) a job
-- started in the same transaction, whose worker waits for its commit.
CREATE OR REPLACE FUNCTION shardid.rebalance_wait(job bigint DEFAULT NULL, timeout interval DEFAULT NULL)
    RETURNS TABLE (job_id bigint, kind text, drain_node text, state text, moves_done integer, moves_planned integer,
                   current_shard integer, current_source text, current_target text, current_phase text,
                   current_bytes_copied bigint, current_bytes_total bigint, current_lag_bytes bigint,
                   last_error text, worker_pid integer, started_by name, started_at timestamptz,
                   updated_at timestamptz, finished_at timestamptz, options jsonb,
                   moves_in_flight jsonb, moves_failed integer[])
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    id       bigint := COALESCE(job, (SELECT pg_catalog.max(x.job_id) FROM shardid.rebalance_jobs AS x));
    deadline timestamptz := pg_catalog.clock_timestamp() + timeout;
BEGIN
    IF id IS NULL THEN
        RAISE EXCEPTION 'there is no background rebalance job' USING ERRCODE = 'undefined_object';
    END IF;
    -- its worker waits for the transaction that started the job to end
    IF EXISTS (SELECT FROM shardid.rebalance_jobs AS x
                WHERE x.job_id = id
                  AND x.xmin::text = (pg_catalog.pg_current_xact_id_if_assigned()::text::bigint % 4294967296)::text) THEN
        RAISE EXCEPTION 'rebalance_wait() cannot wait for job %, started in this transaction', id
            USING ERRCODE = 'invalid_transaction_state',
                  DETAIL = 'Its worker starts once the transaction that started it commits.',
                  HINT = 'Start it and wait for it in two statements: SELECT shardid.rebalance_start(); then SELECT * FROM shardid.rebalance_wait();';
    END IF;
    LOOP
        EXIT WHEN NOT EXISTS (SELECT FROM shardid.rebalance_status(id) AS s WHERE s.state IN ('starting', 'running', 'stopping'));
        EXIT WHEN deadline IS NOT NULL AND pg_catalog.clock_timestamp() >= deadline;
        PERFORM pg_catalog.pg_sleep(0.2);
    END LOOP;
    RETURN QUERY SELECT * FROM shardid.rebalance_status(id);
END
$$;

REVOKE ALL ON FUNCTION shardid.rebalance_wait(bigint, interval) FROM PUBLIC;

COMMENT ON FUNCTION shardid.rebalance_wait(bigint, interval) IS
    'Router: waits until the last (or the given) background rebalance or drain has ended, or timeout has passed; returns its status as rebalance_status() does.';
