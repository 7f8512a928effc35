-- Router, the rebalance scheduler (_rebalance_job_step()): an offline
-- move left in progress that is not being rolled back stops the run
-- (55000), since its rows come from a client; the hint says how to
-- finish it or roll it back.
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_refuse_offline(m shardid.shard_moves) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF m.mode = 'offline' AND m.phase <> 'aborting' THEN
        RAISE EXCEPTION 'the offline move of shard % to node "%" is in progress (phase %)', m.shard, m.target, m.phase
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'An offline move copies the shard''s rows from a client; a rebalance or a drain cannot finish it.',
                  HINT = pg_catalog.format('Finish it with bin/shardid-move-shard --shard %s --to %s --offline, or roll it back with CALL shardid.abort_move(%s);',
                                           m.shard, m.target, m.shard);
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_refuse_offline(shardid.shard_moves) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_refuse_offline(shardid.shard_moves) IS
    'Router, the rebalance scheduler: raises 55000 for an offline move left in progress that is not being rolled back (a rebalance or a drain cannot finish it), with the hint that does.';
