-- Router, move_shard(): the NOTICE that ends a CALL that did not fail,
-- from the move's last row m: an offline move waiting for its rows to be
-- copied (steps has 'waiting', with the row counts of both nodes), or the
-- move done, with its time since t_start, the cut-over and the window
-- writes were refused (up to t_routed, when this CALL repointed) and what
-- became of the old copy (old, NULL when it was dropped).
CREATE OR REPLACE FUNCTION shardid_internal._move_report(m shardid.shard_moves, t_start timestamptz, t_routed timestamptz,
                                                old text, steps jsonb) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF steps ? 'waiting' THEN
        RAISE NOTICE 'shard % is frozen on "%" for an offline move: copy its rows to "%", then CALL this again', m.shard, m.source, m.target
            USING DETAIL = format('Row counts on "%s": %s; on "%s": %s.', m.source, steps -> 'source', m.target, steps -> 'target'),
                  HINT = 'bin/shardid-move-shard --offline does it (the rows read on the source, written as the tables'' owners: shardid_internal._move_offline_load() and _move_offline_store()).';
        RETURN;
    END IF;
    RAISE NOTICE 'moved shard % from "%" to "%" in % ms%; old copy %', m.shard, m.source, m.target,
        round(date_part('epoch', clock_timestamp() - t_start) * 1000),
        CASE WHEN t_routed IS NOT NULL
             THEN format(' (cut-over from %s ms); writes refused for %s ms',
                         round(date_part('epoch', m.frozen_at - m.started_at) * 1000),
                         round(date_part('epoch', t_routed - m.frozen_at) * 1000))
             ELSE '' END,
        COALESCE(old, 'retired');
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_report(shardid.shard_moves, timestamptz, timestamptz, text, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_report(shardid.shard_moves, timestamptz, timestamptz, text, jsonb) IS
    'Router, moves: the NOTICE that ends a move_shard() CALL: an offline move waiting for its rows, or the move done with its timings.';
