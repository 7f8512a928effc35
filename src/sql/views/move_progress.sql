-- The moves in progress as a DBA watches them: phase, tables ready, bytes
-- of this move's tables on the target and on the source, lag of its slot
-- in bytes, how long it has run, the last error, and the backend moving it
-- (NULL when no session holds the move: interrupted, CALL it again or
-- abort_move()). Figures are those of the last poll (updated_at).
CREATE OR REPLACE VIEW shardid.move_progress AS
SELECT m.shard, m.source, m.target, m.schema_name, m.mode, m.phase,
       m.tables_ready, m.tables_total, m.bytes_copied, m.bytes_total, m.lag_bytes,
       pg_catalog.now() OPERATOR(pg_catalog.-) m.started_at AS elapsed,
       m.frozen_at, m.repointed_at, m.updated_at, m.last_error,
       (SELECT l.pid FROM pg_catalog.pg_locks AS l
         WHERE l.locktype OPERATOR(pg_catalog.=) 'advisory' AND l.granted
           AND l.database OPERATOR(pg_catalog.=) (SELECT d.oid FROM pg_catalog.pg_database AS d
                                                  WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database())
           AND l.classid OPERATOR(pg_catalog.=) pg_catalog.hashtext('shardid-move-shard')::oid
           AND l.objid OPERATOR(pg_catalog.=) m.shard::oid AND l.objsubid OPERATOR(pg_catalog.=) 2
         LIMIT 1) AS moved_by
  FROM shardid.shard_moves AS m;

GRANT SELECT ON shardid.move_progress TO PUBLIC;

COMMENT ON VIEW shardid.move_progress IS
    'Router: moves in progress: phase, tables ready/total, bytes copied/total, lag in bytes, elapsed time, last error, and the backend running the move (NULL: interrupted).';
