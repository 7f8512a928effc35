-- Router SQL: check_cluster() and what add_node() and place_shards()
-- refuse of a node, with databases of this server as the nodes: a and b
-- hold shards, c only the extension and the template, nox no shardid,
-- odd another layout, old shardid 0.2, locked shardid read by a role that
-- may not (its sessions run as regress_cc_reader).
\set SHOW_CONTEXT never
CREATE EXTENSION dblink;
SELECT current_database() AS regress_db,
       pg_catalog.format('host=%s port=%s user=%s dbname=',
                         pg_catalog.split_part(current_setting('unix_socket_directories'), ',', 1),
                         current_setting('port'), current_user) AS base \gset
CREATE DATABASE regress_cc_a;
CREATE DATABASE regress_cc_b;
CREATE DATABASE regress_cc_c;
CREATE DATABASE regress_cc_nox;
CREATE DATABASE regress_cc_odd;
CREATE DATABASE regress_cc_old;
CREATE DATABASE regress_cc_locked;
CREATE ROLE regress_cc_reader;
\c regress_cc_a
SET client_min_messages = warning;
CREATE EXTENSION shardid;
CREATE TABLE public.posts (id bigint PRIMARY KEY, body text NOT NULL);
SELECT shardid.create_shards(0, 3);
SELECT shardid.create_table('public.posts');
\c regress_cc_b
SET client_min_messages = warning;
CREATE EXTENSION shardid;
CREATE TABLE public.posts (id bigint PRIMARY KEY, body text NOT NULL);
SELECT shardid.create_shards(4, 5);
SELECT shardid.create_table('public.posts');
\c regress_cc_c
SET client_min_messages = warning;
CREATE EXTENSION shardid;
CREATE TABLE public.posts (id bigint PRIMARY KEY, body text NOT NULL);
SELECT shardid.create_table('public.posts');
\c regress_cc_odd
SET client_min_messages = warning;
CREATE EXTENSION shardid;
SELECT epoch, shard_bits, seq_bits FROM shardid.configure('2020-01-01 00:00:00+00', 12, 11);
\c regress_cc_old
SET client_min_messages = warning;
CREATE EXTENSION shardid VERSION '0.2';
\c regress_cc_locked
SET client_min_messages = warning;
CREATE EXTENSION shardid;
\c :regress_db
ALTER DATABASE regress_cc_locked SET role = regress_cc_reader;
-- check_cluster()'s fixes, to be run where run_on says: on the router as
-- they are (\gexec), on a node over dblink (pg_temp.on_node()).
CREATE FUNCTION pg_temp.on_node(node text, fix text) RETURNS text LANGUAGE sql
    AS $$ SELECT string_agg(t.result, ', ') FROM dblink((SELECT n.connstr FROM shardid.nodes AS n WHERE n.node = on_node.node), fix) AS t(result text) $$;
CREATE TEMP VIEW fixes AS
    SELECT c.kind, c.node, CASE WHEN c.run_on IS NULL THEN c.fix
                                ELSE pg_catalog.format('SELECT pg_temp.on_node(%L, %L)', c.run_on, c.fix) END AS fix
      FROM shardid.check_cluster() AS c WHERE c.fix IS NOT NULL AND c.fix NOT LIKE '--%';

-- add_node() refuses a node it cannot reach, one without shardid, one with
-- another layout; force => true registers it anyway (bootstrap order).
\set VERBOSITY terse
SELECT shardid.add_node('gone', 'host=/nonexistent/gone dbname=app');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
\set VERBOSITY default
SELECT shardid.add_node('nox', :'base' || 'regress_cc_nox');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT shardid.add_node('odd', :'base' || 'regress_cc_odd');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT count(*) AS nodes FROM shardid.nodes;
SELECT shardid.add_node('a', :'base' || 'regress_cc_a');
SELECT shardid.add_node('b', :'base' || 'regress_cc_b');
SELECT shardid.add_node('c', :'base' || 'regress_cc_c');

-- place_shards() refuses shards the node does not hold; force places them.
SELECT shardid.place_shards('a', 0, 5);
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT shardid.place_shards('c', 0, 0);
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT shardid.place_shards('a', 0, 3), shardid.place_shards('b', 4, 5);

-- A healthy cluster: nothing.
SELECT * FROM shardid.check_cluster();

-- Shard 2 made live on b too (created there by hand): the copy b has is
-- reported, with the command that retires it.
SELECT * FROM dblink(:'base' || 'regress_cc_b', 'SELECT shardid.create_shard(2)') AS t(s name);
SELECT kind, shard, node, detail, regexp_replace(fix, '_moved_[0-9]+', '_moved_<ms>') AS fix FROM shardid.check_cluster();
-- Fixed as it says: nothing left.
SELECT * FROM dblink(:'base' || 'regress_cc_b', 'SELECT shardid.retire_shard(2, ''a'', ''shard_0002_moved_1700000000000'')') AS t(s name);
SELECT * FROM shardid.check_cluster();

-- The retired copy is listed (retire_shard() recorded it, when), is no
-- generator of shard 2 on b, and is dropped by drop_retired_copies() once
-- older than older_than.
SELECT node, shard, schema_name, moved_to, retired_at > now() - interval '1 hour' AS recent, bytes > 0 AS has_bytes,
       recorded, droppable, reason
  FROM shardid.retired_copies;
SELECT * FROM dblink(:'base' || 'regress_cc_b', 'SELECT schema, shard FROM shardid.generators ORDER BY shard') AS t(s name, shard integer);
CALL shardid.drop_retired_copies('100 years');
SELECT count(*) AS retired FROM shardid.retired_copies;
CALL shardid.drop_retired_copies(older_than => '-1 s');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
CALL shardid.drop_retired_copies();
SELECT count(*) AS retired FROM shardid.retired_copies;
SELECT * FROM dblink(:'base' || 'regress_cc_b', 'SELECT count(*) FROM pg_namespace WHERE nspname LIKE ''shard\_%\_moved\_%''') AS t(n bigint);
-- Only retired copies: a live shard's schema is refused on the node.
SELECT * FROM dblink(:'base' || 'regress_cc_b', 'SELECT shardid_internal._drop_retired_copy(''shard_0004'')') AS t(r jsonb);

-- A placement where the shard is not: on another node, and on none.
-- A shard a node holds and no node is placed on.
SELECT * FROM dblink(:'base' || 'regress_cc_c', 'SELECT shardid.create_shard(6)') AS t(s name);
SELECT shardid.place_shards('a', 6, 7, force => true);
SELECT * FROM dblink(:'base' || 'regress_cc_c', 'SELECT shardid.create_shard(8)') AS t(s name);
SELECT * FROM shardid.check_cluster();
DELETE FROM shardid.shard_placement WHERE shard IN (6, 7);
SELECT * FROM dblink(:'base' || 'regress_cc_c', 'SELECT shardid.detach_shard(6), shardid.detach_shard(8)') AS t(a name, b name);
SELECT * FROM dblink(:'base' || 'regress_cc_c', 'DROP SCHEMA shard_0006, shard_0008 CASCADE') AS t(s text);

-- A template that differs (a column on b only) and one missing (c has not
-- registered a second sharded table).
SELECT * FROM dblink(:'base' || 'regress_cc_a', 'CREATE TABLE public.likes (id bigint PRIMARY KEY); SELECT shardid.create_table(''public.likes'')') AS t(s text);
SELECT * FROM dblink(:'base' || 'regress_cc_b', 'CREATE TABLE public.likes (id bigint PRIMARY KEY); SELECT shardid.create_table(''public.likes'')') AS t(s text);
SELECT * FROM dblink(:'base' || 'regress_cc_b', 'ALTER TABLE public.posts ADD COLUMN mood text') AS t(s text);
SELECT * FROM shardid.check_cluster();
SELECT * FROM dblink(:'base' || 'regress_cc_b', 'ALTER TABLE public.posts DROP COLUMN mood') AS t(s text);
SELECT * FROM dblink(:'base' || 'regress_cc_c', 'CREATE TABLE public.likes (id bigint PRIMARY KEY); SELECT shardid.create_table(''public.likes'')') AS t(s text);
SELECT * FROM shardid.check_cluster();

-- Leftovers of a move that is not in progress: a publication named like
-- a move's, a role, shardid's freeze triggers.
SELECT * FROM dblink(:'base' || 'regress_cc_a',
    'SET client_min_messages = error; CREATE PUBLICATION shardid_move_1_1700000000000 FOR TABLES IN SCHEMA shard_0001') AS t(s text);
CREATE ROLE shardid_move_1_1700000000000;
SELECT * FROM dblink(:'base' || 'regress_cc_a', 'SELECT shardid.freeze_shard_tables(''shard_0003'', 3, ''b'', true)') AS t(n integer);
SELECT * FROM shardid.check_cluster();
-- While a move of shard 1 with that ID is in progress, its publication
-- and role are its own.
INSERT INTO shardid.shard_moves (shard, move_id, source, target, schema_name, mode, phase)
VALUES (1, 1700000000000, 'a', 'c', 'shard_0001', 'online', 'copy');
SELECT kind, shard, node FROM shardid.check_cluster();
DELETE FROM shardid.shard_moves;
-- Fixed as it says, each where run_on says.
SELECT fix FROM fixes \gexec
SELECT * FROM shardid.check_cluster();

-- An apply_ddl() from the router left unfinished: node a's copy of shard 2
-- refuses it (after a's template and shards 0 and 1 committed), so the
-- router's ledger and a's are both unfinished (b and c are not reached).
-- Each is reported with the re-CALL that finishes it; a's template, now
-- ahead of b's and c's, differs meanwhile.
SELECT * FROM dblink(:'base' || 'regress_cc_a', 'ALTER TABLE shard_0002.posts ADD COLUMN tags text') AS t(s text);
SET client_min_messages = warning;
\set VERBOSITY terse
CALL shardid.apply_ddl('public.posts', 'ALTER TABLE %s ADD COLUMN tags text[]', 1);
\set VERBOSITY default
RESET client_min_messages;
SELECT kind, shard, node, regexp_replace(detail, 'started .*, is', 'started <t>, is') AS detail, fix
  FROM shardid.check_cluster();
-- Fixed as it says: the column that was in the way dropped, the router's
-- fix run as check_cluster() gives it; that finishes a's change too.
SELECT * FROM dblink(:'base' || 'regress_cc_a', 'ALTER TABLE shard_0002.posts DROP COLUMN tags') AS t(s text);
SET client_min_messages = warning;
SELECT fix FROM fixes WHERE kind = 'ddl_unfinished' AND node IS NULL \gexec
RESET client_min_messages;
SELECT * FROM shardid.check_cluster();
SELECT * FROM dblink(:'base' || 'regress_cc_a', 'SELECT count(*) FROM shardid.ddl_changes WHERE finished_at IS NULL') AS t(unfinished bigint);

-- Nodes that cannot be read, and a layout that differs: forced in, reported.
-- A node with an older shardid (0.2) is read no further either; add_node()
-- does not compare versions. A node that answers but cannot be read (its
-- role may not execute shardid's functions there) is not "unreachable":
-- the detail carries its error and SQLSTATE.
SELECT shardid.add_node('gone', 'host=/nonexistent/gone dbname=app', force => true);
SELECT shardid.add_node('locked', :'base' || 'regress_cc_locked', force => true);
SELECT shardid.add_node('nox', :'base' || 'regress_cc_nox', force => true);
SELECT shardid.add_node('odd', :'base' || 'regress_cc_odd', force => true);
SELECT shardid.add_node('old', :'base' || 'regress_cc_old');
SELECT extversion = '0.2' AS old_is_0_2 FROM dblink(:'base' || 'regress_cc_old', 'SELECT extversion FROM pg_extension WHERE extname = ''shardid''') AS t(extversion text);
SELECT kind, shard, node, regexp_replace(detail, 'connection to server.*', 'connection to server ...') AS detail, fix
  FROM shardid.check_cluster();
-- Every fix run where run_on says (the advice of node_unreachable and
-- node_unreadable is a comment): each node is read now (nox with the
-- extension, odd with the router's layout, old updated) and, holding only
-- the extension (no template, no shard), is not wrong.
SELECT fix FROM fixes \gexec
SELECT kind, shard, node FROM shardid.check_cluster();
-- A node ahead of the router (as if updated first to a 0.10, faked in its
-- catalog: numbered, not spelled, 0.10 is newer than 0.3): there is no
-- downgrade, the fix is the router's update.
SELECT dblink_exec(:'base' || 'regress_cc_old', 'UPDATE pg_extension SET extversion = ''0.10'' WHERE extname = ''shardid''');
SELECT kind, shard, node, detail, fix FROM shardid.check_cluster() WHERE node = 'old';
SELECT shardid.remove_node('gone'), shardid.remove_node('locked'), shardid.remove_node('nox'), shardid.remove_node('odd'), shardid.remove_node('old');
SELECT * FROM shardid.check_cluster();

-- drain_plan(): a's shards, each to the then emptiest other node (b holds
-- 2, c none; ties by name); a shard frozen on the router stays.
SELECT * FROM shardid.drain_plan('a', 'by_count');
SELECT shardid.freeze_shard(3);
SELECT step, shard, source, target, bytes > 0 AS has_bytes FROM shardid.drain_plan('a');
SELECT shardid.unfreeze_shard(3);
SELECT * FROM shardid.drain_plan('c', max_moves => 1);
SELECT * FROM shardid.drain_plan('nowhere');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
BEGIN;
CALL shardid.drain_node('a');
ROLLBACK;
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;

-- Every fix check_cluster() prints, run where run_on says; each kind is
-- gone afterwards. Shards: 9 live on b and c and placed nowhere (placed on
-- the first, then the other copy retired), 10 placed on b but held by c,
-- 11 placed on b and held nowhere (made there, empty), 12 held by c and
-- placed nowhere.
SELECT * FROM dblink(:'base' || 'regress_cc_b', 'SELECT shardid.create_shard(9)') AS t(s name);
SELECT * FROM dblink(:'base' || 'regress_cc_c', 'SELECT shardid.create_shard(9), shardid.create_shard(10), shardid.create_shard(12)') AS t(a name, b name, c name);
SELECT shardid.place_shards('b', 10, 11, force => true);
SELECT kind, shard, node, detail, run_on, fix FROM shardid.check_cluster();
SELECT fix FROM fixes \gexec
SELECT kind, shard, node, detail, run_on, regexp_replace(fix, '_moved_[0-9]+', '_moved_<ms>') AS fix FROM shardid.check_cluster();
\set ECHO none
\o /dev/null
SELECT fix FROM fixes \gexec
\o
\set ECHO all
SELECT * FROM shardid.check_cluster();
SELECT shard, node FROM shardid.shard_placement WHERE shard >= 9 ORDER BY shard;

-- Templates: tags on a and b, not registered on c (the detail says to
-- make the table there first: the fix registers it); likes differs on b
-- (the fix is advice, a comment: it does nothing).
SELECT * FROM dblink(:'base' || 'regress_cc_a', 'CREATE TABLE public.tags (id bigint PRIMARY KEY); SELECT shardid.create_table(''public.tags'')') AS t(s text);
SELECT * FROM dblink(:'base' || 'regress_cc_b', 'CREATE TABLE public.tags (id bigint PRIMARY KEY); SELECT shardid.create_table(''public.tags'')') AS t(s text);
SELECT * FROM dblink(:'base' || 'regress_cc_b', 'ALTER TABLE public.likes ADD COLUMN n integer') AS t(s text);
SELECT kind, shard, node, detail, run_on, fix FROM shardid.check_cluster();
SELECT * FROM dblink(:'base' || 'regress_cc_c', 'CREATE TABLE public.tags (id bigint PRIMARY KEY)') AS t(s text);
SELECT fix FROM fixes \gexec
SELECT kind, shard, node FROM shardid.check_cluster();
-- (b's copies now have n too: the copy_differs fixes gave them the
-- template's column; the template and its copies drop it together)
SELECT * FROM dblink(:'base' || 'regress_cc_b', 'CALL shardid.apply_ddl(''public.likes'', ''ALTER TABLE %s DROP COLUMN n'')') AS t(s text);
SELECT * FROM shardid.check_cluster();

-- A role that may only create in node a's database names a publication
-- like a move's, with a newline and a command after it (issue 35): it is
-- unsafe_name, with the name escaped in the detail and no fix; no fix of
-- any row holds a control character, and running them all makes no one a
-- superuser. Beside it, leftovers whose fixes run: a subscription and a
-- role named like a move's, shardid's freeze triggers.
CREATE ROLE regress_cc_app;
SELECT * FROM dblink(:'base' || 'regress_cc_a', 'GRANT CREATE ON DATABASE regress_cc_a TO regress_cc_app') AS t(s text);
SELECT * FROM dblink(:'base' || 'regress_cc_a',
    format('SET ROLE regress_cc_app; CREATE PUBLICATION %I', 'shardid_move_1_2' || E'\n' || 'ALTER ROLE regress_cc_app SUPERUSER; --')) AS t(s text);
SELECT * FROM dblink(:'base' || 'regress_cc_a',
    'CREATE SUBSCRIPTION shardid_move_2_1700000000000 CONNECTION ''dbname=regress_cc_nowhere'' PUBLICATION p WITH (connect = false)') AS t(s text);
CREATE ROLE shardid_move_3_1700000000000;
SELECT * FROM dblink(:'base' || 'regress_cc_a', 'SELECT shardid.freeze_shard_tables(''shard_0003'', 3, ''b'', true)') AS t(n integer);
SELECT kind, shard, node, detail, run_on, fix FROM shardid.check_cluster();
SELECT count(*) AS fixes_with_control_characters FROM shardid.check_cluster() WHERE fix ~ '[[:cntrl:]]';
SELECT fix FROM fixes \gexec
SELECT kind, shard, node, run_on, fix FROM shardid.check_cluster();
SELECT rolsuper FROM pg_roles WHERE rolname = 'regress_cc_app';
-- removed by hand, as the detail says
SELECT * FROM dblink(:'base' || 'regress_cc_a',
    format('DROP PUBLICATION %I', 'shardid_move_1_2' || E'\n' || 'ALTER ROLE regress_cc_app SUPERUSER; --')) AS t(s text);
SELECT * FROM shardid.check_cluster();

-- An apply_ddl() from the router with a newline in a literal of its
-- command, left unfinished (a's copy of shard 1 refuses it): unsafe_name
-- on the router and on a, each fix finishing the change by its ID, the
-- command not in it. The router's fix finishes a's change too.
SELECT * FROM dblink(:'base' || 'regress_cc_a', 'ALTER TABLE shard_0001.posts ADD COLUMN note text') AS t(s text);
SET client_min_messages = warning;
\set VERBOSITY terse
CALL shardid.apply_ddl('public.posts', E'ALTER TABLE %s ADD COLUMN note text DEFAULT ''x\nALTER ROLE regress_cc_app SUPERUSER; --''', 1);
\set VERBOSITY default
RESET client_min_messages;
SELECT kind, shard, node, detail, run_on, fix FROM shardid.check_cluster();
SELECT * FROM dblink(:'base' || 'regress_cc_a', 'ALTER TABLE shard_0001.posts DROP COLUMN note') AS t(s text);
SET client_min_messages = warning;
SELECT fix FROM fixes WHERE kind = 'unsafe_name' AND node IS NULL \gexec
RESET client_min_messages;
SELECT * FROM shardid.check_cluster();
SELECT rolsuper FROM pg_roles WHERE rolname = 'regress_cc_app';

-- A shard's copy altered by hand and given to a role (issues 36, 44):
-- copy_differs names each difference from its node's template; its fix
-- is a call, align_copy() on the node. The copy holds a column the
-- template lacks and its owner is not the template's (a superuser):
-- giving it to the template's owner would hand the role's code to a
-- superuser, so align_copy() refuses (42501) and changes nothing. Once
-- the column (its data, the user's choice) is dropped, align_copy()
-- drops the role's CHECK as the role, gives the copy to the template's
-- owner and sets NOT NULL as that owner; the statements it ran are its
-- result.
SELECT * FROM dblink(:'base' || 'regress_cc_a',
    'ALTER TABLE shard_0002.posts ALTER COLUMN body DROP NOT NULL, ADD COLUMN rogue int, ADD CONSTRAINT own_check CHECK (id > 0);
     GRANT USAGE ON SCHEMA shard_0002 TO regress_cc_app;
     ALTER TABLE shard_0002.posts OWNER TO regress_cc_app') AS t(s text);
SELECT kind, shard, node, detail, run_on, fix FROM shardid.check_cluster() WHERE kind = 'copy_differs';
SELECT fix FROM fixes WHERE kind = 'copy_differs' \gexec
SELECT kind, shard, node, detail, run_on, fix FROM shardid.check_cluster() WHERE kind = 'copy_differs';
SELECT * FROM dblink(:'base' || 'regress_cc_a', 'ALTER TABLE shard_0002.posts DROP COLUMN rogue') AS t(s text);
SELECT * FROM dblink(:'base' || 'regress_cc_a', 'SELECT * FROM shardid.align_copy(2, ''posts'')') AS t(statement text);
SELECT count(*) AS copies_differing FROM shardid.check_cluster() WHERE kind = 'copy_differs';
SELECT * FROM dblink(:'base' || 'regress_cc_a', 'REVOKE USAGE ON SCHEMA shard_0002 FROM regress_cc_app') AS t(s text);

-- Fixes that never block writes (issue 46): an index of the template that
-- copies lack has a row per copy whose fix builds it CONCURRENTLY
-- (build_copy_index(), outside a transaction block); a unique one over
-- duplicates (shard 1) is reported as such, its fix the query that lists
-- them (copy_index_duplicates()), not a build that cannot succeed; once
-- they are gone, the build. A column a copy has and its template lacks
-- gets advice on its node (run_on), naming both statements.
SELECT * FROM dblink(:'base' || 'regress_cc_a',
    'CREATE EXTENSION IF NOT EXISTS dblink;
     INSERT INTO shard_0001.posts (body) VALUES (''twice''), (''twice''), (''once'');
     CREATE UNIQUE INDEX posts_body_uq ON public.posts (body);
     ALTER TABLE shard_0003.posts ADD COLUMN rogue integer') AS t(s text);
SELECT kind, shard, node, detail, run_on, fix FROM shardid.check_cluster() WHERE kind = 'copy_differs';
SELECT fix FROM fixes WHERE kind = 'copy_differs' AND fix NOT LIKE '%copy_index_duplicates%' \gexec
SELECT * FROM dblink(:'base' || 'regress_cc_a', 'SELECT * FROM shardid.copy_index_duplicates(1, ''posts'', ''posts_body_uq'')') AS t(key text, row_count bigint);
SELECT * FROM dblink(:'base' || 'regress_cc_a', 'CALL shardid.build_copy_index(1, ''posts'', ''posts_body_uq'')') AS t(s text);
SELECT * FROM dblink(:'base' || 'regress_cc_a', 'DELETE FROM shard_0001.posts WHERE body = ''twice''') AS t(s text);
SELECT fix FROM fixes WHERE kind = 'copy_differs' \gexec
SELECT kind, shard, node, detail, run_on FROM shardid.check_cluster() WHERE kind = 'copy_differs';
SELECT * FROM dblink(:'base' || 'regress_cc_a',
    'SELECT string_agg(n.nspname || CASE WHEN x.indisvalid THEN '''' ELSE '' (invalid)'' END, '', '' ORDER BY n.nspname)
       FROM pg_index AS x JOIN pg_class AS i ON i.oid = x.indexrelid JOIN pg_namespace AS n ON n.oid = i.relnamespace
      WHERE i.relname = ''posts_body_uq''') AS t(indexes text);
SELECT * FROM dblink(:'base' || 'regress_cc_a',
    'ALTER TABLE shard_0003.posts DROP COLUMN rogue;
     DELETE FROM shard_0001.posts WHERE body = ''once'';
     DROP INDEX public.posts_body_uq, shard_0000.posts_body_uq, shard_0001.posts_body_uq, shard_0002.posts_body_uq, shard_0003.posts_body_uq') AS t(s text);
SELECT count(*) AS copies_differing FROM shardid.check_cluster() WHERE kind = 'copy_differs';

-- A move in progress that no session and no background job drives (the
-- router restarted, its session terminated) is move_stalled, with the
-- call that finishes it (test/tap/rebalance.pl runs it); while a live
-- session holds its lock, it is not reported.
INSERT INTO shardid.shard_moves (shard, move_id, source, target, schema_name, mode, phase)
VALUES (0, 1700000000000, 'a', 'b', 'shard_0000', 'online', 'caught_up');
SELECT kind, shard, node, detail, run_on, fix FROM shardid.check_cluster();
INSERT INTO shardid.session_locks (lock_name, pid, backend_start)
SELECT 'move 0', a.pid, a.backend_start FROM pg_stat_activity AS a WHERE a.pid = pg_backend_pid();
SELECT kind, shard, node FROM shardid.check_cluster();
DELETE FROM shardid.session_locks WHERE lock_name = 'move 0';
DELETE FROM shardid.shard_moves;

-- For administrators only.
CREATE ROLE regress_cc_user;
SET ROLE regress_cc_user;
SELECT * FROM shardid.check_cluster();
SELECT * FROM shardid.retired_copies;
CALL shardid.drain_node('a');
RESET ROLE;
DROP ROLE regress_cc_user;

-- Clean up.
DELETE FROM shardid.shard_placement;
DELETE FROM shardid.nodes;
DROP EXTENSION dblink;
DROP DATABASE regress_cc_a;
DROP DATABASE regress_cc_b;
DROP DATABASE regress_cc_c;
DROP DATABASE regress_cc_nox;
DROP DATABASE regress_cc_odd;
DROP DATABASE regress_cc_old;
DROP DATABASE regress_cc_locked;
DROP ROLE regress_cc_reader;
DROP ROLE regress_cc_app;
