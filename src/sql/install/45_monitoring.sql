-- shardid install script, part 45: monitoring.
--
-- shardid.generators reports the health of every generator for dashboards
-- and alerts (docs/monitoring.md); readable by pg_monitor.
\ir ../functions/_failover_pending.sql
\ir ../functions/_generator_states.sql
\ir ../views/generators.sql
