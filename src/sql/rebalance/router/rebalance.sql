-- Rebalances the nodes: CALL shardid.rebalance() makes the moves of
-- rebalance_plan() one at a time with CALL shardid.move_shard(), committing
-- after each, and stops at the first failure by raising it; CALL it again
-- to go on. A move left in progress is resumed first (one being rolled
-- back is rolled back to the end: abort_move(), no move counted; an
-- offline one is refused with a hint). It re-plans before every move, the
-- shards it has moved excluded, so that each step acts on the placement
-- and sizes as they are (writes go on, a move may fail, a copy arrives
-- without its bloat); with sizes that do not change, the moves made are
-- exactly the plan rebalance_plan() showed. One rebalance at a time: the
-- lock 'rebalance' of shardid.session_locks, kept across the commits. The
-- move options are passed to every move_shard() call (same defaults); after
-- each call the move must be done, or the rebalance stops.
-- No SET search_path (PostgreSQL refuses COMMIT in a procedure that has
-- one): this holds the loop and its COMMITs; the checks, what to do next
-- and the NOTICEs are functions that pin it.
CREATE OR REPLACE PROCEDURE shardid.rebalance(
    strategy text DEFAULT 'by_size',
    max_moves integer DEFAULT NULL,
    excluded_shards integer[] DEFAULT '{}',
    drop_old boolean DEFAULT false,
    lock_timeout interval DEFAULT '10 s',
    cutover_timeout interval DEFAULT '30 s',
    catchup_timeout interval DEFAULT '1 day',
    node_timeout interval DEFAULT '30 s')
    LANGUAGE plpgsql
AS $$
DECLARE
    step    record;
    pending shardid.shard_moves[];
    moved   integer[] := '{}';
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid.rebalance()',
                                             'after every move');
    PERFORM shardid_internal._rebalance_begin(strategy, max_moves);
    COMMIT;
    LOOP
        step := shardid_internal._rebalance_next(pending, strategy, max_moves, excluded_shards, moved);
        EXIT WHEN step.shard IS NULL;
        pending := step.pending;
        IF step.abort THEN
            CALL shardid.abort_move(step.shard);
        ELSE
            CALL shardid.move_shard(step.shard, step.target, drop_old => drop_old,
                                    lock_timeout => lock_timeout, cutover_timeout => cutover_timeout,
                                    catchup_timeout => catchup_timeout, node_timeout => node_timeout);
            moved := shardid_internal._rebalance_moved(step.shard, step.target, moved);
        END IF;
        COMMIT;
    END LOOP;
    PERFORM shardid_internal._rebalance_unlock();
    COMMIT;
    PERFORM shardid_internal._rebalance_end(step.err, max_moves, moved);
END
$$;

REVOKE ALL ON PROCEDURE shardid.rebalance(text, integer, integer[], boolean, interval, interval, interval, interval) FROM PUBLIC;

COMMENT ON PROCEDURE shardid.rebalance(text, integer, integer[], boolean, interval, interval, interval, interval) IS
    'Router: moves shards one at a time with move_shard(), re-planned by rebalance_plan() before each, committing after each, until balanced or max_moves; resumes a move left in progress first; stops at the first failure (CALL it again to go on). The move options are passed to move_shard().';
