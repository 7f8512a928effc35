-- Router SQL: rebalance planning. The planner _rebalance_moves() is pure:
-- the tests give it nodes, shards, the node each counts on and its size;
-- rebalance_plan() gathers the same from the router's tables and (by_size)
-- from the nodes over dblink.
\set SHOW_CONTEXT never

-- By size: a holds 400 + 300 + 200 + 100 bytes, b 100, c was just added.
-- Step 1 moves a's 400 (nearest half of a - c = 1000) to c; step 2 a - b =
-- 500: 300 and 200 are as near to 250, the smaller goes. Then a = c = 400,
-- b = 300: moving 100 would not narrow a - b by its own size.
SELECT * FROM shardid_internal._rebalance_moves('by_size', NULL, '{a,b,c}',
    '{1,2,3,4,5}', '{a,a,a,a,b}', '{400,300,200,100,100}');
-- By count, the same shards: the highest-numbered shard of the fullest
-- node to the emptiest (equal loads: node names in order), until one apart.
SELECT * FROM shardid_internal._rebalance_moves('by_count', NULL, '{a,b,c}',
    '{1,2,3,4,5}', '{a,a,a,a,b}', '{400,300,200,100,100}');
-- by_count needs no sizes.
SELECT * FROM shardid_internal._rebalance_moves('by_count', NULL, '{a,b,c}',
    '{1,2,3,4,5,6}', '{a,a,a,b,b,b}', '{NULL,NULL,NULL,NULL,NULL,NULL}');

-- Ties. Nodes given in any order: a and b hold 200 each, so a (by name) is
-- the source; its shards 1 and 2 are as big: the higher number moves. Then
-- b = 200, a = c = 100: moving 100 from b would only swap the loads.
SELECT * FROM shardid_internal._rebalance_moves('by_size', NULL, '{c,b,a}',
    '{1,2,3,4}', '{a,a,b,b}', '{100,100,100,100}');
SELECT * FROM shardid_internal._rebalance_moves('by_count', NULL, '{c,b,a}',
    '{1,2,3,4}', '{a,a,b,b}', '{100,100,100,100}');

-- A node just added holds nothing: it receives, each node gives.
SELECT * FROM shardid_internal._rebalance_moves('by_count', NULL, '{a,b,new}',
    '{0,1,2,3,4,5}', '{a,a,a,b,b,b}', '{10,10,10,10,10,10}');
SELECT * FROM shardid_internal._rebalance_moves('by_size', NULL, '{a,b,new}',
    '{0,1,2,3,4,5}', '{a,a,a,b,b,b}', '{10,10,10,10,10,10}');

-- Nothing to do: balanced, a single node, no node, no shard.
SELECT * FROM shardid_internal._rebalance_moves('by_size', NULL, '{a,b}', '{1,2,3,4}', '{a,a,b,b}', '{100,100,100,100}');
SELECT * FROM shardid_internal._rebalance_moves('by_count', NULL, '{a,b,c}', '{1,2,3,4}', '{a,a,b,c}', '{100,5,100,100}');
SELECT * FROM shardid_internal._rebalance_moves('by_size', NULL, '{a}', '{1,2}', '{a,a}', '{100,100}');
SELECT * FROM shardid_internal._rebalance_moves('by_size', NULL, '{}', '{}', '{}', '{}');
SELECT * FROM shardid_internal._rebalance_moves('by_size', NULL, '{a,b}', '{}', '{}', '{}');
-- Within a tenth of the average node load (2050 / 2 / 10 = 102) by_size
-- stops: a - b = 50 is not worth the 20 byte shard's move. With a - b =
-- 150 it is (and 20 narrows it by 40).
SELECT * FROM shardid_internal._rebalance_moves('by_size', NULL, '{a,b}', '{1,2,3,4}', '{a,a,a,b}', '{1000,30,20,1000}');
SELECT * FROM shardid_internal._rebalance_moves('by_size', NULL, '{a,b}', '{1,2,3,4}', '{a,a,a,b}', '{1000,130,20,1000}');
-- A big shard is not moved for a small gain: a - b = 300, moving 250
-- would leave b - a = 200. Empty shards never move by size.
SELECT * FROM shardid_internal._rebalance_moves('by_size', NULL, '{a,b}', '{1,2,3}', '{a,a,b}', '{1000,250,950}');
SELECT * FROM shardid_internal._rebalance_moves('by_size', NULL, '{a,b}', '{1,2,3,4}', '{a,a,a,b}', '{0,0,0,0}');

-- max_moves: the first steps of the same plan.
SELECT * FROM shardid_internal._rebalance_moves('by_size', 1, '{a,b,c}',
    '{1,2,3,4,5}', '{a,a,a,a,b}', '{400,300,200,100,100}');
SELECT count(*) FROM shardid_internal._rebalance_moves('by_count', 0, '{a,b,new}',
    '{0,1,2,3,4,5}', '{a,a,a,b,b,b}', '{10,10,10,10,10,10}');

-- Pinned shards (in a move, frozen, excluded) load the node given for them
-- and never move. Shard 1 moving to c counts on c: only a -> b is left.
SELECT * FROM shardid_internal._rebalance_moves('by_size', NULL, '{a,b,c}',
    '{1,2,3,4,5}', '{c,a,a,a,b}', '{400,300,200,100,100}', pinned => '{1}');
-- Shard 1 kept on a: its 400 stay there, the others move.
SELECT * FROM shardid_internal._rebalance_moves('by_size', NULL, '{a,b,c}',
    '{1,2,3,4,5}', '{a,a,a,a,b}', '{400,300,200,100,100}', pinned => '{1}');
-- Every shard pinned: nothing.
SELECT count(*) FROM shardid_internal._rebalance_moves('by_count', NULL, '{a,b}', '{1,2,3}', '{a,a,a}', '{1,1,1}', pinned => '{1,2,3}');

-- A bigger plan: 60 shards of uneven sizes on three nodes, a fourth just
-- added. Replayed step by step: no shard moves twice, each move goes from
-- a node to another, and the gap between the fullest and the emptiest node
-- never widens.
CREATE TEMP TABLE rb_in AS
SELECT s AS shard, CASE WHEN s % 2 = 0 THEN 'n1' WHEN s % 4 = 1 THEN 'n2' ELSE 'n3' END AS node,
       ((s * 7919) % 997 + 3)::bigint * 1000 AS bytes
  FROM generate_series(0, 59) AS s;
CREATE TEMP TABLE rb_plan AS
SELECT * FROM shardid_internal._rebalance_moves('by_size', NULL, '{n1,n2,n3,n4}',
    (SELECT array_agg(shard ORDER BY shard) FROM rb_in),
    (SELECT array_agg(node ORDER BY shard) FROM rb_in),
    (SELECT array_agg(bytes ORDER BY shard) FROM rb_in));
SELECT count(*) AS moves, count(DISTINCT shard) AS shards, bool_and(source <> target) AS elsewhere,
       bool_and(step = rn) AS numbered
  FROM (SELECT *, row_number() OVER (ORDER BY step) AS rn FROM rb_plan) AS p;
-- the placement after each step: the range of the loads
WITH RECURSIVE states(step, place) AS (
    SELECT 0, (SELECT jsonb_object_agg(shard, node) FROM rb_in)
    UNION ALL
    SELECT p.step, s.place || jsonb_build_object(p.shard, p.target)
      FROM states AS s JOIN rb_plan AS p ON p.step = s.step + 1
), loads AS (
    SELECT s.step, n.node, COALESCE(sum(i.bytes), 0) AS load
      FROM states AS s CROSS JOIN unnest('{n1,n2,n3,n4}'::text[]) AS n(node)
      LEFT JOIN rb_in AS i ON s.place ->> i.shard::text = n.node
     GROUP BY s.step, n.node
), ranges AS (
    SELECT step, max(load) - min(load) AS spread FROM loads GROUP BY step
)
SELECT bool_and(r.spread <= prev.spread) AS never_wider,
       (SELECT spread FROM ranges WHERE step = 0) AS spread_before,
       (SELECT spread FROM ranges ORDER BY step DESC LIMIT 1) AS spread_after
  FROM ranges AS r JOIN ranges AS prev ON prev.step = r.step - 1;
-- by_count: n1 holds 30, n2 and n3 15 each: n1 gives 15 to n4
SELECT source, target, count(*) AS moves, min(step) AS first_step, max(step) AS last_step
  FROM shardid_internal._rebalance_moves('by_count', NULL, '{n1,n2,n3,n4}',
    (SELECT array_agg(shard ORDER BY shard) FROM rb_in),
    (SELECT array_agg(node ORDER BY shard) FROM rb_in),
    (SELECT array_agg(bytes ORDER BY shard) FROM rb_in))
 GROUP BY source, target;
DROP TABLE rb_in, rb_plan;

-- Refusals: strategy, max_moves, inconsistent input.
SELECT * FROM shardid_internal._rebalance_moves('by_disk_size', NULL, '{a}', '{}', '{}', '{}');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT * FROM shardid_internal._rebalance_moves(NULL, NULL, '{a}', '{}', '{}', '{}');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT * FROM shardid_internal._rebalance_moves('by_size', -1, '{a}', '{}', '{}', '{}');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT * FROM shardid_internal._rebalance_moves('by_size', NULL, '{a,b}', '{1,2}', '{a}', '{1,1}');
SELECT * FROM shardid_internal._rebalance_moves('by_size', NULL, '{a,b}', '{1,1}', '{a,b}', '{1,1}');
SELECT * FROM shardid_internal._rebalance_moves('by_size', NULL, '{a,b}', '{1,2}', '{a,x}', '{1,1}');
SELECT * FROM shardid_internal._rebalance_moves('by_size', NULL, '{a,b}', '{1,2}', '{a,b}', '{1,NULL}');
SELECT * FROM shardid_internal._rebalance_moves('by_size', NULL, '{a,b}', '{1,2}', '{a,b}', '{1,-1}');

-- rebalance_plan() on the router's tables.
SELECT shardid.rebalance_plan('by_disk_size');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT shardid.rebalance_plan('by_count', -2);
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT * FROM shardid.rebalance_plan('by_count');               -- no node: nothing
SELECT shardid.add_node('a', 'host=/nonexistent/a dbname=app');
SELECT shardid.add_node('b', 'host=/nonexistent/b dbname=app');
SELECT shardid.place_shards('a', 0, 5);
SELECT shardid.place_shards('b', 6, 7);
SELECT * FROM shardid.rebalance_plan('by_count');
SELECT shardid.add_node('c', 'host=/nonexistent/c dbname=app');  -- just added: it receives
SELECT * FROM shardid.rebalance_plan('by_count');
SELECT * FROM shardid.rebalance_plan('by_count', max_moves => 2);
SELECT * FROM shardid.rebalance_plan('by_count', excluded_shards => '{5,4}');
-- A node that accepts no shards (set_node(), issue 39): no plan moves a
-- shard onto it, and a rebalance moves its shards off first.
SELECT * FROM shardid.set_node('c', accepts_shards => false);
SELECT * FROM shardid.rebalance_plan('by_count');
SELECT * FROM shardid.drain_plan('b', 'by_count');             -- to a only
SELECT * FROM shardid.set_node('b', accepts_shards => false);
SELECT * FROM shardid.rebalance_plan('by_count');               -- b's shards to a
SELECT * FROM shardid.drain_plan('a', 'by_count');              -- nowhere to go
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT * FROM shardid.set_node('b');                            -- NULL keeps it
SELECT * FROM shardid.set_node('b', true);
SELECT * FROM shardid.set_node('c', accepts_shards => true);
SELECT * FROM shardid.set_node('nowhere', false);
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT * FROM shardid.set_node(NULL, false);
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
-- A move in progress: shard 5 is going to c; it counts there and stays out
-- of the plan. Rolled back, it counts on a again (and still stays put).
INSERT INTO shardid.shard_moves (shard, source, target, schema_name, mode, phase)
VALUES (5, 'a', 'c', 'shard_0005', 'online', 'copy');
SELECT * FROM shardid.rebalance_plan('by_count');
UPDATE shardid.shard_moves SET phase = 'aborting' WHERE shard = 5;
SELECT * FROM shardid.rebalance_plan('by_count');
DELETE FROM shardid.shard_moves;
-- A frozen shard stays put too.
SELECT shardid.freeze_shard(5);
SELECT * FROM shardid.rebalance_plan('by_count', 1);
SELECT shardid.unfreeze_shard(5);
-- by_size reads the sizes over dblink: without it, a clear refusal; an
-- unreachable node is named.
SELECT * FROM shardid.rebalance_plan();
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
CREATE EXTENSION dblink;
\set VERBOSITY terse
SELECT * FROM shardid.rebalance_plan('by_size');
\set VERBOSITY default
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;

-- by_size for real: the nodes are this database (two names for it), the
-- shards its schemas; shards 1 and 2 hold data, 0 and 3 none.
DELETE FROM shardid.shard_placement;
DELETE FROM shardid.nodes;
SELECT format('host=%s port=%s dbname=%s user=%s', split_part(current_setting('unix_socket_directories'), ',', 1),
              current_setting('port'), current_database(), current_user) AS self \gset
SELECT shardid.add_node('one', :'self');
SELECT shardid.add_node('two', :'self');
SELECT shardid.create_shards(0, 3);
CREATE TABLE public.rb_posts (id bigint PRIMARY KEY, body text);
SELECT shardid.create_table('public.rb_posts');
INSERT INTO shard_0001.rb_posts (body) SELECT repeat('x', 200) FROM generate_series(1, 2000);
INSERT INTO shard_0002.rb_posts (body) SELECT repeat('x', 200) FROM generate_series(1, 1500);
SELECT shardid.place_shards('one', 0, 3);
SELECT shard, node, bytes > 100000 AS data, bytes > 0 AS some FROM shardid.shard_sizes() ORDER BY shard;
-- one holds all: shard 1, the nearest to half of it, goes to two; then
-- two is the fuller and holds nothing that may move.
SELECT p.step, p.shard, p.source, p.target, p.bytes = s.bytes AS measured
  FROM shardid.rebalance_plan() AS p JOIN shardid.shard_sizes() AS s USING (shard);
SELECT step, shard, source, target, bytes IS NULL AS no_bytes FROM shardid.rebalance_plan('by_count');

-- CALL rebalance(): the move options are move_shard()'s, with its defaults
-- (but offline: an offline move needs a client to copy its rows).
SELECT substring(pg_get_function_arguments('shardid.rebalance'::regproc) FROM 'drop_old.*')
     = replace(substring(pg_get_function_arguments('shardid.move_shard'::regproc) FROM 'drop_old.*'),
               'IN offline boolean DEFAULT false, ', '') AS same_move_options;
CALL shardid.rebalance('by_disk_size');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
BEGIN;
CALL shardid.rebalance('by_count');                -- it commits: not in a transaction block
ROLLBACK;
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
-- One at a time: another session holds the rebalance lock (a row of
-- shardid.session_locks).
SELECT dblink_connect('other', :'self');
SELECT * FROM dblink('other', $$SELECT shardid_internal._session_lock('rebalance') IS NULL$$) AS t(locked boolean);
\set VERBOSITY terse
CALL shardid.rebalance('by_count');
\set VERBOSITY default
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
-- It is the one lock of every entry point (issue 35): a background job is
-- not started either (rebalance_start(), drain_node_start(): its worker
-- could not take it), 55P03 naming the session that holds it.
SELECT * FROM dblink('other', 'SELECT pg_backend_pid()') AS t(pid integer) \gset other_
SET regress.other_pid = :'other_pid';
DO $$
DECLARE
    call text;
    d    text;
BEGIN
    FOREACH call IN ARRAY ARRAY['SELECT shardid.rebalance_start(''by_count'')', 'SELECT shardid.drain_node_start(''one'')'] LOOP
        BEGIN
            EXECUTE call;
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
            RAISE NOTICE '%: % %: %', call, SQLSTATE, SQLERRM,
                replace(regexp_replace(d, ' \(role .*\)', ' (role ...)'), current_setting('regress.other_pid'), '<other>');
        END;
    END LOOP;
END
$$;
SELECT * FROM dblink('other', $$SELECT shardid_internal._session_unlock('rebalance')$$) AS t(unlocked boolean);
-- A role with no privileges on shardid's objects cannot block it (issue 27,
-- finding 5: in 0.2 any role could hold the fixed advisory key), nor take
-- its lock.
CREATE ROLE regress_rebalance_nobody LOGIN;
SELECT * FROM dblink('other', $$SET ROLE regress_rebalance_nobody; SELECT pg_try_advisory_lock(hashtext('shardid-rebalance'), 0)$$) AS t(locked boolean);
SELECT * FROM dblink('other', $$SELECT shardid_internal._session_lock('rebalance')$$) AS t(holder integer);
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT * FROM dblink('other', $$SELECT lock_name FROM shardid.session_locks FOR UPDATE$$) AS t(lock_name text);
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
CALL shardid.rebalance('by_count', max_moves => 0);
-- nor a background job (issue 35: rebalance_start() read that key, 55P03)
SELECT shardid.rebalance_start('by_count', max_moves => 0) IS NOT NULL AS started;
SELECT state, moves_done, last_error FROM shardid.rebalance_wait(timeout => '1 min');
-- not in the statement that starts it: its worker waits for that commit
SELECT * FROM shardid.rebalance_wait(shardid.rebalance_start('by_count', max_moves => 0));
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
-- A job is alive while the postmaster has its worker registered, never by
-- its start time: a row without a worker (as after a restart, or on a
-- promoted standby) is interrupted by the next rebalance, which resumes
-- the work; rebalance_resume() of an ended job does nothing.
INSERT INTO shardid.rebalance_jobs (kind, options, state) VALUES ('rebalance', '{}', 'starting');
SELECT state FROM shardid.rebalance_status();
-- A driver commits its job's end, then exits: one found gone after a
-- statement's snapshot may have ended the job since. The row as that
-- snapshot saw it is alive when the table's row has ended since (a new
-- snapshot reads it), never "interrupted" for a job that ended; not while
-- the row has not ended.
SELECT j AS seen FROM shardid.rebalance_jobs AS j WHERE state = 'starting' \gset
UPDATE shardid.rebalance_jobs SET state = 'stopped' WHERE state = 'starting';
SELECT shardid_internal._rebalance_job_alive(:'seen'::shardid.rebalance_jobs) AS seen_alive_ended_since;
UPDATE shardid.rebalance_jobs SET state = 'starting' WHERE state = 'stopped' AND job_id = (:'seen'::shardid.rebalance_jobs).job_id;
SELECT shardid_internal._rebalance_job_alive(:'seen'::shardid.rebalance_jobs) AS seen_alive_not_ended;
\set VERBOSITY terse
CALL shardid.rebalance('by_count', max_moves => 0);
\set VERBOSITY default
SELECT count(*) AS interrupted FROM shardid.rebalance_jobs WHERE state = 'interrupted' AND NOT in_session;
SELECT shardid.rebalance_resume() IS NULL AS nothing_to_resume;
DELETE FROM shardid.rebalance_jobs WHERE state = 'interrupted' AND NOT in_session;
-- Lock order: rebalance_resume(), the launcher and a new job hold SHARE
-- ROW EXCLUSIVE on the table, then lock a job's row. The driver
-- (_rebalance_job_begin(), _rebalance_job_step()) and rebalance_stop() lock
-- a job's row and update it later: each takes ROW EXCLUSIVE first (held
-- even when it updates nothing, as for this ended job), so that the others
-- wait for it instead of deadlocking with it.
SELECT max(job_id) AS ended_job FROM shardid.rebalance_jobs \gset
BEGIN;
SELECT shardid_internal._rebalance_job_begin(:ended_job) AS begins;
SELECT string_agg(mode, ', ' ORDER BY mode) AS job_begin_locks FROM pg_locks
 WHERE relation = 'shardid.rebalance_jobs'::regclass AND pid = pg_backend_pid() AND granted;
ROLLBACK;
BEGIN;
SELECT shardid.rebalance_stop(:ended_job) AS stopped;
SELECT string_agg(mode, ', ' ORDER BY mode) AS stop_locks FROM pg_locks
 WHERE relation = 'shardid.rebalance_jobs'::regclass AND pid = pg_backend_pid() AND granted;
ROLLBACK;
SELECT dblink_disconnect('other');
DROP ROLE regress_rebalance_nobody;
-- Nothing to move (every shard excluded), or no move allowed.
CALL shardid.rebalance('by_count', excluded_shards => '{0,1,2,3}');
CALL shardid.rebalance('by_count', max_moves => 0);
SELECT count(*) AS rebalance_locks FROM shardid.session_locks WHERE pid = pg_backend_pid();
-- Each CALL is a job of the one driver, run in this session (in_session),
-- recorded as the background jobs are.
SELECT kind, state, in_session, moves_done, worker_pid = pg_backend_pid() AS this_session
  FROM shardid.rebalance_jobs WHERE in_session ORDER BY job_id;
-- An offline move left in progress needs its client: refused, with a hint.
INSERT INTO shardid.shard_moves (shard, source, target, schema_name, mode, phase)
VALUES (2, 'one', 'two', 'shard_0002', 'offline', 'frozen');
CALL shardid.rebalance('by_count');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
-- A move is counted only when done: no move row left, placed on its target.
SELECT shardid_internal._require_move_done(2, 'two');
DELETE FROM shardid.shard_moves;
SELECT shardid_internal._require_move_done(2, 'two');
SELECT shardid_internal._require_move_done(2, 'one');
-- The first move fails (both nodes are this database: the target has the
-- shard already): the notice names the move, move_shard()'s error is
-- raised, the placement is unchanged; the session keeps the lock until a
-- rebalance in it ends.
\set VERBOSITY terse
CALL shardid.rebalance('by_count');
\set VERBOSITY default
SELECT shard, node FROM shardid.shard_placement ORDER BY shard;
SELECT count(*) AS rebalance_locks FROM shardid.session_locks WHERE pid = pg_backend_pid();
-- drain_node() fails alike, and has closed its node to new shards
\set VERBOSITY terse
CALL shardid.drain_node('one', 'by_count');
\set VERBOSITY default
SELECT node, accepts_shards FROM shardid.nodes ORDER BY node;
SELECT * FROM shardid.set_node('one', accepts_shards => true);
-- its job is over (the CALL failed): interrupted, and the next CALL marks it so
SELECT kind, state FROM shardid.rebalance_status();
CALL shardid.rebalance('by_count', max_moves => 0);
SELECT state FROM shardid.rebalance_jobs WHERE in_session ORDER BY job_id DESC LIMIT 2;
SELECT count(*) AS rebalance_locks FROM shardid.session_locks WHERE pid = pg_backend_pid();

-- a shard placed on a node whose registry does not have it
SELECT shardid.detach_shard(3);
SELECT * FROM shardid.rebalance_plan();
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;

-- Administrators only.
CREATE ROLE regress_rebalance_app;
SET ROLE regress_rebalance_app;
SELECT * FROM shardid.rebalance_plan('by_count');
SELECT * FROM shardid.shard_sizes();
CALL shardid.rebalance();
SELECT * FROM shardid.set_node('one', false);
RESET ROLE;
DROP ROLE regress_rebalance_app;

-- Clean up: this database is shared with the other regression tests.
SET client_min_messages = warning;
DROP SCHEMA shard_0003 CASCADE;
SELECT shardid.detach_shard(s) FROM generate_series(0, 2) AS s;
DROP SCHEMA shard_0000, shard_0001, shard_0002 CASCADE;
DELETE FROM shardid.sharded_tables;
DROP TABLE public.rb_posts;
RESET client_min_messages;
DELETE FROM shardid.shard_placement;
DELETE FROM shardid.nodes;
DROP EXTENSION dblink;
