-- Router: the moves of a job, one row per shard, written by the one
-- scheduler (_rebalance_job_step()) and the move's worker
-- (_rebalance_move_run(); in a background job a worker of its own, in
-- rebalance() and drain_node() their session): what it does (move, resume
-- a move left in progress, abort one being rolled back), its state
-- (starting, running, done; error: its last try failed or its worker
-- ended without a word, and the scheduler retries it after retry_pause
-- (retrying, retry_at) or gives up: failed, or cancelled by
-- rebalance_stop(cancel_move => true)), tries, resumes (its worker died
-- without a word, a restart of the router say, and the move was resumed
-- from its phase, not counted as a try), its worker (process, and
-- its handle as in shardid.rebalance_jobs), the last error. A move given
-- up that left its move in progress is first rolled back (action abort;
-- resume when it was repointed) by a worker, its outcome (failed,
-- cancelled) recorded for when that ends. rebalance_status() shows those
-- in flight and those that failed. Administrators only, as
-- shardid.rebalance_jobs.
CREATE TABLE shardid.rebalance_job_moves (
    job_id       bigint NOT NULL REFERENCES shardid.rebalance_jobs ON DELETE CASCADE,
    shard        integer NOT NULL,
    action       text NOT NULL CHECK (action OPERATOR(pg_catalog.=) ANY (ARRAY['move', 'resume', 'abort'])),
    source       text,
    target       text,
    state        text NOT NULL
                 CHECK (state OPERATOR(pg_catalog.=) ANY (ARRAY['starting', 'running', 'done', 'error', 'retrying', 'failed', 'cancelled'])),
    tries        integer NOT NULL DEFAULT 1,
    resumes      integer NOT NULL DEFAULT 0,
    retry_at     timestamptz,
    worker_pid   integer,
    worker_start timestamptz,
    worker_slot       integer,
    worker_generation bigint,
    worker_server     timestamptz,
    outcome      text CHECK (outcome OPERATOR(pg_catalog.=) ANY (ARRAY['failed', 'cancelled'])),
    last_error   text,
    started_at   timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
    updated_at   timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
    CONSTRAINT rebalance_job_moves_pkey PRIMARY KEY (job_id, shard)
);

REVOKE ALL ON shardid.rebalance_job_moves FROM PUBLIC;

COMMENT ON TABLE shardid.rebalance_job_moves IS
    'Router: the moves of a rebalance or drain job, one row per shard: action, state (starting, running, done, error, retrying, failed, cancelled), tries, worker (process and handle), the outcome of a move given up while it is rolled back, last error. Administrators only.';
