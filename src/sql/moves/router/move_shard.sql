-- Router: moves one logical shard to another node while it takes writes
-- (docs/moves.md): a row of shardid.shard_moves whose phase commits as it
-- advances, one _move_step() per phase, the nodes driven over dblink. CALL
-- it again after an interruption to resume; a failure or a cancel before
-- the repoint rolls the move back (_move_rollback), a terminated session
-- leaves it for the next CALL or abort_move(); one session per shard
-- (its row in shardid.session_locks, committed first and released before
-- the CALL ends). Its options are one record (shardid.move_options),
-- built and checked once (_move_options) and passed whole to the loop
-- (_move_shard), which the moves of a rebalance run too. No SET clause (it
-- COMMITs): this holds only the CALL.
CREATE OR REPLACE PROCEDURE shardid.move_shard(
    shard integer,
    to_node text,
    drop_old boolean DEFAULT NULL,
    offline boolean DEFAULT false,
    lock_timeout interval DEFAULT NULL,
    cutover_timeout interval DEFAULT NULL,
    catchup_timeout interval DEFAULT NULL,
    node_timeout interval DEFAULT NULL)
    LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid.move_shard()',
                                             'once per phase (so that an interruption resumes or rolls back from there)');
    CALL shardid_internal._move_shard(shard, to_node,
        shardid_internal._move_options(pg_catalog.jsonb_build_object('drop_old', drop_old, 'offline', offline, 'lock_timeout', lock_timeout,
                                                                     'cutover_timeout', cutover_timeout, 'catchup_timeout', catchup_timeout,
                                                                     'node_timeout', node_timeout)));
END
$$;

REVOKE ALL ON PROCEDURE shardid.move_shard(integer, text, boolean, boolean, interval, interval, interval, interval) FROM PUBLIC;

COMMENT ON PROCEDURE shardid.move_shard(integer, text, boolean, boolean, interval, interval, interval, interval) IS
    'Router: moves a shard to another node while it takes writes (refused only during the cut-over); CALL again to resume an interrupted move; a failure or cancel before the repoint rolls it back.';
