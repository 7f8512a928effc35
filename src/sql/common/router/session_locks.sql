-- Router: the locks a move and a rebalance hold across their commits, one
-- row per lock ('move <shard>', 'rebalance'): the backend that holds it,
-- by process ID and start time. A lock whose backend is gone (terminated,
-- crashed, the router restarted) is free: the next taker replaces the row
-- (_session_lock). Only administrators may write or lock these rows, so,
-- unlike the advisory locks of 0.2 (fixed keys any role could take first),
-- no role without privileges on shardid's objects can block a move or a
-- rebalance. Not dumped: a restored router holds no lock.
CREATE TABLE shardid.session_locks (
    lock_name     text PRIMARY KEY,
    pid           integer NOT NULL,
    backend_start timestamptz NOT NULL,
    taken_at      timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp()
);

COMMENT ON TABLE shardid.session_locks IS
    'Router: locks held across commits by a move (move <shard>) or a rebalance (rebalance): the holding backend''s process ID and start; free once that backend is gone. Writable by administrators only.';
