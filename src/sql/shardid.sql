-- shardid's install script: its areas, in the order they install. Each
-- area's install.sql lists its objects (one file each) in order; an area
-- calls only into itself, common/ and the areas before it (test/lint/run
-- checks it); router/ subfolders hold what runs on the router. make
-- assembles build/shardid--VERSION.sql from this file and the upgrade
-- script from src/sql/updates/PREV--VERSION.sql followed by every
-- function, procedure and view named here (src/sql/include.awk).
\ir common/install.sql
\ir layout/install.sql
\ir schema_changes/install.sql
\ir shards/install.sql
\ir generator/install.sql
\ir nodes/install.sql
\ir moves/install.sql
\ir rebalance/install.sql
\ir operations/install.sql
