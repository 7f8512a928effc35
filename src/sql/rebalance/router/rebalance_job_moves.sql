-- Router: the moves of a job that runs them in sessions of their own
-- (max_parallel > 1 or move_retries > 0: one background worker per move,
-- _rebalance_move_run()), one row per shard: what it does (move, resume a
-- move left in progress, abort one being rolled back), its state
-- (starting, running, done; error: its last try failed, the driver
-- retries it after retry_pause (retrying, retry_at) or gives up: failed),
-- tries, its worker, the last error. rebalance_status() shows those in
-- flight and those that failed. Administrators only, as
-- shardid.rebalance_jobs.
CREATE TABLE shardid.rebalance_job_moves (
    job_id       bigint NOT NULL REFERENCES shardid.rebalance_jobs ON DELETE CASCADE,
    shard        integer NOT NULL,
    action       text NOT NULL CHECK (action OPERATOR(pg_catalog.=) ANY (ARRAY['move', 'resume', 'abort'])),
    source       text,
    target       text,
    state        text NOT NULL
                 CHECK (state OPERATOR(pg_catalog.=) ANY (ARRAY['starting', 'running', 'done', 'error', 'retrying', 'failed'])),
    tries        integer NOT NULL DEFAULT 1,
    retry_at     timestamptz,
    worker_pid   integer,
    worker_start timestamptz,
    last_error   text,
    started_at   timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
    updated_at   timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
    CONSTRAINT rebalance_job_moves_pkey PRIMARY KEY (job_id, shard)
);

REVOKE ALL ON shardid.rebalance_job_moves FROM PUBLIC;

COMMENT ON TABLE shardid.rebalance_job_moves IS
    'Router: the moves of a rebalance or drain job run in sessions of their own (in parallel, or retried), one row per shard: action, state (starting, running, done, error, retrying, failed), tries, worker, last error. Administrators only.';
