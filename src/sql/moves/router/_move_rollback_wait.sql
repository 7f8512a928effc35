-- Router, _move_rollback(): whether to run the rollback's steps again
-- after a pause of 1 s: the move failed because a node of it could not be
-- reached (cause: the failure's SQLSTATE, _node_unreachable), and the
-- steps just left something because a node could not be reached (outage:
-- what _move_rollback_steps returned). A node under an HA manager has no
-- primary from the moment its leader fails until the manager promotes a
-- replica (Patroni: up to ttl + loop_wait, 40 s by default;
-- docs/high-availability.md), and the rollback can finish only once it
-- answers again, on whichever member leads. True while the move's row is
-- still 'aborting' and since + node_timeout has not passed (last_error
-- then says until when the rollback retries); false when the rollback is
-- done, the move failed for another reason (a cancel, a refusal: what is
-- left waits for abort_move()), what is left is not an outage, or the
-- time is up: the row stays 'aborting' with what is left, for the job's
-- retry, the next move_shard() or abort_move(). A cancel during the pause
-- ends the wait, the rollback then 'cancelled'. Never raises.
CREATE OR REPLACE FUNCTION shardid_internal._move_rollback_wait(m shardid.shard_moves, since timestamptz, node_timeout interval,
                                                                cause text, outage boolean)
    RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    x     shardid.shard_moves;
    until timestamptz := since + node_timeout;
BEGIN
    IF NOT COALESCE(outage AND shardid_internal._node_unreachable(cause), false) OR node_timeout IS NULL THEN
        RETURN false;
    END IF;
    SELECT * INTO x FROM shardid.shard_moves AS r WHERE r.shard = m.shard;
    IF NOT FOUND OR x.phase <> 'aborting' OR x.move_id <> m.move_id OR x.last_error NOT LIKE 'rollback incomplete%'
       OR clock_timestamp() > until THEN
        RETURN false;
    END IF;
    UPDATE shardid.shard_moves AS r
       SET last_error = format('%s; retried until %s (a node does not answer)', x.last_error, date_trunc('second', until)),
           updated_at = clock_timestamp()
     WHERE r.shard = m.shard;
    BEGIN
        PERFORM pg_sleep(1);
    EXCEPTION WHEN query_canceled THEN
        UPDATE shardid.shard_moves AS r
           SET last_error = regexp_replace(x.last_error, '^rollback incomplete', 'rollback cancelled'), updated_at = clock_timestamp()
         WHERE r.shard = m.shard;
        RETURN false;
    END;
    RETURN true;
EXCEPTION WHEN query_canceled OR OTHERS THEN
    RETURN false;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_rollback_wait(shardid.shard_moves, timestamptz, interval, text, boolean) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_rollback_wait(shardid.shard_moves, timestamptz, interval, text, boolean) IS
    'Router, moves: whether a rollback is to run its steps again, after 1 s: when the move failed at an unreachable node and the steps left something at one (a failover under way), while its row is aborting and within node_timeout of since; never raises.';
