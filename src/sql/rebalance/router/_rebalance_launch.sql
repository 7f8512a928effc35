-- Router: starts a background worker (src/pg/rebalance_worker.cpp) for a
-- row the caller's transaction has written: a job's driver (shard NULL;
-- restarted by the postmaster if it dies) or one of its moves (never
-- restarted), as role (NULL: the caller; another role only for a
-- superuser, 42501). Returns its process ID and its handle (slot and
-- generation in the postmaster's worker array, the server's start) for
-- _rebalance_worker_alive(). 53400 naming max_worker_processes when no
-- slot is free.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_launch(job_id bigint, shard integer, role oid,
                                                              OUT pid integer, OUT slot integer, OUT generation bigint,
                                                              OUT server timestamptz)
    LANGUAGE c
    AS 'MODULE_PATHNAME', 'shardid_rebalance_launch';

REVOKE ALL ON FUNCTION shardid_internal._rebalance_launch(bigint, integer, oid) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_launch(bigint, integer, oid) IS
    'Router: starts the background worker of a rebalance job''s driver (shard NULL) or of one of its moves, as a role (a superuser may name another); returns its process ID and handle (slot, generation, server start).';
