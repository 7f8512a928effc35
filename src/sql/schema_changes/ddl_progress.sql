-- apply_ddl()'s ledger as progress: one row per change, with how many of
-- its targets (template and shards on a node, nodes on the router) have
-- it, which are running (interrupted when no apply_ddl() session is on
-- this server: a re-CALL retries them first), and when it started, last
-- moved and was closed
-- (finished, or abandoned by abandon_ddl()), and the router's change it
-- was sent for.
CREATE OR REPLACE VIEW shardid.ddl_progress AS
    SELECT c.change_id, c.template, c.command, c.kind, c.concurrent, c.on_nodes,
           (SELECT count(*) FROM shardid.ddl_applied AS a WHERE a.change_id = c.change_id AND a.done) AS targets_done,
           CASE WHEN c.finished_at IS NOT NULL
                THEN (SELECT count(*) FROM shardid.ddl_applied AS a WHERE a.change_id = c.change_id AND a.done)
                WHEN c.on_nodes THEN (SELECT count(*) FROM shardid.nodes)
                ELSE 1 OPERATOR(pg_catalog.+) (SELECT count(*) FROM shardid.shard_registry) END AS targets_total,
           ARRAY(SELECT a.target FROM shardid.ddl_applied AS a
                  WHERE a.change_id = c.change_id AND NOT a.done AND c.finished_at IS NULL ORDER BY a.target) AS running,
           -- running targets while no apply_ddl() session is on this
           -- server: a cancel, a terminated session or a crash left them
           c.finished_at IS NULL
             AND EXISTS (SELECT FROM shardid.ddl_applied AS a WHERE a.change_id = c.change_id AND NOT a.done)
             AND NOT EXISTS (SELECT FROM pg_catalog.pg_stat_activity AS s
                              WHERE (s.application_name LIKE 'shardid apply\_ddl %' OR s.application_name = 'shardid_apply_ddl')
                                AND s.state IS DISTINCT FROM 'idle' AND s.pid <> pg_catalog.pg_backend_pid()) AS interrupted,
           c.requested_by, c.started_at,
           (SELECT max(a.applied_at) FROM shardid.ddl_applied AS a WHERE a.change_id = c.change_id) AS last_applied_at,
           c.finished_at,
           c.abandoned,
           c.origin
      FROM shardid.ddl_changes AS c;

GRANT SELECT ON shardid.ddl_progress TO PUBLIC;

COMMENT ON VIEW shardid.ddl_progress IS
    'apply_ddl() progress, one row per change: template, command, kind, CONCURRENTLY or not, on the nodes or here, targets done and in all, running targets (interrupted: no apply_ddl() session runs them), who, started, last applied, closed (finished_at, NULL while open), abandoned (closed by abandon_ddl()), origin (the router''s change it was sent for).';
