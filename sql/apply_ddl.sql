-- apply_ddl: one DDL statement on a sharded table's template and every
-- shard's copy (issue 28): refusals with their SQLSTATEs, the %s
-- placeholder, batches and the ledger, the re-CALL of an interrupted change
-- and the refusal of another, CONCURRENTLY over a loopback connection, and
-- a tenant who owns a template and tries to run code as the superuser.
SET client_min_messages = warning;
SET timezone = 'UTC';
\set regress_db :DBNAME
DROP DATABASE IF EXISTS regress_apply_ddl;
CREATE DATABASE regress_apply_ddl;
\c regress_apply_ddl
SET client_min_messages = notice;
\set SHOW_CONTEXT never
CREATE EXTENSION shardid;
CREATE TABLE public.photos (id bigint PRIMARY KEY, user_id bigint NOT NULL, caption text);
CALL shardid.create_shards_proc(0, 3);
CALL shardid.create_table_proc('public.photos');
INSERT INTO shard_0001.photos (user_id, caption) VALUES (1, 'a'), (2, 'b');

-- how many tables (template and shard copies) have a column, and how often
CREATE FUNCTION pg_temp.has_column(col name)
    RETURNS TABLE (tables bigint, copies bigint) LANGUAGE sql AS $$
    SELECT count(DISTINCT c.oid), count(*)
      FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
      JOIN pg_attribute AS a ON a.attrelid = c.oid AND a.attname = col AND NOT a.attisdropped
     WHERE c.relname = 'photos' AND c.relkind = 'r'
$$;

\set VERBOSITY sqlstate
-- refusals, before anything changes
CALL shardid.apply_ddl(NULL, 'ALTER TABLE %s ADD COLUMN a int');
CALL shardid.apply_ddl('public.nope', 'ALTER TABLE %s ADD COLUMN a int');
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s ADD COLUMN a int', 0);
BEGIN;
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s ADD COLUMN a int');
ROLLBACK;
\set VERBOSITY default
-- no %s; another % sequence; more than one statement
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE public.photos ADD COLUMN a int');
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %I ADD COLUMN a int');
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s ADD COLUMN a int; RESET ROLE');
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s ADD COLUMN a int; SELECT 1');
-- a statement that is not a change of this table (a %s in a comment
-- stands for nothing: no %s)
CALL shardid.apply_ddl('public.photos', 'SET ROLE postgres /* %s */');
CALL shardid.apply_ddl('public.photos', 'DROP TABLE %s');
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s RENAME TO pictures');
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s OWNER TO postgres');
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s ADD FOREIGN KEY (user_id) REFERENCES public.photos (id)');
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s ADD COLUMN owner_id bigint REFERENCES public.photos (id)');
CALL shardid.apply_ddl('public.photos', 'CREATE INDEX photos_user_id_idx ON public.photos (user_id) /* %s */');
-- an index without a name: names must be the same in every shard
CALL shardid.apply_ddl('public.photos', 'CREATE INDEX ON %s (user_id)');
CALL shardid.apply_ddl('public.photos', 'DROP INDEX public.photos_pkey, other.x /* %s */');
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s ADD COLUMN');
-- %s stands for the table only where the parser sees the statement name
-- it (issue 36): not in a literal (every copy would get another default),
-- not in a quoted name, not as a column's qualifier; an unterminated
-- literal is a syntax error
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s ADD COLUMN origin text DEFAULT ''%s''');
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s ADD COLUMN origin text DEFAULT $$from %s$$');
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s ADD COLUMN "%s" int');
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s ADD CHECK (length(%s.caption) > 0)');
CALL shardid.apply_ddl('public.photos', 'DROP INDEX %s_a, public.b');
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s ADD COLUMN origin text DEFAULT ''it');
SELECT count(*) AS changes FROM shardid.ddl_changes;

-- A template with a name that needs quotes: %s is "Pics" in each schema,
-- and %s_uid_idx the index named after it, quoted as one name; in a
-- literal, %%s is the text %s.
CREATE TABLE public."Pics" (id bigint PRIMARY KEY, uid bigint, note text);
CALL shardid.create_table_proc('public."Pics"');
CALL shardid.apply_ddl('public."Pics"', 'CREATE INDEX "Pics_uid_idx" ON %s (uid)');
CALL shardid.apply_ddl('public."Pics"', 'ALTER TABLE %s ALTER COLUMN note SET DEFAULT ''%%s, 50%''');
SELECT DISTINCT pg_get_expr(d.adbin, d.adrelid) AS note_default
  FROM pg_attrdef AS d JOIN pg_class AS c ON c.oid = d.adrelid WHERE c.relname = 'Pics';
SELECT count(*) AS uid_indexes FROM pg_class WHERE relname = 'Pics_uid_idx';
CALL shardid.apply_ddl('public."Pics"', 'DROP INDEX %s_uid_idx');
SELECT count(*) AS uid_indexes FROM pg_class WHERE relname = 'Pics_uid_idx';
SELECT shardid.drop_table('public."Pics"');
DROP TABLE public."Pics";

-- %s is each table, quoted; %% is a literal %
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s ADD CONSTRAINT not_full CHECK (caption <> ''100%%'')', 2);
SELECT n.nspname, pg_get_constraintdef(k.oid)
  FROM pg_constraint AS k JOIN pg_class AS c ON c.oid = k.conrelid JOIN pg_namespace AS n ON n.oid = c.relnamespace
 WHERE k.conname = 'not_full' ORDER BY 1;

-- an ADD COLUMN with a default, in batches of 2 (template first, then shards)
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s ADD COLUMN mood text NOT NULL DEFAULT ''ok''', 2);
SELECT * FROM pg_temp.has_column('mood');
SELECT mood, count(*) FROM shard_0001.photos GROUP BY 1;
SELECT change_id, template, command, kind, concurrent, on_nodes, targets_done, targets_total, running,
       finished_at IS NOT NULL AS finished
  FROM shardid.ddl_progress ORDER BY change_id;
SELECT target, shard, done FROM shardid.ddl_applied WHERE change_id = 2 ORDER BY shard NULLS FIRST;

-- An interrupted change: shard 2's copy refuses it, after the template and
-- shards 0 and 1 committed in the first batches.
ALTER TABLE shard_0002.photos ADD COLUMN tags text;
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s ADD COLUMN tags text[]', 1);
SELECT * FROM pg_temp.has_column('tags');
SELECT targets_done, targets_total, finished_at IS NULL AS unfinished FROM shardid.ddl_progress WHERE change_id = 3;
-- a different command for the same template waits for it
\set VERBOSITY sqlstate
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s ADD COLUMN other int');
\set VERBOSITY default
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s ADD COLUMN other int');
-- a shard created meanwhile is made from the changed template, and recorded
CALL shardid.create_shards_proc(4, 4);
SELECT target, done FROM shardid.ddl_applied WHERE change_id = 3 ORDER BY shard NULLS FIRST;
-- the re-CALL finishes only what is missing: each table gets tags once
ALTER TABLE shard_0002.photos DROP COLUMN tags;
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s ADD COLUMN tags text[]', 1);
SELECT * FROM pg_temp.has_column('tags');
SELECT count(*) FILTER (WHERE format_type(a.atttypid, NULL) = 'text[]') AS text_arrays
  FROM pg_attribute AS a WHERE a.attname = 'tags' AND NOT a.attisdropped;
SELECT targets_done, targets_total, finished_at IS NOT NULL AS finished FROM shardid.ddl_progress WHERE change_id = 3;
-- now the other command runs
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s RENAME COLUMN tags TO labels');
SELECT * FROM pg_temp.has_column('labels');

-- CONCURRENTLY, one table at a time over a loopback connection (dblink)
\set VERBOSITY sqlstate
CALL shardid.apply_ddl('public.photos', 'CREATE INDEX CONCURRENTLY photos_user_id_idx ON %s (user_id)');
\set VERBOSITY default
SELECT count(*) AS changes FROM shardid.ddl_changes;
CREATE EXTENSION dblink;
CALL shardid.apply_ddl('public.photos', 'CREATE INDEX CONCURRENTLY photos_user_id_idx ON %s (user_id)');
SELECT n.nspname, i.relname, x.indisvalid
  FROM pg_index AS x JOIN pg_class AS i ON i.oid = x.indexrelid JOIN pg_class AS c ON c.oid = x.indrelid
  JOIN pg_namespace AS n ON n.oid = c.relnamespace
 WHERE c.relname = 'photos' AND i.relname = 'photos_user_id_idx' ORDER BY 1;
CALL shardid.apply_ddl('public.photos', 'DROP INDEX CONCURRENTLY %s_user_id_idx');
SELECT count(*) AS left FROM pg_class WHERE relname = 'photos_user_id_idx';
-- a loopback that reaches another database is refused (22023) before any
-- statement is sent there; the change, recorded, is finished by a re-CALL
\set VERBOSITY terse
CALL shardid.apply_ddl('public.photos', 'CREATE INDEX CONCURRENTLY photos_id_user_idx ON %s (id, user_id)',
                       loopback => format('host=%s port=%s dbname=%s', split_part(current_setting('unix_socket_directories'), ',', 1),
                                          current_setting('port'), :'regress_db'));
\set VERBOSITY default
SELECT targets_done, finished_at IS NULL AS unfinished FROM shardid.ddl_progress WHERE command LIKE '%photos_id_user_idx%';
CALL shardid.apply_ddl('public.photos', 'CREATE INDEX CONCURRENTLY photos_id_user_idx ON %s (id, user_id)');
CALL shardid.apply_ddl('public.photos', 'DROP INDEX CONCURRENTLY %s_id_user_idx');

-- No change wedges a table (issue 36).
-- A first batch that fails keeps nothing: no change to finish, the
-- template as it was, the next command free to run.
ALTER TABLE shard_0000.photos ADD COLUMN extra int;
SELECT count(*) AS changes_before FROM shardid.ddl_changes \gset
\set VERBOSITY sqlstate
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s ADD COLUMN extra int');
\set VERBOSITY default
SELECT count(*) - :changes_before AS changes_kept FROM shardid.ddl_changes;
SELECT * FROM pg_temp.has_column('extra');
ALTER TABLE shard_0000.photos DROP COLUMN extra;
-- A finished command run again (a migration run twice) is recognised:
-- its object is there already and the ledger has the same command
-- finished, so nothing changes and nothing is recorded.
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s RENAME COLUMN tags TO labels');
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s ADD COLUMN mood text NOT NULL DEFAULT ''ok''', 2);
SELECT count(*) - :changes_before AS changes_kept FROM shardid.ddl_changes;
-- CONCURRENTLY too: the template's index is there, valid, and the same
-- command finished: nothing is run.
CALL shardid.apply_ddl('public.photos', 'CREATE INDEX CONCURRENTLY photos_user_id_idx ON %s (user_id)');
CALL shardid.apply_ddl('public.photos', 'CREATE INDEX CONCURRENTLY photos_user_id_idx ON %s (user_id)');
CALL shardid.apply_ddl('public.photos', 'DROP INDEX CONCURRENTLY %s_user_id_idx');
CALL shardid.apply_ddl('public.photos', 'DROP INDEX CONCURRENTLY %s_user_id_idx');
SELECT count(*) AS user_id_indexes FROM pg_class WHERE relname = 'photos_user_id_idx';
-- The same object made by another command is no re-run: an error.
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s ADD COLUMN other int');
\set VERBOSITY sqlstate
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s ADD COLUMN other bigint');
\set VERBOSITY default
-- A change that fails part of the way stays open: a different command is
-- refused, with both ways out in the HINT; abandon_ddl() closes it as it
-- is and says which tables have it.
ALTER TABLE shard_0003.photos ADD COLUMN half int;
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s ADD COLUMN half int', 1);
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s ADD COLUMN whole int');
SELECT * FROM shardid.abandon_ddl('public.photos');
SELECT targets_done, finished_at IS NOT NULL AS closed, abandoned, running
  FROM shardid.ddl_progress WHERE command LIKE '%half%';
SELECT * FROM pg_temp.has_column('half');
SELECT * FROM shardid.abandon_ddl('public.photos');
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s ADD COLUMN whole int');
-- CONCURRENTLY, a retried table whose index name is taken (issue 35): it
-- counts as done only when that index is the template's. (One table at a
-- time, so that the tables built beside the failing one are certain;
-- test/tap/apply_ddl.pl interrupts builds on several connections.)
CREATE INDEX photos_cap_idx ON shard_0001.photos (user_id);
\set VERBOSITY terse
CALL shardid.apply_ddl('public.photos', 'CREATE INDEX CONCURRENTLY photos_cap_idx ON %s (caption)', connections => 1);
\set VERBOSITY default
SELECT running, interrupted FROM shardid.ddl_progress WHERE command LIKE '%photos_cap_idx%';
CALL shardid.apply_ddl('public.photos', 'CREATE INDEX CONCURRENTLY photos_cap_idx ON %s (caption)', connections => 1);
DROP INDEX shard_0001.photos_cap_idx;
CREATE INDEX photos_cap_idx ON shard_0001.photos (caption);
CALL shardid.apply_ddl('public.photos', 'CREATE INDEX CONCURRENTLY photos_cap_idx ON %s (caption)', connections => 1);
SELECT count(*) AS cap_indexes, count(DISTINCT pg_get_indexdef(indexrelid) ~ '\(caption\)') AS on_caption
  FROM pg_index WHERE indexrelid::regclass::text LIKE '%photos_cap_idx';
CALL shardid.apply_ddl('public.photos', 'DROP INDEX CONCURRENTLY %s_cap_idx');
-- CONCURRENTLY: a build that fails on its first table (the template) keeps
-- nothing either: the change closed, the invalid index dropped.
INSERT INTO public.photos (id, user_id) VALUES (1, 7), (2, 7);
CALL shardid.apply_ddl('public.photos', 'CREATE UNIQUE INDEX CONCURRENTLY photos_one_per_user ON %s (user_id)');
SELECT targets_done, abandoned, running FROM shardid.ddl_progress WHERE command LIKE '%photos_one_per_user%';
SELECT count(*) AS leftover_indexes FROM pg_class WHERE relname = 'photos_one_per_user';
DELETE FROM public.photos;
-- the tables an abandoned change did not reach are the user's to align
ALTER TABLE shard_0004.photos ADD COLUMN half int;
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s DROP COLUMN half');
SELECT change_id, kind, concurrent, targets_done, targets_total, finished_at IS NOT NULL AS finished
  FROM shardid.ddl_progress ORDER BY change_id;
-- An index named otherwise than PostgreSQL would name it: a shard made
-- later gets the template's name too (LIKE lets PostgreSQL choose), so a
-- DROP INDEX %s_... reaches every copy.
CALL shardid.apply_ddl('public.photos', 'CREATE INDEX photos_by_user ON %s (user_id)');
CALL shardid.create_shards_proc(5, 5);
SELECT n.nspname, i.relname
  FROM pg_index AS x JOIN pg_class AS i ON i.oid = x.indexrelid JOIN pg_class AS c ON c.oid = x.indrelid
  JOIN pg_namespace AS n ON n.oid = c.relnamespace
 WHERE c.relname = 'photos' AND NOT x.indisprimary ORDER BY 1, 2;
CALL shardid.apply_ddl('public.photos', 'DROP INDEX %s_by_user');
SELECT count(*) AS left FROM pg_class WHERE relname LIKE 'photos%user%';

-- A batch commits after batch_size tables or, sooner, once it has held
-- its first table's lock for batch_time. Each statement here takes 20 ms
-- or more (a CHECK that sleeps for the table's row): with batch_time 1 ms
-- every table commits on its own (a transaction per ledger row); without
-- a time bound, one batch; with batch_size 3, batches of 3.
CREATE FUNCTION public.slow_ok(id bigint) RETURNS boolean LANGUAGE plpgsql
    AS $$ BEGIN PERFORM pg_sleep(0.02); RETURN true; END $$;
INSERT INTO public.photos (id, user_id) VALUES (1, 7);
SELECT format('INSERT INTO %I.photos (id, user_id) VALUES (1, 7)', schema) FROM shardid.shards \gexec
CREATE FUNCTION pg_temp.last_change_transactions() RETURNS TABLE (tables bigint, transactions bigint) LANGUAGE sql
    AS $$ SELECT count(*), count(DISTINCT a.xmin::text) FROM shardid.ddl_applied AS a
           WHERE a.change_id = (SELECT max(change_id) FROM shardid.ddl_changes) $$;
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s ADD CONSTRAINT slow CHECK (public.slow_ok(id))', batch_time => '1 ms');
SELECT * FROM pg_temp.last_change_transactions();
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s DROP CONSTRAINT slow', batch_time => NULL);
SELECT * FROM pg_temp.last_change_transactions();
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s ADD CONSTRAINT slow CHECK (public.slow_ok(id))', 3, batch_time => '1 h');
SELECT * FROM pg_temp.last_change_transactions();
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s DROP CONSTRAINT slow');
SELECT count(*) AS slow_checks FROM pg_constraint WHERE conname = 'slow';
DELETE FROM public.photos;
SELECT format('DELETE FROM %I.photos', schema) FROM shardid.shards \gexec
DROP FUNCTION public.slow_ok(bigint);
-- the options are checked before anything changes
\set VERBOSITY sqlstate
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s ADD COLUMN x int', batch_time => '-1 s');
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s ADD COLUMN x int', connections => 0);
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s ADD COLUMN x int', connections => 65);
\set VERBOSITY default
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s ADD COLUMN x int', connections => NULL);
SELECT count(*) AS changes_of_x FROM shardid.ddl_changes WHERE command LIKE '%COLUMN x int';

-- A tenant owns a template; shard copies belong to it too. Every statement
-- runs as the template's owner, whoever calls: an index expression calling
-- the tenant's function sees the tenant, never the superuser.
CREATE ROLE regress_ddl_tenant;
CREATE ROLE regress_ddl_other;
CREATE SCHEMA tenant AUTHORIZATION regress_ddl_tenant;
GRANT CREATE ON DATABASE regress_apply_ddl TO regress_ddl_tenant;
GRANT INSERT, UPDATE, DELETE ON shardid.shard_registry, shardid.sharded_tables TO regress_ddl_tenant;
GRANT INSERT, UPDATE ON shardid.ddl_changes, shardid.ddl_applied TO regress_ddl_tenant;
SELECT format('GRANT CREATE, USAGE ON SCHEMA %I TO regress_ddl_tenant', schema) FROM shardid.shards \gexec
SET ROLE regress_ddl_tenant;
CREATE TABLE tenant.notes (id bigint PRIMARY KEY, body text);
CREATE TABLE tenant.seen (who name);
CREATE FUNCTION tenant.spy(t text) RETURNS text LANGUAGE plpgsql IMMUTABLE
    AS $$ BEGIN RAISE NOTICE 'spy runs as %', current_user; RETURN t; END $$;
CALL shardid.create_table_proc('tenant.notes');
INSERT INTO tenant.notes VALUES (1, 'x');
RESET ROLE;
INSERT INTO shard_0003.notes (body) VALUES ('y');
RESET ROLE;
SELECT DISTINCT pg_get_userbyid(relowner) AS owner FROM pg_class WHERE relname = 'notes';
-- a superuser's CALL writes the ledger as the superuser, not as the owner
REVOKE INSERT, UPDATE ON shardid.ddl_changes, shardid.ddl_applied FROM regress_ddl_tenant;
CALL shardid.apply_ddl('tenant.notes', 'CREATE INDEX notes_spy_idx ON %s (tenant.spy(body))');
SELECT current_user, targets_done, finished_at IS NOT NULL AS finished
  FROM shardid.ddl_progress WHERE command LIKE '%notes_spy_idx%';
GRANT INSERT, UPDATE ON shardid.ddl_changes, shardid.ddl_applied TO regress_ddl_tenant;
SELECT DISTINCT pg_get_indexdef(indexrelid) LIKE '%tenant.spy(body)%' AS has_index,
       pg_get_userbyid(c.relowner) AS index_owner
  FROM pg_index JOIN pg_class AS c ON c.oid = indexrelid WHERE c.relname = 'notes_spy_idx';
-- the tenant may change its own table, and only with one statement
SET ROLE regress_ddl_tenant;
CALL shardid.apply_ddl('tenant.notes', 'ALTER TABLE %s ADD COLUMN seen_at timestamptz');
\set VERBOSITY sqlstate
CALL shardid.apply_ddl('tenant.notes', 'ALTER TABLE %s ADD COLUMN x int; RESET ROLE; DROP TABLE public.photos');
CALL shardid.apply_ddl('tenant.notes', 'SET SESSION AUTHORIZATION postgres; ALTER TABLE %s ADD COLUMN x int');
-- not the owner of public.photos: refused
CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s ADD COLUMN x int');
RESET ROLE;
SET ROLE regress_ddl_other;
CALL shardid.apply_ddl('tenant.notes', 'ALTER TABLE %s ADD COLUMN x int');
\set VERBOSITY default
RESET ROLE;
SELECT count(*) AS seen_at_columns FROM pg_attribute WHERE attname = 'seen_at';
SELECT count(*) AS x_columns FROM pg_attribute WHERE attname = 'x' AND NOT attisdropped;
SELECT change_id, template, requested_by, targets_done, finished_at IS NOT NULL AS finished
  FROM shardid.ddl_progress WHERE template = 'tenant.notes' ORDER BY change_id;

-- The fence: the tenant's code that a superuser's change reaches (a CHECK
-- on a rewrite and on VALIDATE, an index expression) runs as the tenant
-- in a security-restricted operation, where RESET ROLE fails: it never
-- becomes the superuser who CALLed apply_ddl().
SET ROLE regress_ddl_tenant;
CREATE FUNCTION tenant.pwn(t text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    BEGIN
        RESET ROLE;
        ALTER ROLE regress_ddl_tenant SUPERUSER;
        INSERT INTO tenant.seen VALUES (current_user);
    EXCEPTION WHEN OTHERS THEN
        INSERT INTO tenant.seen VALUES (current_user || ' ' || SQLSTATE);
    END;
    RETURN true;
END $$;
CREATE FUNCTION tenant.pwn_i(t text) RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN RETURN tenant.pwn(t); END $$;
CALL shardid.apply_ddl('tenant.notes', 'ALTER TABLE %s ADD CONSTRAINT notes_pwn CHECK (tenant.pwn(body)) NOT VALID');
RESET ROLE;
TRUNCATE tenant.seen;
CALL shardid.apply_ddl('tenant.notes', 'ALTER TABLE %s VALIDATE CONSTRAINT notes_pwn');
CALL shardid.apply_ddl('tenant.notes', 'ALTER TABLE %s ALTER COLUMN body TYPE varchar(1000)');
CALL shardid.apply_ddl('tenant.notes', 'CREATE INDEX notes_pwn_idx ON %s (body) WHERE tenant.pwn_i(body)');
SELECT count(*) AS before_concurrently FROM tenant.seen;
CALL shardid.apply_ddl('tenant.notes', 'CREATE INDEX CONCURRENTLY notes_pwn_cidx ON %s (id) WHERE tenant.pwn_i(body)');
SELECT DISTINCT who, count(*) > 4 AS concurrently_ran_it FROM tenant.seen GROUP BY who ORDER BY who;
SELECT rolsuper AS tenant_is_superuser FROM pg_roles WHERE rolname = 'regress_ddl_tenant';
-- A copy another role owns: its code would run with the template owner's
-- rights, so the change is refused before any table changes (42501).
ALTER TABLE shard_0002.notes OWNER TO regress_ddl_other;
CALL shardid.apply_ddl('tenant.notes', 'ALTER TABLE %s ADD COLUMN y int');
SELECT count(*) AS y_columns FROM pg_attribute WHERE attname = 'y' AND NOT attisdropped;
SELECT count(*) AS unfinished FROM shardid.ddl_progress WHERE template = 'tenant.notes' AND finished_at IS NULL;
ALTER TABLE shard_0002.notes OWNER TO regress_ddl_tenant;
-- The fence itself: only as a role the caller has the privileges of, and
-- session_replication_role = replica (triggers off) for superusers only.
SET ROLE regress_ddl_tenant;
\set VERBOSITY sqlstate
SELECT shardid_internal._run_as_owner('postgres', 'SELECT 1');
SELECT shardid_internal._run_as_owner('regress_ddl_tenant', 'SELECT 1', true);
\set VERBOSITY default
SELECT shardid_internal._run_as_owner('regress_ddl_tenant', 'SELECT current_user::text || '' '' || current_setting(''search_path'')') AS ran_as;
RESET ROLE;

\c :regress_db
SET client_min_messages = warning;
DROP DATABASE regress_apply_ddl;
DROP ROLE regress_ddl_tenant;
DROP ROLE regress_ddl_other;
