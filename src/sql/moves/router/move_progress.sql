-- The moves in progress as a DBA watches them: phase, tables ready, bytes
-- of this move's tables on the target and on the source, lag of its slot
-- in bytes, how long it has run, the last error, and the backend moving it
-- (its lock in shardid.session_locks; NULL when no live session holds the
-- move: interrupted, CALL it again or abort_move()). Figures are those of the last poll (updated_at).
CREATE OR REPLACE VIEW shardid.move_progress AS
SELECT m.shard, m.source, m.target, m.schema_name, m.mode, m.phase,
       m.tables_ready, m.tables_total, m.bytes_copied, m.bytes_total, m.lag_bytes,
       pg_catalog.now() OPERATOR(pg_catalog.-) m.started_at AS elapsed,
       m.frozen_at, m.repointed_at, m.updated_at, m.last_error,
       (SELECT l.pid FROM shardid.session_locks AS l
         WHERE l.lock_name OPERATOR(pg_catalog.=) ('move ' OPERATOR(pg_catalog.||) m.shard)
           AND EXISTS (SELECT FROM pg_catalog.pg_stat_activity AS a
                        WHERE a.pid OPERATOR(pg_catalog.=) l.pid
                          AND (a.backend_start OPERATOR(pg_catalog.=) l.backend_start OR a.backend_start IS NULL))) AS moved_by
  FROM shardid.shard_moves AS m;

GRANT SELECT ON shardid.move_progress TO PUBLIC;

COMMENT ON VIEW shardid.move_progress IS
    'Router: moves in progress: phase, tables ready/total, bytes copied/total, lag in bytes, elapsed time, last error, and the backend running the move (NULL: interrupted).';
