-- Rebalances the nodes: CALL shardid.rebalance() makes the moves of
-- rebalance_plan() one at a time with CALL shardid.move_shard(), committing
-- after each, and stops at the first failure by raising it; CALL it again
-- to go on. It is a job of the one rebalance driver run in this session
-- (_rebalance_job_run(), as rebalance_start() runs it in the background;
-- its row in shardid.rebalance_jobs, rebalance_status() shows it): a move
-- left in progress is resumed first (one being rolled back is rolled back
-- to the end: abort_move(), no move counted; an offline one is refused
-- with a hint). It re-plans before every move, the shards it has moved
-- excluded, so that each step acts on the placement and sizes as they are
-- (writes go on, a move may fail, a copy arrives without its bloat); with
-- sizes that do not change, the moves made are exactly the plan
-- rebalance_plan() showed. One rebalance at a time: the lock 'rebalance'
-- of shardid.session_locks, kept across the commits. The move options are
-- passed to every move_shard() call (same defaults); after each call the
-- move must be done, or the rebalance stops.
-- No SET search_path (PostgreSQL refuses COMMIT in a procedure that has
-- one): this holds only the CALL; the functions it calls pin it.
CREATE OR REPLACE PROCEDURE shardid.rebalance(strategy text DEFAULT 'by_size', max_moves integer DEFAULT NULL,
    excluded_shards integer[] DEFAULT '{}',
    drop_old boolean DEFAULT NULL, lock_timeout interval DEFAULT NULL, cutover_timeout interval DEFAULT NULL,
    catchup_timeout interval DEFAULT NULL, node_timeout interval DEFAULT NULL)
    LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid.rebalance()', 'after every move');
    CALL shardid_internal._rebalance_job_run(shardid_internal._rebalance_job_create('rebalance', NULL, shardid_internal._rebalance_options(
        'rebalance', NULL, strategy, max_moves, excluded_shards, drop_old, lock_timeout, cutover_timeout, catchup_timeout,
        node_timeout, 1, 1, 0, '10 s'), in_session => true));
END
$$;

REVOKE ALL ON PROCEDURE shardid.rebalance(text, integer, integer[], boolean, interval, interval, interval, interval) FROM PUBLIC;

COMMENT ON PROCEDURE shardid.rebalance(text, integer, integer[], boolean, interval, interval, interval, interval) IS
    'Router: moves shards one at a time with move_shard(), re-planned by rebalance_plan() before each, committing after each, until balanced or max_moves; resumes a move left in progress first; stops at the first failure (CALL it again to go on). The move options are passed to move_shard().';
