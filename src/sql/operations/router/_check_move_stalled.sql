-- Router, check_cluster() step 6: the moves in progress (rows of
-- shard_moves) that no live session and no live background job drives
-- (_move_stalled(): a restart of the router, a terminated session); in
-- their phases frozen and caught_up the shard refuses writes until the
-- move is finished (the fix) or rolled back (abort_move(), in the detail).
CREATE OR REPLACE FUNCTION shardid_internal._check_move_stalled(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'move_stalled', m.shard, m.source,
           pg_catalog.format('the %s move of shard %s from node "%s" to node "%s" is in phase %s, and no session or background job drives it (a restart, a terminated session)%s; the fix finishes it; to roll it back instead: CALL shardid.abort_move(%s);',
                             m.mode, m.shard, m.source, m.target, m.phase,
                             CASE WHEN m.phase IN ('frozen', 'caught_up') THEN ': the shard refuses writes until then' ELSE '' END,
                             m.shard),
           NULL::text,
           CASE WHEN m.phase = 'aborting' OR m.mode = 'offline'
                THEN pg_catalog.format('CALL shardid.abort_move(%s);', m.shard)
                ELSE pg_catalog.format('CALL shardid.move_shard(%s, %L);', m.shard, m.target) END
      FROM shardid.shard_moves AS m
     WHERE shardid_internal._move_stalled(m)
     ORDER BY m.shard
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_move_stalled(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_move_stalled(jsonb, jsonb) IS
    'Router, check_cluster(): move_stalled, a move in progress that no session and no background job drives, with the CALL that finishes it.';
