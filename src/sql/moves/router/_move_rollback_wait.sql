-- Router, _move_rollback(): whether to run the rollback's steps again
-- after a pause, because a node of the move did not answer. A node under
-- an HA manager has no primary from the moment its leader fails until
-- the manager promotes a replica (Patroni: up to ttl + loop_wait, 40 s by
-- default; docs/high-availability.md), and the rollback can finish only
-- once it answers again, on whichever member leads. True (after a pause of
-- 1 s) while the move's row is still 'aborting', its rollback was not
-- cancelled, since + node_timeout has not passed and its source or target
-- cannot be reached; false when the rollback is done, or what it left is
-- not an outage (a node that answers and refuses), or the time is up (the
-- row stays 'aborting' with what is left: the next move_shard(),
-- abort_move() or the job's retry finishes it).
CREATE OR REPLACE FUNCTION shardid_internal._move_rollback_wait(m shardid.shard_moves, since timestamptz, node_timeout interval)
    RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    x     shardid.shard_moves;
    down  text[] := '{}';
    node  text;
    until timestamptz := since + COALESCE(node_timeout, (shardid_internal._move_options(NULL, NULL, NULL, NULL, NULL)->>'node_timeout')::interval);
BEGIN
    SELECT * INTO x FROM shardid.shard_moves AS r WHERE r.shard = m.shard;
    IF NOT FOUND OR x.phase <> 'aborting' OR x.move_id <> m.move_id OR x.last_error LIKE 'rollback cancelled%' THEN
        RETURN false;
    END IF;
    IF clock_timestamp() > until THEN
        RETURN false;
    END IF;
    FOREACH node IN ARRAY ARRAY[m.source, m.target] LOOP
        BEGIN
            PERFORM shardid_internal._node_connect('shardid_move_probe', node);
            IF NOT shardid_internal._node_alive('shardid_move_probe') THEN
                down := down || node;
            END IF;
        EXCEPTION WHEN OTHERS THEN
            down := down || node;
        END;
        PERFORM shardid_internal._node_close('shardid_move_probe');
    END LOOP;
    IF cardinality(down) = 0 THEN
        RETURN false;
    END IF;
    UPDATE shardid.shard_moves AS r
       SET last_error = format('rollback waits for node %s (unreachable; retried until %s): %s',
                               (SELECT string_agg(format('"%s"', d), ', ') FROM unnest(down) AS d),
                               date_trunc('second', until), x.last_error),
           updated_at = clock_timestamp()
     WHERE r.shard = m.shard;
    PERFORM pg_sleep(1);
    RETURN true;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_rollback_wait(shardid.shard_moves, timestamptz, interval) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_rollback_wait(shardid.shard_moves, timestamptz, interval) IS
    'Router, moves: whether a rollback that left something is to run its steps again, after 1 s: while its row is aborting, not cancelled, within node_timeout of since, and its source or target does not answer (a failover under way).';
