-- Router: moves one logical shard to another node while it takes writes
-- (docs/moves.md): a row of shardid.shard_moves whose phase commits as it
-- advances, one _move_step() per phase, the nodes driven over dblink. CALL
-- it again after an interruption to resume; a failure or a cancel before
-- the repoint rolls the move back (_move_rollback), a terminated session
-- leaves it for the next CALL or abort_move(); one session per shard
-- (its row in shardid.session_locks, committed first and released before
-- the CALL ends). No SET clause (it COMMITs): this holds the loop and its
-- COMMITs, the work is done by functions that pin search_path.
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
DECLARE
    s        shardid_internal._move_run;
    t_start  timestamptz := pg_catalog.clock_timestamp();
    t_routed timestamptz;
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid.move_shard()',
                                             'once per phase (so that an interruption resumes or rolls back from there)');
    SELECT (o OPERATOR(pg_catalog.->>) 'drop_old')::boolean, (o OPERATOR(pg_catalog.->>) 'lock_timeout')::interval, (o OPERATOR(pg_catalog.->>) 'cutover_timeout')::interval,
           (o OPERATOR(pg_catalog.->>) 'catchup_timeout')::interval, (o OPERATOR(pg_catalog.->>) 'node_timeout')::interval
      INTO drop_old, lock_timeout, cutover_timeout, catchup_timeout, node_timeout
      FROM shardid_internal._move_options(drop_old, lock_timeout, cutover_timeout, catchup_timeout, node_timeout) AS o;
    PERFORM shardid_internal._move_lock(shard, 'shardid.move_shard()');
    COMMIT;
    s := shardid_internal._move_start(shard, to_node, drop_old, offline, lock_timeout, cutover_timeout, catchup_timeout, node_timeout);
    COMMIT;
    PERFORM shardid_internal._move_raise(s);
    IF s.aborting THEN
        CALL shardid_internal._move_rollback(shard);
        s := shardid_internal._move_rolled_back(s, 'resume', to_node);
        COMMIT;
        PERFORM shardid_internal._move_raise(s);
    END IF;
    WHILE s.phase IS NOT NULL LOOP
        s := shardid_internal._move_step(s, drop_old, lock_timeout, cutover_timeout, catchup_timeout, node_timeout);
        EXIT WHEN s.err IS NOT NULL;
        COMMIT;
        IF s.routed AND t_routed IS NULL THEN
            t_routed := pg_catalog.clock_timestamp();
        END IF;
        EXIT WHEN s.waiting;
    END LOOP;
    IF s.err IS NOT NULL THEN
        COMMIT;
        -- rolled back unless it is repointed (or gone): _move_rollback_start;
        -- a node that failed it is waited for, up to node_timeout
        CALL shardid_internal._move_rollback(shard, node_timeout, s.err[1]);
        s := shardid_internal._move_rolled_back(s, 'failure');
        COMMIT;
        PERFORM shardid_internal._move_raise(s);
    END IF;
    PERFORM shardid_internal._move_unlock(shard);
    COMMIT;
    PERFORM shardid_internal._move_report(s.m, t_start, t_routed, s.old, s.steps);
END
$$;

REVOKE ALL ON PROCEDURE shardid.move_shard(integer, text, boolean, boolean, interval, interval, interval, interval) FROM PUBLIC;

COMMENT ON PROCEDURE shardid.move_shard(integer, text, boolean, boolean, interval, interval, interval, interval) IS
    'Router: moves a shard to another node while it takes writes (refused only during the cut-over); CALL again to resume an interrupted move; a failure or cancel before the repoint rolls it back.';
