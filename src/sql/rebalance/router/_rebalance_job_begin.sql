-- Router, the driver's start (_rebalance_job_run()), in the session that
-- runs the job: rebalance() or drain_node() in_session, or the background
-- worker (again each time the postmaster restarts a worker that died).
-- Whether the job is still to run: a job that has ended (finished,
-- stopped, failed) or was marked interrupted (a new job resumes its work)
-- is not: false, and a worker exits for good. A drain refuses an unknown
-- node, no other node, or a move in progress to the node (it would land a
-- shard there), 42704 or 55000. Then takes the rebalance lock
-- (_rebalance_lock(): 55P03 naming its holder), closes a drained node to
-- new shards (accepts_shards false, kept after the drain: set_node()
-- opens it again), records the session that runs the job (process ID and
-- start time) and turns it to running (stopping stays stopping).
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_job_begin(job_id bigint) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    j shardid.rebalance_jobs;
    m shardid.shard_moves;
BEGIN
    -- ROW EXCLUSIVE on the table before the row's lock (see rebalance_resume())
    LOCK TABLE shardid.rebalance_jobs IN ROW EXCLUSIVE MODE;
    SELECT * INTO j FROM shardid.rebalance_jobs AS x WHERE x.job_id = _rebalance_job_begin.job_id FOR UPDATE;
    IF NOT FOUND OR j.state NOT IN ('starting', 'running', 'stopping') THEN
        RETURN false;
    END IF;
    IF j.state <> 'starting' AND NOT j.in_session THEN
        RAISE LOG 'shardid rebalance job %: its worker was restarted; it resumes the job', j.job_id;
    END IF;
    IF j.kind = 'drain' THEN
        IF NOT EXISTS (SELECT FROM shardid.nodes AS x WHERE x.node = j.drain_node) THEN
            RAISE EXCEPTION 'node "%" does not exist', j.drain_node USING ERRCODE = 'undefined_object';
        END IF;
        IF NOT EXISTS (SELECT FROM shardid.nodes AS x WHERE x.node <> j.drain_node) THEN
            RAISE EXCEPTION 'there is no other node to drain node "%" onto', j.drain_node
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'Add a node first (shardid.add_node()).';
        END IF;
        SELECT * INTO m FROM shardid.shard_moves AS x WHERE x.target = j.drain_node AND x.phase <> 'aborting' ORDER BY x.shard LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION 'shard % is being moved to node "%" (phase %)', m.shard, j.drain_node, m.phase
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = pg_catalog.format('Finish it (CALL shardid.move_shard(%s, %L);) or roll it back (CALL shardid.abort_move(%s);) first.',
                                               m.shard, j.drain_node, m.shard);
        END IF;
    END IF;
    PERFORM shardid_internal._rebalance_lock(true, j.job_id);
    IF j.kind = 'drain' THEN
        UPDATE shardid.nodes AS x SET accepts_shards = false WHERE x.node = j.drain_node AND x.accepts_shards;
    END IF;
    UPDATE shardid.rebalance_jobs AS x
       SET state = CASE WHEN x.state = 'stopping' THEN 'stopping' ELSE 'running' END,
           worker_pid = pg_backend_pid(),
           worker_start = (SELECT a.backend_start FROM pg_stat_activity AS a WHERE a.pid = pg_backend_pid()),
           updated_at = pg_catalog.clock_timestamp()
     WHERE x.job_id = j.job_id;
    RETURN true;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_job_begin(bigint) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_job_begin(bigint) IS
    'Router, the rebalance driver''s start, in the session that runs the job: false for a job that has ended or was interrupted; refuses a drain of an unknown node, with no other node or a move to it; takes the rebalance lock, sets a drained node''s accepts_shards false, records the session and turns the job to running.';
