-- Router SQL: nodes, placement, and the PL/Proxy cluster 'shardid'.
\set SHOW_CONTEXT never
CREATE EXTENSION IF NOT EXISTS plproxy;

-- Nodes: names and connect strings are checked.
SELECT shardid.add_node('a', 'host=/nonexistent/a port=5432 dbname=app');
SELECT shardid.add_node('b', 'host=/nonexistent/b port=5432 dbname=app');
SELECT shardid.add_node('a', 'host=elsewhere');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT shardid.add_node('-bad name', 'host=x');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT shardid.add_node('c', 'postgresql://x/app');
SELECT shardid.add_node('c', 'host=x options=''-c work_mem=1MB''');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT shardid.add_node('c', NULL);
-- No passwords: the cluster's options and pg_dump would show them (issue 10).
SELECT shardid.add_node('c', 'host=x password=secret dbname=app');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT shardid.add_node('c', 'host=x PASSWORD = ''se cret''');
\set VERBOSITY terse
INSERT INTO shardid.nodes (node, connstr) VALUES ('c', 'host=x password=secret');
\set VERBOSITY default
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
-- However it is spelled (issue 19): libpq parses the connect string, as
-- PL/Proxy's connections will, so quotes, spacing, case, URIs and a dbname
-- that is itself a connect string hide no password. The password never
-- shows in an error.
SELECT shardid.add_node('p1', 'host=x dbname=''password=hunter2 dbname=app''');
SELECT shardid.add_node('p2', 'host=x dbname=postgresql://u:hunter2@h/app');
SELECT shardid.add_node('p3', 'host=x dbname=''dbname=\''password=hunter2\''''');
SELECT shardid.add_node('p4', 'postgresql://u:hunter2@h/app');
SELECT shardid.add_node('p5', 'postgres://u:hunter2@h:5432/app?sslmode=disable');
SELECT shardid.add_node('p6', 'postgresql://h/app?password=hunter2');
SELECT shardid.add_node('p7', 'postgresql://h/app?pass%77ord=hunter2');
SELECT shardid.add_node('p8', E'password=hunter2\thost=x');
SELECT shardid.add_node('p9', E'host=x\n  password\t=\t''hun ter2''');
SELECT shardid.add_node('p10', 'host=x password=''''');
SELECT shardid.add_node('p11', 'host=x sslpassword=hunter2');
SELECT shardid.add_node('p12', 'host=x password=hunter2 password=');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
-- Not libpq's: keywords are lower case, every one has a value.
SELECT shardid.add_node('p13', 'host=x Password=hunter2');
SELECT shardid.add_node('p14', 'host=x password');
SELECT shardid.add_node('p15', 'host=x password=''hunter2');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
-- A dbname that libpq would read as a connect string is refused, password
-- or not (it could carry options); so is a URI.
SELECT shardid.add_node('p16', 'host=x dbname=''host=y port=5433''');
SELECT shardid.add_node('p17', 'postgresql://h/app');
-- The CHECK on shardid.nodes parses too.
\set VERBOSITY terse
INSERT INTO shardid.nodes (node, connstr) VALUES ('p98', 'host=x dbname=''password=hunter2 dbname=app''');
INSERT INTO shardid.nodes (node, connstr) VALUES ('p99', 'host=x sslpassword=hunter2');
\set VERBOSITY default
SELECT shardid.add_node('c', 'host=x passfile=/etc/shardid/pgpass dbname=app');   -- a passfile is fine
SELECT shardid.add_node('d', 'host=x application_name=''password=is not a keyword here''');
SELECT shardid.remove_node('d');
SELECT count(*) AS hunter2_anywhere
  FROM (SELECT connstr FROM shardid.nodes
        UNION ALL SELECT o.option_value FROM pg_foreign_server AS s, pg_options_to_table(s.srvoptions) AS o) AS t(v)
 WHERE v LIKE '%hunter2%';
SELECT shardid.remove_node('c');
SELECT node, connstr FROM shardid.nodes ORDER BY node;

-- The cluster exists as soon as a node does: one partition per shard, none placed.
SELECT srvname, fdwname, array_length(srvoptions, 1) AS options
  FROM pg_foreign_server s JOIN pg_foreign_data_wrapper w ON w.oid = s.srvfdw
 WHERE srvname = 'shardid';
SELECT count(*) AS user_mappings FROM pg_user_mappings WHERE srvname = 'shardid' AND usename = 'public';

-- Placement.
SELECT shardid.place_shards('a', 0, 3);
SELECT shardid.place_shards('b', 4, 5);
SELECT shardid.place_shards('a', 2, 3);      -- already there: nothing new
SELECT shardid.place_shards('a', 3, 4);      -- 4 is on b
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT shardid.place_shards('nowhere', 6, 6);
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT shardid.place_shards('a', 8191, 8192);
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT shardid.place_shards('a', 7, 6);
SELECT shard, node, frozen, moving_to, move_phase FROM shardid.placement ORDER BY shard;
SELECT shardid.placed_shards();

-- Partitions: placed shards get their node, the rest a connect string that
-- fails naming the shard.
SELECT * FROM shardid.partition_connstrs() WHERE shard IN (0, 4, 6, 8191) ORDER BY shard;
SELECT count(*) AS partitions FROM shardid.partition_connstrs();
SELECT o.option_name, o.option_value
  FROM pg_foreign_server s, pg_options_to_table(s.srvoptions) o
 WHERE s.srvname = 'shardid' AND o.option_name IN ('p3', 'p4', 'p6');
SELECT shardid.refresh_cluster() AS changed;     -- in sync already

-- A proxy function reaching an unplaced shard fails before any network use.
CREATE FUNCTION nodes_get(i_id bigint) RETURNS text AS $$
    CLUSTER 'shardid'; RUN ON shardid.id_shard(i_id); SELECT 'reached';
$$ LANGUAGE plproxy;
SELECT nodes_get(shardid.make_id('2024-01-01', 17, 0));

-- Freezing, for a move: read-only connect string; twice is refused.
SELECT shardid.freeze_shard(4);
SELECT connstr FROM shardid.partition_connstrs() WHERE shard = 4;
SELECT shardid.freeze_shard(4);
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT shardid.freeze_shard(6);
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT shardid.repoint_shard(5, 'a');            -- not frozen
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT shardid.repoint_shard(4, 'nowhere');
SELECT shardid.repoint_shard(4, 'a');
SELECT shard, node, frozen FROM shardid.placement WHERE shard = 4;
SELECT o.option_value FROM pg_foreign_server s, pg_options_to_table(s.srvoptions) o
 WHERE s.srvname = 'shardid' AND o.option_name = 'p4';
SELECT shardid.freeze_shard(5);
SELECT shardid.unfreeze_shard(5);
SELECT frozen FROM shardid.placement WHERE shard = 5;

-- A node holding shards cannot be removed; an empty one can.
SELECT shardid.remove_node('b');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT shardid.add_node('c', 'host=/nonexistent/c dbname=app');
SELECT shardid.remove_node('c');
SELECT shardid.remove_node('c');

-- Un-placing: the partition fails naming the shard again; the cluster
-- is in step (refresh_cluster() changes nothing). Placed back as it was.
SELECT shardid.unplace_shards(5, 5) AS unplaced;
SELECT o.option_value FROM pg_foreign_server s, pg_options_to_table(s.srvoptions) o
 WHERE s.srvname = 'shardid' AND o.option_name = 'p5';
SELECT shardid.refresh_cluster() AS changed;
SELECT shardid.place_shards('b', 5, 5);

-- Administrators only.
CREATE ROLE regress_nodes_app;
SET ROLE regress_nodes_app;
SELECT shardid.place_shards('a', 9, 9);
SELECT count(*) FROM shardid.placement;
SELECT count(*) FROM shardid.nodes;              -- connect strings: administrators only
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT count(*) FROM shardid.shard_moves;
SELECT array_agg(attname ORDER BY attnum) AS placement_columns FROM pg_attribute
 WHERE attrelid = 'shardid.placement'::regclass AND attnum > 0;
SELECT shardid.freeze_shard_tables('public', 1, 'b');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
RESET ROLE;

-- Moves in progress: repoint_shard() takes a caught-up move to its target
-- only, and marks it repointed in the same transaction.
INSERT INTO shardid.shard_moves (shard, source, target, schema_name, mode, phase)
VALUES (1, 'a', 'b', 'shard_0001', 'online', 'copy');
SELECT shardid.repoint_shard(1, 'b');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
UPDATE shardid.shard_moves SET phase = 'caught_up' WHERE shard = 1;
SELECT shardid.repoint_shard(1, 'a');            -- not the move's target
SELECT shard, node, frozen, moving_to, move_phase FROM shardid.placement WHERE shard = 1;
SELECT shardid.repoint_shard(1, 'b');
SELECT shard, node, frozen, moving_to, move_phase FROM shardid.placement WHERE shard = 1;
SELECT o.option_value FROM pg_foreign_server s, pg_options_to_table(s.srvoptions) o
 WHERE s.srvname = 'shardid' AND o.option_name = 'p1';
DELETE FROM shardid.shard_moves;
\set VERBOSITY terse
INSERT INTO shardid.shard_moves (shard, source, target, schema_name, mode, phase)
VALUES (2, 'a', 'a', 's', 'online', 'copy');     -- a move goes somewhere else
INSERT INTO shardid.shard_moves (shard, source, target, schema_name, mode, phase)
VALUES (2, 'a', 'b', 's', 'online', 'done');     -- not a phase
\set VERBOSITY default

-- Node side of a move: freezing the tables of a shard whose schema name has
-- a quote, a semicolon and capitals; writes fail with 25006 at once.
CREATE SCHEMA "Shard'; DROP TABLE x; --";
CREATE TABLE "Shard'; DROP TABLE x; --"."Posts" (id bigint PRIMARY KEY);
CREATE TABLE "Shard'; DROP TABLE x; --".likes (id bigint);
CREATE SEQUENCE "Shard'; DROP TABLE x; --".id_seq;
SELECT shardid.freeze_shard_tables('Shard''; DROP TABLE x; --', 9, 'b');
SELECT shardid.freeze_shard_tables('Shard''; DROP TABLE x; --', 9, 'b');   -- again: nothing more
SELECT count(*) AS frozen_triggers FROM pg_trigger WHERE tgname = 'shardid_move_frozen';
INSERT INTO "Shard'; DROP TABLE x; --"."Posts" VALUES (1);
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT shardid.unfreeze_shard_tables('Shard''; DROP TABLE x; --');
INSERT INTO "Shard'; DROP TABLE x; --"."Posts" VALUES (1);
-- Retiring it: detached, renamed, writes refused.
SELECT shardid.attach_shard(9, 'Shard''; DROP TABLE x; --');
SELECT shardid.freeze_shard_tables('Shard''; DROP TABLE x; --', 9, 'b');
SELECT shardid.retire_shard(9, 'b', 'Old''; Shard');
SELECT count(*) AS registered FROM shardid.shard_registry WHERE shard = 9;
SELECT tgname, tgrelid::regclass FROM pg_trigger WHERE tgname LIKE 'shardid%' ORDER BY 2::text;
INSERT INTO "Old'; Shard"."Posts" VALUES (2);
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT shardid.attach_shard(9, 'Old''; Shard');
SELECT shardid.retire_shard(9, 'b', NULL);     -- dropped
SELECT count(*) AS schemas FROM pg_namespace WHERE nspname LIKE '%Shard';

DROP ROLE regress_nodes_app;

-- A retired copy refuses writes.
CREATE TABLE nodes_retired (x int);
CREATE TRIGGER shardid_retired BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON nodes_retired
    FOR EACH STATEMENT EXECUTE FUNCTION shardid_internal._refuse_retired_write('5', 'b');
INSERT INTO nodes_retired VALUES (1);
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
DROP TABLE nodes_retired;

-- Clean up: this database is shared with the other regression tests.
DROP FUNCTION nodes_get(bigint);
DELETE FROM shardid.shard_moves;
DELETE FROM shardid.shard_placement;
DELETE FROM shardid.nodes;
DROP SERVER shardid CASCADE;
DROP EXTENSION plproxy;

-- PL/Proxy is optional on a router: without it nodes and placement are
-- kept (no cluster); installed later, refresh_cluster() builds the
-- cluster from the placement, and placement changes keep it in step.
SELECT shardid.add_node('a', 'host=/nonexistent/a dbname=app');
SELECT shardid.add_node('b', 'host=/nonexistent/b dbname=app');
SELECT shardid.place_shards('a', 0, 3), shardid.place_shards('b', 4, 5);
SELECT shardid.freeze_shard(4);
SELECT count(*) AS foreign_servers FROM pg_foreign_server;
SELECT shardid.refresh_cluster();
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
CREATE EXTENSION plproxy;
SELECT shardid.refresh_cluster() AS partitions;
SELECT o.option_name, o.option_value
  FROM pg_foreign_server AS s, pg_options_to_table(s.srvoptions) AS o
 WHERE s.srvname = 'shardid' AND o.option_name IN ('p0', 'p4', 'p6') ORDER BY 1;
SELECT shardid.unfreeze_shard(4);
SELECT shardid.place_shards('b', 6, 6);
SELECT o.option_name, o.option_value
  FROM pg_foreign_server AS s, pg_options_to_table(s.srvoptions) AS o
 WHERE s.srvname = 'shardid' AND o.option_name IN ('p4', 'p6') ORDER BY 1;
-- check_cluster() (it needs dblink) compares the cluster with the
-- placement: in step, nothing; partitions changed by hand are reported
-- once, with the first of them and the fix, which puts them back. The
-- nodes here cannot be reached: those rows are left out.
CREATE EXTENSION dblink;
SELECT count(*) AS out_of_step FROM shardid.check_cluster() WHERE kind = 'proxy_out_of_step';
ALTER SERVER shardid OPTIONS (SET p6 'host=/nonexistent/elsewhere dbname=app', SET p4 'host=/nonexistent/elsewhere dbname=app');
-- (what refresh_cluster() would change, as check_cluster() counts it)
SELECT option_name, shard, action, connstr FROM shardid_internal._proxy_diff();
SELECT kind, shard, node, detail, fix FROM shardid.check_cluster() WHERE kind <> 'node_unreachable';
SELECT fix AS proxy_fix FROM shardid.check_cluster() WHERE kind = 'proxy_out_of_step' \gset
:proxy_fix
SELECT count(*) AS out_of_step FROM shardid.check_cluster() WHERE kind = 'proxy_out_of_step';
SELECT o.option_name, o.option_value
  FROM pg_foreign_server AS s, pg_options_to_table(s.srvoptions) AS o
 WHERE s.srvname = 'shardid' AND o.option_name IN ('p4', 'p6') ORDER BY 1;
-- Without the cluster (dropped by hand), every partition is out of step;
-- the fix makes it again.
DROP SERVER shardid CASCADE;
SELECT kind, shard, node, detail, fix FROM shardid.check_cluster() WHERE kind = 'proxy_out_of_step';
SELECT shardid.refresh_cluster() > 0 AS rebuilt;
SELECT count(*) AS out_of_step FROM shardid.check_cluster() WHERE kind = 'proxy_out_of_step';
DROP EXTENSION dblink;
DELETE FROM shardid.shard_placement;
DELETE FROM shardid.nodes;
DROP SERVER shardid CASCADE;
DROP EXTENSION plproxy;
