-- shardid, area nodes, on the router (router/): the data nodes and the
-- placement of every logical shard.
--
-- On a router, shardid.nodes names the data nodes and shardid.shard_placement
-- says which node holds each logical shard (both in common/router/, which
-- the moves read too). Applications route with them (the shard maps of
-- clients/ read shardid.placement); a router needs only dblink (for moves)
-- and shardid. On a router that also has PL/Proxy, refresh_cluster() keeps
-- the PL/Proxy cluster 'shardid' as an SQL/MED server: one partition per
-- logical shard (partition number = shard number, max_shard + 1 of them, a
-- power of two as PL/Proxy requires), so proxy functions say
-- CLUSTER 'shardid'; RUN ON shardid.id_shard(i_id);  or  RUN ON i_shard;
-- Every function that changes the placement calls _refresh_proxy(), which
-- does nothing where PL/Proxy is not installed.
--
-- Why SQL/MED and not plproxy.get_cluster_*() functions: the server is
-- created at run time by add_node()/place_shards(), so CREATE EXTENSION
-- shardid needs no PL/Proxy on data nodes; it does not take over the
-- plproxy schema other clusters may use; and PL/Proxy reloads an SQL/MED
-- cluster on the catalog invalidation of ALTER SERVER, so every router
-- backend sees a new placement at its next transaction, with no version
-- query per call.
--
-- Partitions that must not be used get a connect string that fails before
-- any network traffic with a message naming the shard: libpq reports
--   definition of service "shardid: shard 17 is not placed on any node" not found
-- A frozen shard (being moved) keeps its node, read-only: writes fail with
-- SQLSTATE 25006 and can be retried once the move is done; reads go on.
--
-- Locking: every function that changes the placement takes SHARE ROW
-- EXCLUSIVE on shardid.shard_placement, so placement changes and their
-- ALTER SERVER are serialised. All functions are for administrators
-- (EXECUTE revoked from PUBLIC). add_node() and place_shards() refuse a
-- node that check_cluster() would report (_require_node()).
--
-- Secrets: connect strings never hold a password (add_node refuses one, a
-- CHECK enforces it): the foreign server's options are readable by every
-- role, and so is whatever pg_dump copies. Passwords belong in .pgpass (or a
-- passfile / service file) of the OS user that connects; libpq itself
-- parses them for the check (src/pg/connstr.cpp). shardid.nodes is
-- readable by administrators only; placement and shard_moves by everyone.

\ir router/placement.sql
\ir router/partition_connstrs.sql
\ir router/_proxy_diff.sql
\ir router/refresh_cluster.sql
\ir router/_refresh_partition.sql
\ir router/_refresh_proxy.sql
\ir router/add_node.sql
\ir router/set_node.sql
\ir router/remove_node.sql
\ir router/place_shards.sql
\ir router/unplace_shards.sql
\ir router/placed_shards.sql
\ir router/freeze_shard.sql
\ir router/unfreeze_shard.sql
\ir router/repoint_shard.sql
\ir router/_require_node.sql
