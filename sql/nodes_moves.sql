-- Router SQL for shard moves: what move_shard() and abort_move() refuse,
-- before anything changes, with two databases of this server as the nodes;
-- the definitions a move compares; the freeze lease on a node. (Assumes
-- wal_level is not logical here, as on a default server; the moves
-- themselves are tested end to end in test/tap/move_online.pl.)
\set SHOW_CONTEXT never
-- This router has no PL/Proxy: nodes, placement and moves need only dblink
-- (and shardid); no PL/Proxy cluster is made, and refresh_cluster() alone
-- says what is missing.
SELECT count(*) AS plproxy_wrappers FROM pg_foreign_data_wrapper WHERE fdwname = 'plproxy';
SELECT current_database() AS regress_db,
       pg_catalog.format('host=%s port=%s user=%s dbname=',
                         pg_catalog.split_part(current_setting('unix_socket_directories'), ',', 1),
                         current_setting('port'), current_user) AS base \gset

-- Nodes: a holds shards 1-3, b none; both have the template.
CREATE DATABASE regress_moves_a;
CREATE DATABASE regress_moves_b;
\c regress_moves_a
SET client_min_messages = warning;
CREATE EXTENSION shardid;
CREATE ROLE regress_moves_app;
CREATE ROLE regress_moves_owner;
CREATE TABLE public.posts (id bigint PRIMARY KEY, user_id bigint NOT NULL, body text NOT NULL);
SELECT shardid.create_shards(1, 3);
SELECT shardid.create_table('public.posts');
ALTER SCHEMA shard_0001 OWNER TO regress_moves_owner;
ALTER TABLE shard_0001.posts OWNER TO regress_moves_owner;
ALTER SEQUENCE shard_0001.id_seq OWNER TO regress_moves_owner;
GRANT USAGE ON SCHEMA shard_0001 TO regress_moves_app;
GRANT SELECT, INSERT ON shard_0001.posts TO regress_moves_app;
GRANT UPDATE (body) ON shard_0001.posts TO regress_moves_app;
\c regress_moves_b
SET client_min_messages = warning;
CREATE EXTENSION shardid;
CREATE TABLE public.posts (id bigint PRIMARY KEY, user_id bigint NOT NULL, body text NOT NULL);
SELECT shardid.create_table('public.posts');
\c :regress_db
SELECT shardid.add_node('ma', :'base' || 'regress_moves_a');
SELECT shardid.add_node('mb', :'base' || 'regress_moves_b');
SELECT shardid.place_shards('ma', 1, 3);
SELECT count(*) AS foreign_servers FROM pg_foreign_server;
SELECT shardid.refresh_cluster();
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;

-- dblink is asked for when a move starts, not by the extension.
CALL shardid.move_shard(1, 'mb');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
CREATE EXTENSION dblink;

-- A move commits per phase: not inside a transaction block.
BEGIN;
CALL shardid.move_shard(1, 'mb');
ROLLBACK;
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;

-- Arguments and placement.
CALL shardid.move_shard(1, 'nowhere');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
CALL shardid.move_shard(1, 'ma');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
CALL shardid.move_shard(7, 'mb');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
CALL shardid.move_shard(NULL, 'mb');
CALL shardid.move_shard(1, NULL);
-- a move option left NULL takes its default (_move_options(), issue 38):
-- this one goes on to the next check
CALL shardid.move_shard(1, 'mb', lock_timeout => NULL);
SELECT shardid_internal._move_options('{"lock_timeout": null, "cutover_timeout": "2 s"}');
SELECT shardid.freeze_shard(1);
CALL shardid.move_shard(1, 'mb');
SELECT shardid.unfreeze_shard(1);

-- One layout on every node.
\c regress_moves_b
SELECT shardid.configure('2020-01-01 00:00:00+00') IS NOT NULL AS configured;
\c :regress_db
CALL shardid.move_shard(1, 'mb');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
\c regress_moves_b
SELECT shardid.configure('2011-08-24 21:07:01.721+00') IS NOT NULL AS configured;
\c :regress_db

-- The target must not hold the shard, nor its schema.
\c regress_moves_b
CREATE SCHEMA shard_0002;
\c :regress_db
CALL shardid.move_shard(2, 'mb');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
\c regress_moves_b
DROP SCHEMA shard_0002;
SELECT shardid.create_shard(2) IS NOT NULL AS registered;
\c :regress_db
CALL shardid.move_shard(2, 'mb');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
\c regress_moves_b
SELECT shardid.detach_shard(2);
DROP SCHEMA shard_0002 CASCADE;
\c :regress_db

-- A shard that has diverged from its templates: every difference named,
-- nothing made on the target. (The trigger is the review's: an owner's
-- code that a superuser's copy would run.)
\c regress_moves_a
ALTER TABLE shard_0001.posts ADD COLUMN mood text;
ALTER TABLE shard_0001.posts ADD CONSTRAINT posts_body_key UNIQUE (body);
ALTER TABLE shard_0001.posts ADD CONSTRAINT posts_body_check CHECK (body <> '');
ALTER TABLE shard_0001.posts ALTER COLUMN user_id SET DEFAULT 0;
CREATE INDEX posts_user_idx ON shard_0001.posts (user_id);
GRANT UPDATE (user_id) ON shard_0001.posts TO regress_moves_app;
CREATE SEQUENCE shard_0001.other_seq;
ALTER SEQUENCE shard_0001.other_seq OWNER TO regress_moves_owner;
CREATE FUNCTION shard_0001.touch() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NEW; END';
CREATE TRIGGER touch BEFORE INSERT ON shard_0001.posts FOR EACH ROW EXECUTE FUNCTION shard_0001.touch();
ALTER TABLE shard_0001.posts ENABLE ALWAYS TRIGGER touch;
\c :regress_db
CALL shardid.move_shard(1, 'mb');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT count(*) AS moves FROM shardid.shard_moves;
\c regress_moves_b
SELECT count(*) AS schemas FROM pg_namespace WHERE nspname = 'shard_0001';
SELECT count(*) AS registered FROM shardid.shard_registry;
\c regress_moves_a
DROP TRIGGER touch ON shard_0001.posts;
DROP FUNCTION shard_0001.touch();
DROP SEQUENCE shard_0001.other_seq;
REVOKE UPDATE (user_id) ON shard_0001.posts FROM regress_moves_app;
DROP INDEX shard_0001.posts_user_idx;
ALTER TABLE shard_0001.posts ALTER COLUMN user_id DROP DEFAULT;
ALTER TABLE shard_0001.posts DROP CONSTRAINT posts_body_check, DROP CONSTRAINT posts_body_key, DROP COLUMN mood;
-- the other way: the target's template has changed
\c regress_moves_b
ALTER TABLE public.posts ADD COLUMN mood text;
\c :regress_db
CALL shardid.move_shard(1, 'mb');
\c regress_moves_b
ALTER TABLE public.posts DROP COLUMN mood;
\c :regress_db
-- a difference while apply_ddl() is unfinished on the source (shard 3's
-- copy refused it): the error says so and names the re-CALL
\c regress_moves_a
-- (apply_ddl() refuses a copy another role owns than the template's:
-- shard 1's table is the template owner's while it runs)
ALTER TABLE shard_0001.posts OWNER TO postgres;
ALTER TABLE shard_0003.posts ADD COLUMN mood integer;
CALL shardid.apply_ddl('public.posts', 'ALTER TABLE %s ADD COLUMN mood text', 1);
\c :regress_db
CALL shardid.move_shard(1, 'mb');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
\c regress_moves_a
ALTER TABLE shard_0003.posts DROP COLUMN mood;
CALL shardid.apply_ddl('public.posts', 'ALTER TABLE %s ADD COLUMN mood text', 1);
CALL shardid.apply_ddl('public.posts', 'ALTER TABLE %s DROP COLUMN mood');
SELECT count(*) AS unfinished FROM shardid.ddl_changes WHERE finished_at IS NULL;
ALTER TABLE shard_0001.posts OWNER TO regress_moves_owner;
\c :regress_db

-- Agreeing now, the shard still cannot move online from a node without
-- wal_level = logical; what refused it made nothing.
CALL shardid.move_shard(1, 'mb');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT count(*) AS moves FROM shardid.shard_moves;
\c regress_moves_b
SELECT count(*) AS schemas FROM pg_namespace WHERE nspname = 'shard_0001';
\c :regress_db

-- Issue 27: nothing a node lets in gets a superuser's hands through a move.
-- Each payload records who ran it; none may record a superuser.
\c regress_moves_b
CREATE TABLE public.payload_log (what text, who name, superuser boolean);
GRANT INSERT ON public.payload_log TO PUBLIC;
CREATE FUNCTION public.payload_row(what text) RETURNS void LANGUAGE sql
    AS $$ INSERT INTO public.payload_log SELECT what, current_user, rolsuper FROM pg_roles WHERE rolname = current_user $$;
CREATE FUNCTION public.payload() RETURNS trigger LANGUAGE plpgsql
    AS $$ BEGIN PERFORM public.payload_row(TG_NAME || ' ' || TG_OP); RETURN NULL; END $$;
GRANT EXECUTE ON FUNCTION public.payload_row(text), public.payload() TO PUBLIC;
-- Finding 2: a database owner who is not a superuser owns schema public
-- (15+) and shadows what 0.2's unqualified statements called there:
-- jsonb_build_object(text, text, text, boolean) and || (text, integer).
CREATE ROLE regress_moves_dbowner;
ALTER DATABASE regress_moves_b OWNER TO regress_moves_dbowner;
SET ROLE regress_moves_dbowner;
CREATE FUNCTION public.jsonb_build_object(a text, b text, c text, d boolean) RETURNS jsonb LANGUAGE sql
    AS $$ SELECT public.payload_row('jsonb_build_object'); SELECT pg_catalog.jsonb_build_object(a, b, c, d) $$;
CREATE FUNCTION public.cat(a text, b integer) RETURNS text LANGUAGE sql
    AS $$ SELECT public.payload_row('||'); SELECT a OPERATOR(pg_catalog.||) b::text $$;
CREATE OPERATOR public.|| (LEFTARG = text, RIGHTARG = integer, FUNCTION = public.cat);
RESET ROLE;
\c :regress_db
-- (refused for wal_level, after every check that talks to the nodes)
CALL shardid.move_shard(1, 'mb');
\c regress_moves_b
SELECT count(*) AS payloads_run FROM public.payload_log;

-- Finding 1: an offline move. The shard's owner adds triggers to the
-- target's copy before the rows load, named like shardid's (0.2 compared
-- them not, and emptied the copy as the superuser, firing the TRUNCATE
-- trigger): the copy is emptied and written as the owner (ENABLE ALWAYS
-- triggers fire as the owner, ordinary ones not at all), and the triggers
-- are differences: the move is refused and rolled back.
\c regress_moves_a
INSERT INTO shard_0001.posts (id, user_id, body) VALUES
    (shardid.make_id('2021-01-01 00:00:00+00', 1, 1), 1, 'one'), (shardid.make_id('2021-01-01 00:00:00+00', 1, 2), 2, 'two');
\c :regress_db
CALL shardid.move_shard(1, 'mb', offline => true);
SELECT phase, mode FROM shardid.shard_moves;
\c regress_moves_b
SET ROLE regress_moves_owner;
CREATE TRIGGER shardid_move_frozen BEFORE TRUNCATE ON shard_0001.posts FOR EACH STATEMENT EXECUTE FUNCTION public.payload();
CREATE TRIGGER shardid_retired AFTER INSERT ON shard_0001.posts FOR EACH ROW EXECUTE FUNCTION public.payload();
ALTER TABLE shard_0001.posts ENABLE ALWAYS TRIGGER shardid_retired;
CREATE TRIGGER ordinary AFTER INSERT ON shard_0001.posts FOR EACH ROW EXECUTE FUNCTION public.payload();
RESET ROLE;
-- what bin/shardid-move-shard --offline runs, the rows as it reads them on the source
SELECT * FROM shardid_internal._move_offline_copies('shard_0001');
BEGIN;
SELECT shardid_internal._move_offline_load('shard_0001');
COPY pg_temp.shardid_load_1 FROM STDIN;
2476645732824646657	1	one
2476645732824646658	2	two
\.
SELECT shardid_internal._move_offline_store('shard_0001');
COMMIT;
SELECT what, who, superuser, count(*) FROM public.payload_log GROUP BY 1, 2, 3 ORDER BY 1;
SELECT count(*) AS rows_copied FROM shard_0001.posts;
\c :regress_db
CALL shardid.move_shard(1, 'mb', offline => true);
SELECT count(*) AS moves FROM shardid.shard_moves;
\c regress_moves_b
SELECT count(*) AS copies_left FROM pg_namespace WHERE nspname = 'shard_0001';
\c regress_moves_a
SELECT count(*) AS frozen_left FROM pg_trigger WHERE tgfoid = 'shardid_internal._refuse_frozen_write()'::regprocedure;
DELETE FROM shard_0001.posts;
-- and on the source: a tenant's trigger named like shardid's is a difference
CREATE FUNCTION public.tenant_trigger() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
CREATE TRIGGER shardid_retired BEFORE INSERT ON shard_0001.posts FOR EACH ROW EXECUTE FUNCTION public.tenant_trigger();
\c :regress_db
CALL shardid.move_shard(1, 'mb');
\c regress_moves_a
DROP TRIGGER shardid_retired ON shard_0001.posts;

-- Finding 3: once the router points elsewhere, nothing of a tenant's
-- stops the old copy's retirement: a trigger named shardid_retired, a
-- schema squatting the retired name. shardid's triggers are known by
-- their function.
CREATE TRIGGER shardid_retired BEFORE INSERT ON shard_0002.posts FOR EACH ROW EXECUTE FUNCTION public.tenant_trigger();
CREATE TRIGGER shardid_move_frozen BEFORE UPDATE ON shard_0002.posts FOR EACH ROW EXECUTE FUNCTION public.tenant_trigger();
CREATE SCHEMA shard_0002_moved_1;
SELECT shardid.freeze_shard_tables('shard_0002', 2, 'mb');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT shardid.retire_shard(2, 'mb', 'shard_0002_moved_1');
SELECT tgname, tgfoid::regproc FROM pg_trigger WHERE tgrelid = 'shard_0002_moved_1_2.posts'::regclass ORDER BY tgname;
SELECT shardid.thaw_shard_tables('shard_0002_moved_1_2') AS thawed;  -- the name before 0.4, deprecated
DROP SCHEMA shard_0002_moved_1, shard_0002_moved_1_2 CASCADE;
SELECT shardid.create_shard(2) IS NOT NULL AS recreated;
DROP FUNCTION public.tenant_trigger();
\c :regress_db

-- Finding 5: a role with no privileges on shardid's objects cannot block
-- a move (0.2's advisory key (hashtext('shardid-move-shard'), shard) could
-- be held by anyone); a session holding the shard's lock (a row of
-- shardid.session_locks) is named.
CREATE ROLE regress_moves_nobody;
SELECT dblink_connect('nobody', :'base' || current_database());
SELECT * FROM dblink('nobody', $$SET ROLE regress_moves_nobody; SELECT pg_try_advisory_lock(hashtext('shardid-move-shard'), 1)$$) AS t(locked boolean);
\set VERBOSITY terse
CALL shardid.move_shard(1, 'mb');
SELECT dblink_disconnect('nobody');
SELECT dblink_connect('mover', :'base' || current_database());
SELECT * FROM dblink('mover', $$SELECT shardid_internal._session_lock('move 1') IS NULL$$) AS t(locked boolean);
\set VERBOSITY sqlstate
CALL shardid.move_shard(1, 'mb');
\set VERBOSITY default
SELECT * FROM dblink('mover', $$SELECT shardid_internal._session_unlock('move 1')$$) AS t(unlocked boolean);
SELECT dblink_disconnect('mover');

-- A move in progress (here a row without objects) resumes to its target
-- only; abort_move() rolls it back, whatever of it exists.
INSERT INTO shardid.shard_moves (shard, source, target, schema_name, mode, phase)
    VALUES (1, 'ma', 'mb', 'shard_0001', 'online', 'copy');
SELECT shard, source, target, mode, phase, moved_by FROM shardid.move_progress;
CALL shardid.move_shard(1, 'ma');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
CALL shardid.abort_move(1);
SELECT count(*) AS moves FROM shardid.shard_moves;
CALL shardid.abort_move(1);
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
-- a rollback that was interrupted is finished by the next move_shard()
INSERT INTO shardid.shard_moves (shard, source, target, schema_name, mode, phase)
    VALUES (1, 'ma', 'mb', 'shard_0001', 'online', 'aborting');
CALL shardid.move_shard(1, 'mb');
SELECT count(*) AS moves FROM shardid.shard_moves;
-- one that the router already points at the target cannot be aborted
INSERT INTO shardid.shard_moves (shard, source, target, schema_name, mode, phase)
    VALUES (1, 'ma', 'mb', 'shard_0001', 'online', 'repointed');
CALL shardid.abort_move(1);
SELECT phase FROM shardid.shard_moves;
DELETE FROM shardid.shard_moves;

-- Definitions compare key by key; a difference reads as a sentence.
SELECT * FROM unnest(shardid_internal._definition_diff(
    '{"table t: column a": "integer", "table t: index i": "CREATE INDEX i ON s.t USING btree (a)", "schema: owner": "x"}',
    '{"table t: column a": "bigint", "schema: owner": "x", "sequence q": "permanent"}',
    'node "a"', 'node "b"')) AS d;
SELECT shardid_internal._definition_diff('{"k": "v"}', '{"k": "v"}', 'a', 'b') AS none;
-- what a node reports of a shard: its definition, keyed (the table's own
-- privileges left out: they name 17's MAINTAIN)
SELECT d.key, d.value
  FROM dblink(:'base' || 'regress_moves_a', 'SELECT shardid_internal._shard_definition(''shard_0001'')::text') AS t(def jsonb),
       jsonb_each_text(t.def) AS d
 WHERE d.key <> 'table posts: privileges'
 ORDER BY d.key COLLATE "C";

-- Names: a move's objects, and a retired copy's name cut at a character
-- boundary with its suffix kept.
SELECT shardid_internal._move_name(5, 1795432293102);
SELECT n, octet_length(n) AS bytes, char_length(n) AS chars
  FROM shardid_internal._fit_name(repeat('é', 31) || 'x', '_moved_1795432293102') AS n;

-- The freeze lease: a write is refused while the session that froze the
-- shard lives, and goes through once it is gone. Its key is drawn at
-- random for each freeze: a role holding 0.2's fixed key (1936222564, 3)
-- blocks nothing (issue 27, finding 5).
SELECT dblink_connect('squatter', :'base' || 'regress_moves_a');
SELECT * FROM dblink('squatter', 'SELECT pg_try_advisory_lock_shared(1936222564, 3)') AS t(locked boolean);
SELECT dblink_connect('mover', :'base' || 'regress_moves_a');
SELECT * FROM dblink('mover', 'SET lock_timeout = ''1s''; SELECT shardid.freeze_shard_tables(''shard_0003'', 3, ''mb'', true)') AS t(n integer);
SELECT * FROM dblink('mover', 'SELECT pg_backend_pid()') AS t(pid integer) \gset mover_
SELECT set_config('regress.mover_pid', :'mover_pid', false) IS NOT NULL AS noted;
SELECT dblink_connect('writer', :'base' || 'regress_moves_a');
SELECT dblink_exec('writer', 'INSERT INTO shard_0003.posts (user_id, body) VALUES (3, ''refused'')');
SELECT dblink_disconnect('mover');
SELECT dblink_disconnect('squatter');
-- (the mover's backend ends a moment after its connection closes)
DO $$
BEGIN
    FOR i IN 1 .. 200 LOOP
        EXIT WHEN NOT EXISTS (SELECT FROM pg_stat_activity AS a WHERE a.pid = current_setting('regress.mover_pid')::integer);
        PERFORM pg_sleep(0.05);
    END LOOP;
END
$$;
SELECT dblink_exec('writer', 'INSERT INTO shard_0003.posts (user_id, body) VALUES (3, ''lapsed'')');
-- permanent, it outlives its session
SELECT dblink_connect('mover', :'base' || 'regress_moves_a');
SELECT * FROM dblink('mover', 'SELECT shardid.freeze_shard_tables(''shard_0003'', 3, ''mb'')') AS t(n integer);
SELECT dblink_disconnect('mover');
SELECT dblink_exec('writer', 'INSERT INTO shard_0003.posts (user_id, body) VALUES (3, ''refused'')');
SELECT * FROM dblink('writer', 'SELECT shardid.unfreeze_shard_tables(''shard_0003'')') AS t(n integer);
SELECT * FROM dblink('writer', 'SELECT body FROM shard_0003.posts') AS t(body text);
SELECT dblink_disconnect('writer');

-- Issue 29: an online move warns when its target's logical replication
-- launcher would hold its subscription back: PostgreSQL 15 or older (one
-- start per wal_retrieve_retry_interval for all subscriptions) with the
-- interval over 1 s. _move_prepare() passes the target's
-- server_version_num and pg_settings.setting (ms).
SELECT shardid_internal._move_check_launcher('mb', 150013, 5000);
SELECT shardid_internal._move_check_launcher('mb', 150013, 1001);
SELECT shardid_internal._move_check_launcher('mb', 150013, 1000);
SELECT shardid_internal._move_check_launcher('mb', 150013, 200);
SELECT shardid_internal._move_check_launcher('mb', 160000, 5000);
SELECT shardid_internal._move_check_launcher('mb', 190000, 60000);

-- Issue 35, finding 2: drop_retired_copies() drops only a schema a move
-- recorded (shardid.retired_schemas on the node: its OID and the
-- relations shardid made in it), and only while it holds nothing but its
-- own objects; everything else is kept and reported, and the cleanup goes
-- on. Shards 4-8 on node ma are retired here as a move's last step does.
\c regress_moves_a
SET client_min_messages = warning;
CREATE ROLE regress_moves_tenant;
GRANT CREATE ON SCHEMA public TO regress_moves_tenant;
SELECT shardid.create_shards(4, 8) AS made;
DO $$
BEGIN
    FOR i IN 4 .. 8 LOOP
        EXECUTE format('ALTER TABLE shard_%s.posts OWNER TO regress_moves_tenant', lpad(i::text, 4, '0'));
        EXECUTE format('GRANT USAGE ON SCHEMA shard_%s TO regress_moves_tenant', lpad(i::text, 4, '0'));
        EXECUTE format('INSERT INTO shard_%s.posts (user_id, body) SELECT g, ''post'' FROM generate_series(1, 10) AS g', lpad(i::text, 4, '0'));
    END LOOP;
END
$$;
GRANT CREATE ON SCHEMA shard_0005, shard_0006 TO regress_moves_tenant;
-- the tenant's own schema: its customers, and a view over them
CREATE SCHEMA regress_shared AUTHORIZATION regress_moves_tenant;
SET ROLE regress_moves_tenant;
CREATE TABLE regress_shared.customers (id integer PRIMARY KEY, name text NOT NULL);
INSERT INTO regress_shared.customers SELECT g, 'customer ' || g FROM generate_series(1, 1000) AS g;
CREATE VIEW regress_shared.customer_names AS SELECT name FROM regress_shared.customers;
RESET ROLE;
SELECT shardid.retire_shard(i, 'mb', format('shard_%s_moved_1', lpad(i::text, 4, '0'))) AS retired
  FROM generate_series(4, 8) AS i;
SELECT schema_name, shard, moved_to, cardinality(relations) AS relations
  FROM shardid.retired_schemas WHERE shard >= 4 ORDER BY shard;
SET ROLE regress_moves_tenant;
-- 4: the tenant moves its retired table into its own schema (0.3 before
-- this fix dropped that schema: 1,000 customers and their view gone)
ALTER TABLE shard_0004_moved_1.posts SET SCHEMA regress_shared;
-- 5: and into public, where it may create
ALTER TABLE shard_0005_moved_1.posts RENAME TO posts_5;
ALTER INDEX shard_0005_moved_1.posts_pkey RENAME TO posts_5_pkey;
ALTER TABLE shard_0005_moved_1.posts_5 SET SCHEMA public;
-- 6: adds a table of its own to a retired copy
CREATE TABLE shard_0006_moved_1.notes (note text);
INSERT INTO shard_0006_moved_1.notes VALUES ('mine');
-- 7: makes a view elsewhere over a retired table
CREATE VIEW regress_shared.old_posts AS SELECT body FROM shard_0007_moved_1.posts;
RESET ROLE;
-- 8: an index and a trigger added to a retired table depend on it alone
-- and go with it
CREATE INDEX ON shard_0008_moved_1.posts (user_id);
CREATE FUNCTION public.regress_noop() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NULL; END';
CREATE TRIGGER regress_noop AFTER INSERT ON shard_0008_moved_1.posts FOR EACH ROW EXECUTE FUNCTION public.regress_noop();
\c :regress_db
SELECT node, shard, schema_name, moved_to, recorded, droppable, reason
  FROM shardid.retired_copies ORDER BY node, schema_name COLLATE "C";
CALL shardid.drop_retired_copies();
SELECT node, shard, schema_name, recorded, droppable FROM shardid.retired_copies ORDER BY node, schema_name COLLATE "C";
\c regress_moves_a
SET client_min_messages = warning;
-- nothing of the tenant's was dropped
SELECT (SELECT count(*) FROM regress_shared.customers) AS customers,
       (SELECT count(*) FROM regress_shared.customer_names) AS names,
       (SELECT count(*) FROM regress_shared.posts) AS moved_posts,
       (SELECT count(*) FROM public.posts_5) AS posts_in_public,
       (SELECT count(*) FROM shard_0006_moved_1.notes) AS notes,
       (SELECT count(*) FROM regress_shared.old_posts) AS old_posts;
SELECT nspname FROM pg_namespace WHERE nspname LIKE 'shard\_000_\_moved\_%' ORDER BY nspname;
-- On the node: only a recorded copy; a name of no schema is gone already.
SELECT shardid_internal._drop_retired_copy('regress_shared');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT shardid_internal._drop_retired_copy('public');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT shardid_internal._drop_retired_copy(NULL);
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT shardid_internal._drop_retired_copy('shard_0008_moved_1');
SELECT shardid_internal._drop_retired_copy('shard_0006_moved_1');
-- a copy retired before 0.3 (no record) is listed, never dropped
DELETE FROM shardid.retired_schemas WHERE shard = 6;
DROP TABLE shard_0006_moved_1.notes;
SELECT schema_name, recorded, droppable, reason FROM shardid_internal._retired_here() WHERE shard = 6;
SELECT shardid_internal._drop_retired_copy('shard_0006_moved_1');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
-- one taken back by attach_shard() is not retired any more
DROP VIEW regress_shared.old_posts;
SELECT shardid.attach_shard(7, 'shard_0007_moved_1');
SELECT shardid_internal._drop_retired_copy('shard_0007_moved_1');
-- the tenant's table moved back, its copy holds only its own again
ALTER TABLE regress_shared.posts SET SCHEMA shard_0004_moved_1;
SELECT shardid_internal._drop_retired_copy('shard_0004_moved_1')->>'status' AS status;
-- the public schema is never taken for one
SELECT nspname FROM pg_namespace WHERE nspname = 'public';
SELECT shardid.detach_shard(7);
DROP TABLE public.posts_5;
DROP SCHEMA shard_0005_moved_1, shard_0006_moved_1, shard_0007_moved_1, regress_shared CASCADE;
DROP FUNCTION public.regress_noop();
DELETE FROM shardid.retired_schemas;
REVOKE CREATE ON SCHEMA public FROM regress_moves_tenant;
DROP ROLE regress_moves_tenant;
\c :regress_db

-- Clean up: this database is shared with the other regression tests.
DELETE FROM shardid.shard_placement;
DELETE FROM shardid.nodes;
DROP EXTENSION dblink;
DROP DATABASE regress_moves_a;
DROP DATABASE regress_moves_b;
DROP ROLE regress_moves_app;
DROP ROLE regress_moves_owner;
DROP ROLE regress_moves_dbowner;
DROP ROLE regress_moves_nobody;
