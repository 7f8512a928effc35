-- Router, the scheduler (_rebalance_job_step()): starts one move of a job:
-- its row of shardid.rebalance_job_moves turns starting (a new row, or a
-- retry: tries given, the last error kept; outcome: the move was given up
-- and this rolls back what it left), and a background job starts its
-- worker (_rebalance_launch(), as the job's role, its handle recorded;
-- the worker waits for this transaction to commit). A job in a session
-- runs the move itself. Returns whether it started: when no background
-- worker slot is free (max_worker_processes) and other moves of the job
-- are under way, nothing is written and the move waits for a later
-- decision; with none under way the job cannot go on (53400).
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_move_start(j shardid.rebalance_jobs, shard integer, action text,
                                                                  source text, target text, tries integer, outcome text)
    RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    w record;
BEGIN
    INSERT INTO shardid.rebalance_job_moves AS x (job_id, shard, action, source, target, state, tries, outcome)
    VALUES (j.job_id, shard, action, source, target, 'starting', tries, outcome)
    ON CONFLICT ON CONSTRAINT rebalance_job_moves_pkey DO UPDATE
       SET action = excluded.action, source = excluded.source, target = excluded.target, state = 'starting',
           tries = excluded.tries, outcome = excluded.outcome, retry_at = NULL, worker_pid = NULL, worker_start = NULL,
           worker_slot = NULL, worker_generation = NULL, worker_server = NULL,
           started_at = CASE WHEN excluded.tries = 1 THEN excluded.started_at ELSE x.started_at END,
           last_error = CASE WHEN excluded.tries = 1 AND excluded.outcome IS NULL THEN NULL ELSE x.last_error END,
           updated_at = excluded.updated_at;
    IF j.in_session THEN
        RETURN true;
    END IF;
    BEGIN
        w := shardid_internal._rebalance_launch(j.job_id, shard,
                                                (SELECT r.oid FROM pg_catalog.pg_roles AS r WHERE r.rolname = j.started_by));
    EXCEPTION WHEN configuration_limit_exceeded THEN
        IF EXISTS (SELECT FROM shardid.rebalance_job_moves AS x
                    WHERE x.job_id = j.job_id AND x.shard <> _rebalance_move_start.shard AND x.state IN ('starting', 'running')) THEN
            RAISE EXCEPTION USING ERRCODE = 'SDW01';
        END IF;
        RAISE;
    END;
    UPDATE shardid.rebalance_job_moves AS x
       SET worker_pid = w.pid, worker_slot = w.slot, worker_generation = w.generation, worker_server = w.server
     WHERE x.job_id = j.job_id AND x.shard = _rebalance_move_start.shard;
    RETURN true;
EXCEPTION WHEN SQLSTATE 'SDW01' THEN
    RETURN false;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_move_start(shardid.rebalance_jobs, integer, text, text, text, integer, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_move_start(shardid.rebalance_jobs, integer, text, text, text, integer, text) IS
    'Router, the rebalance scheduler: starts one move of a job (its row starting; in a background job its worker, handle recorded); returns false when no worker slot is free while others of the job run.';
