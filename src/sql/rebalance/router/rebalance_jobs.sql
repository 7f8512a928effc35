-- Router: every rebalance and drain, one row per job, kept after it ends
-- so that its outcome survives the session that started it and a restart
-- of the server: the background ones (rebalance_start(),
-- drain_node_start(): a worker runs them) and, in_session, the CALLs of
-- rebalance() and drain_node() (their session is the worker). The one
-- driver (_rebalance_job_run()) writes its progress here after every
-- move, in the same transaction as the move's last commit;
-- rebalance_status() reads it. The driver of a background job is alive
-- while the postmaster has its worker registered: its handle (worker_slot,
-- worker_generation) and the server's start (worker_server) are recorded
-- when it is started (_rebalance_worker_alive()). cancel_moves: stopped
-- with rebalance_stop(cancel_move => true). Readable by administrators
-- only: it names the roles that started jobs.
CREATE TABLE shardid.rebalance_jobs (
    job_id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind           text NOT NULL CHECK (kind OPERATOR(pg_catalog.=) ANY (ARRAY['rebalance', 'drain'])),
    drain_node     text,
    options        jsonb NOT NULL,
    state          text NOT NULL
                   CHECK (state OPERATOR(pg_catalog.=) ANY (ARRAY['starting', 'running', 'stopping', 'finished', 'stopped', 'failed', 'interrupted'])),
    moves_done     integer NOT NULL DEFAULT 0,
    moves_planned  integer,
    moved          integer[] NOT NULL DEFAULT '{}',
    current_shard  integer,
    current_source text,
    current_target text,
    last_error     text,
    worker_pid     integer,
    worker_start   timestamptz,
    started_by     name NOT NULL DEFAULT CURRENT_USER,
    started_at     timestamptz NOT NULL DEFAULT pg_catalog.now(),
    updated_at     timestamptz NOT NULL DEFAULT pg_catalog.now(),
    finished_at    timestamptz,
    in_session     boolean NOT NULL DEFAULT false,
    worker_slot       integer,
    worker_generation bigint,
    worker_server     timestamptz,
    cancel_moves      boolean NOT NULL DEFAULT false
);

REVOKE ALL ON shardid.rebalance_jobs FROM PUBLIC;

COMMENT ON TABLE shardid.rebalance_jobs IS
    'Router: rebalances and drains, one row per job, in the background (rebalance_start(), drain_node_start()) or in_session (rebalance(), drain_node()): options, state, moves done and planned, the current move, the last error, the driver (process, handle), times, whether its moves are cancelled. Read through rebalance_status(); administrators only.';
