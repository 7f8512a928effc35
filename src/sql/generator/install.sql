-- shardid, area generator: next_id(), and generators raised above rows
-- that arrived without them (logical replication, a data restore:
-- sync_generators()); the view shardid.generators reports the health of
-- every generator for dashboards and alerts (docs/monitoring.md), readable
-- by pg_monitor. Its C++ half is src/pg/next_id.cpp over src/core.

\ir next_id.sql
\ir _state_decode.sql
\ir _raise_generator.sql
\ir sync_generators.sql
\ir _failover_pending.sql
\ir _generator_states.sql
\ir generators.sql
