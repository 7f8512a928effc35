-- Rebalances the nodes: CALL shardid.rebalance() makes the moves of
-- rebalance_plan() one at a time with CALL shardid.move_shard(), committing
-- after each, and stops at the first failure by raising it. Calling it again
-- goes on from where it stopped: a move left in progress (a row of
-- shardid.shard_moves, e.g. after its session was terminated) is resumed
-- first; one being rolled back is rolled back to the end (abort_move(), no
-- move counted). Moves are online: an offline move copies its rows from a
-- client (bin/shardid-move-shard --offline, which bin/shardid-rebalance
-- --offline runs), so one left in progress is refused here with a hint.
--
-- It re-plans before every move (rebalance_plan(strategy, 1, ...), the
-- shards it has moved excluded, so none moves twice in one call) rather than
-- following one plan made at the start: during a long rebalance the sizes
-- change (writes go on; a shard copied by logical replication arrives
-- without its bloat, smaller than it was on the source), a move may fail or
-- someone may move a shard by hand, and each step should act on the
-- placement and sizes as they are. It costs one size query per node per
-- move, nothing next to a move. With sizes that do not change, the moves
-- made are exactly the plan rebalance_plan() showed.
--
-- One rebalance at a time: the lock 'rebalance' of shardid.session_locks
-- (only administrators may take it: 0.2's advisory key could be held by
-- any role), kept across the commits and released at the end (or when the
-- session ends: after a failure it stays with the session until then, or
-- until rebalance() is called again in it).
--
-- The move options (drop_old, lock_timeout ... node_timeout) are passed to
-- every move_shard() call and have its defaults (a regression test compares
-- them). After each call the move must be done: its row gone, the shard
-- placed on the target; anything else stops the rebalance.
-- No SET search_path: PostgreSQL refuses COMMIT in a procedure that has
-- one, so every name and operator here is schema-qualified.
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
    holder   integer;
    left_over record;
    next_move record;
    moved    integer[] := '{}';
    made     integer := 0;
BEGIN
    IF NOT shardid_internal._commit_allowed() THEN
        RAISE EXCEPTION 'shardid.rebalance() cannot run inside a transaction block'
            USING ERRCODE = 'active_sql_transaction',
                  DETAIL = 'It commits after every move, which a CALL inside BEGIN ... COMMIT, a function, an EXCEPTION block or a multi-statement query string cannot do.',
                  HINT = 'CALL it on its own (autocommit).';
    END IF;
    PERFORM shardid_internal._check_rebalance_options(strategy, max_moves);

    holder := shardid_internal._session_lock('rebalance');
    IF holder IS NOT NULL THEN
        RAISE EXCEPTION 'another rebalance is running'
            USING ERRCODE = 'lock_not_available',
                  DETAIL = pg_catalog.format('The router session with process ID %s holds the rebalance lock.', holder),
                  HINT = 'Wait for it to finish, or cancel it (pg_cancel_backend); a rebalance that failed keeps the lock until its session ends.';
    END IF;
    COMMIT;

    -- Moves left in progress first, lowest shard first.
    FOR left_over IN
        SELECT m.shard, m.target, m.phase, m.mode FROM shardid.shard_moves AS m ORDER BY m.shard
    LOOP
        IF left_over.phase OPERATOR(pg_catalog.=) 'aborting' THEN
            RAISE NOTICE 'rebalance: finishing the rollback of the move of shard % to node "%"', left_over.shard, left_over.target;
            CALL shardid.abort_move(left_over.shard);
        ELSIF left_over.mode OPERATOR(pg_catalog.=) 'offline' THEN
            PERFORM shardid_internal._session_unlock('rebalance');
            COMMIT;
            RAISE EXCEPTION 'the offline move of shard % to node "%" is in progress (phase %)',
                            left_over.shard, left_over.target, left_over.phase
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = 'An offline move copies the shard''s rows from a client; rebalance() cannot finish it.',
                      HINT = pg_catalog.format('Finish it with bin/shardid-move-shard --shard %s --to %s --offline, or roll it back with CALL shardid.abort_move(%s);',
                                               left_over.shard, left_over.target, left_over.shard);
        ELSE
            EXIT WHEN max_moves IS NOT NULL AND made OPERATOR(pg_catalog.>=) max_moves;
            RAISE NOTICE 'rebalance: resuming the move of shard % to node "%" (phase %)', left_over.shard, left_over.target, left_over.phase;
            CALL shardid.move_shard(left_over.shard, left_over.target, drop_old => drop_old,
                                    lock_timeout => lock_timeout, cutover_timeout => cutover_timeout,
                                    catchup_timeout => catchup_timeout, node_timeout => node_timeout);
            PERFORM shardid_internal._check_move_done(left_over.shard, left_over.target);
            made := made OPERATOR(pg_catalog.+) 1;
            moved := moved OPERATOR(pg_catalog.||) left_over.shard;
        END IF;
        COMMIT;
    END LOOP;

    -- Then the plan, re-made before each move.
    LOOP
        IF max_moves IS NOT NULL AND made OPERATOR(pg_catalog.>=) max_moves THEN
            PERFORM shardid_internal._session_unlock('rebalance');
            COMMIT;
            RAISE NOTICE 'rebalance: stopped at max_moves (moves made: %): CALL rebalance() again for more', made;
            RETURN;
        END IF;
        SELECT p.shard, p.source, p.target, p.bytes INTO next_move
          FROM shardid.rebalance_plan(strategy, 1, COALESCE(excluded_shards, '{}') OPERATOR(pg_catalog.||) moved) AS p;
        EXIT WHEN NOT FOUND;
        RAISE NOTICE 'rebalance: shard % from node "%" to node "%"%', next_move.shard, next_move.source, next_move.target,
            CASE WHEN next_move.bytes IS NULL THEN ''
                 ELSE pg_catalog.format(' (%s)', pg_catalog.pg_size_pretty(next_move.bytes)) END;
        CALL shardid.move_shard(next_move.shard, next_move.target, drop_old => drop_old,
                                lock_timeout => lock_timeout, cutover_timeout => cutover_timeout,
                                catchup_timeout => catchup_timeout, node_timeout => node_timeout);
        PERFORM shardid_internal._check_move_done(next_move.shard, next_move.target);
        made := made OPERATOR(pg_catalog.+) 1;
        moved := moved OPERATOR(pg_catalog.||) next_move.shard;
        COMMIT;
    END LOOP;

    PERFORM shardid_internal._session_unlock('rebalance');
    COMMIT;
    IF made OPERATOR(pg_catalog.=) 0 THEN
        RAISE NOTICE 'rebalance: balanced: nothing to move';
    ELSE
        RAISE NOTICE 'rebalance: balanced (moves made: %)', made;
    END IF;
END
$$;

REVOKE ALL ON PROCEDURE shardid.rebalance(text, integer, integer[], boolean, interval, interval, interval, interval) FROM PUBLIC;

COMMENT ON PROCEDURE shardid.rebalance(text, integer, integer[], boolean, interval, interval, interval, interval) IS
    'Router: moves shards one at a time with move_shard(), re-planned by rebalance_plan() before each, committing after each, until balanced or max_moves; resumes a move left in progress first; stops at the first failure (CALL it again to go on). The move options are passed to move_shard().';
