-- examples/postgres_exporter/router_setup.sql: what router_queries.yaml
-- needs beyond pg_monitor. Run it once on the router, as a superuser:
--   psql -d app -f examples/postgres_exporter/router_setup.sql
-- It grants to pg_monitor, so that the exporter's role (a member of
-- pg_monitor) needs nothing else; grant to that role alone instead if other
-- members of pg_monitor should not see them. docs/monitoring.md explains.

-- shardid_rebalance: rebalance_status() reads shardid.rebalance_jobs and
-- shardid.rebalance_job_moves (the moves in flight), which are for
-- administrators (they name who started each job, and the options), and
-- asks whether a job's driver is alive through the functions after it
-- (each says only whether a process is there, or the job has ended).
GRANT SELECT ON shardid.rebalance_jobs, shardid.rebalance_job_moves TO pg_monitor;
GRANT EXECUTE ON FUNCTION shardid.rebalance_status(bigint),
                          shardid_internal._rebalance_job_alive(shardid.rebalance_jobs),
                          shardid_internal._rebalance_worker_alive(integer, bigint, timestamptz),
                          shardid_internal._backend_alive(integer, timestamptz),
                          shardid_internal._rebalance_job_ended(bigint) TO pg_monitor;

-- shardid_placement: whether each node accepts shards, from shardid.nodes
-- (administrators only); the column alone, not the connect strings.
GRANT SELECT (node, accepts_shards) ON shardid.nodes TO pg_monitor;

-- shardid_cluster: check_cluster() needs a superuser: it reads the connect
-- strings of shardid.nodes, and dblink lets only a superuser connect without
-- a password in the connect string (shardid's hold none). This function runs
-- it as its owner (the superuser running this script) and returns only the
-- kind, shard and node of each problem, not its detail or fix.
CREATE SCHEMA IF NOT EXISTS shardid_exporter;
CREATE OR REPLACE FUNCTION shardid_exporter.check_cluster()
    RETURNS TABLE (kind text, shard integer, node text)
    LANGUAGE sql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT c.kind, c.shard, c.node FROM shardid.check_cluster() AS c
$$;
REVOKE ALL ON FUNCTION shardid_exporter.check_cluster() FROM PUBLIC;
GRANT USAGE ON SCHEMA shardid_exporter TO pg_monitor;
GRANT EXECUTE ON FUNCTION shardid_exporter.check_cluster() TO pg_monitor;
