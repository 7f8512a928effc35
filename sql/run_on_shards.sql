-- run_on_shards: one statement that changes no shared definition (GRANT,
-- REVOKE, COMMENT, reads) on a sharded table's every copy, a row per copy
-- (issue 39): refusals with their SQLSTATEs, the rows of success and of a
-- copy's error, batches, and a tenant's function in a read running as the
-- tenant, never as the superuser who called it.
SET client_min_messages = warning;
SET timezone = 'UTC';
\set regress_db :DBNAME
DROP DATABASE IF EXISTS regress_run_on_shards;
DROP ROLE IF EXISTS regress_ros_reader, regress_ros_tenant, regress_ros_other;
CREATE DATABASE regress_run_on_shards;
CREATE ROLE regress_ros_reader;
CREATE ROLE regress_ros_tenant;
CREATE ROLE regress_ros_other;
\c regress_run_on_shards
SET client_min_messages = notice;
\set SHOW_CONTEXT never
CREATE EXTENSION shardid;
CREATE TABLE public.photos (id bigint PRIMARY KEY, user_id bigint NOT NULL, caption text);
CALL shardid.create_shards_proc(0, 3);
CALL shardid.create_table_proc('public.photos');
INSERT INTO shard_0001.photos (user_id, caption) VALUES (1, 'a'), (2, 'b');
INSERT INTO shard_0003.photos (user_id, caption) VALUES (3, 'c');

-- who may read each photos table: the template and each copy
CREATE FUNCTION pg_temp.readers() RETURNS TABLE (tab text, reader_may_select boolean, caption_comment text)
    LANGUAGE sql AS $$
    SELECT format('%I.%I', n.nspname, c.relname), has_table_privilege('regress_ros_reader', c.oid, 'SELECT'),
           col_description(c.oid, 3)
      FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
     WHERE c.relname = 'photos' AND c.relkind = 'r' ORDER BY 1
$$;

\set VERBOSITY sqlstate
-- refusals, before anything runs
SELECT * FROM shardid.run_on_shards(NULL, 'GRANT SELECT ON %s TO regress_ros_reader');
SELECT * FROM shardid.run_on_shards('public.nope', 'GRANT SELECT ON %s TO regress_ros_reader');
SELECT * FROM shardid.run_on_shards('public.photos', 'GRANT SELECT ON %s TO regress_ros_reader', 0);
-- batches commit on a connection of their own: dblink is needed
SELECT * FROM shardid.run_on_shards('public.photos', 'SELECT count(*) FROM %s');
CREATE EXTENSION dblink;
-- and the caller's transaction must not hold what a batch would wait for
BEGIN;
LOCK TABLE shard_0001.photos IN SHARE MODE;
SELECT * FROM shardid.run_on_shards('public.photos', 'SELECT count(*) FROM %s');
ROLLBACK;
BEGIN;
INSERT INTO shard_0002.photos (user_id) VALUES (9);
SELECT * FROM shardid.run_on_shards('public.photos', 'SELECT count(*) FROM %s');
ROLLBACK;
\set VERBOSITY default
-- a change of the definition every copy shares is apply_ddl()'s (0A000)
SELECT * FROM shardid.run_on_shards('public.photos', 'ALTER TABLE %s ADD COLUMN a int');
SELECT * FROM shardid.run_on_shards('public.photos', 'ALTER TABLE %s SET (fillfactor = 70)');
SELECT * FROM shardid.run_on_shards('public.photos', 'CREATE INDEX photos_user_idx ON %s (user_id)');
SELECT * FROM shardid.run_on_shards('public.photos', 'DROP INDEX %s_pkey');
SELECT * FROM shardid.run_on_shards('public.photos', 'CREATE TRIGGER t BEFORE INSERT ON %s FOR EACH ROW EXECUTE FUNCTION f()');
-- rows are written through the application's routing (0A000)
SELECT * FROM shardid.run_on_shards('public.photos', 'INSERT INTO %s (user_id) VALUES (1)');
SELECT * FROM shardid.run_on_shards('public.photos', 'UPDATE %s SET caption = NULL');
SELECT * FROM shardid.run_on_shards('public.photos', 'DELETE FROM %s');
SELECT * FROM shardid.run_on_shards('public.photos', 'TRUNCATE %s');
SELECT * FROM shardid.run_on_shards('public.photos', 'COPY %s TO STDOUT');
SELECT * FROM shardid.run_on_shards('public.photos', 'WITH d AS (DELETE FROM %s RETURNING 1) SELECT count(*) FROM d');
SELECT * FROM shardid.run_on_shards('public.photos', 'SELECT * INTO public.photo_copy FROM %s');
SELECT * FROM shardid.run_on_shards('public.photos', 'SELECT * FROM %s FOR UPDATE');
-- other statements, other objects, another kind of GRANT (0A000)
SELECT * FROM shardid.run_on_shards('public.photos', 'VACUUM %s');
SELECT * FROM shardid.run_on_shards('public.photos', 'REVOKE USAGE ON SEQUENCE %s FROM regress_ros_reader');
SELECT * FROM shardid.run_on_shards('public.photos', 'COMMENT ON INDEX %s_pkey IS ''the key''');
-- one statement (42601), %s present and where the statement names the
-- table, and only it (22023)
SELECT * FROM shardid.run_on_shards('public.photos', 'GRANT SELECT ON %s TO regress_ros_reader; RESET ROLE');
SELECT * FROM shardid.run_on_shards('public.photos', 'SELECT count(*) FROM %s; SELECT 1');
SELECT * FROM shardid.run_on_shards('public.photos', 'GRANT SELECT ON %s TO');
SELECT * FROM shardid.run_on_shards('public.photos', 'GRANT SELECT ON public.photos TO regress_ros_reader');
SELECT * FROM shardid.run_on_shards('public.photos', 'SET ROLE postgres /* %s */');
SELECT * FROM shardid.run_on_shards('public.photos', 'SELECT count(*) FROM %s WHERE caption = ''%s''');
SELECT * FROM shardid.run_on_shards('public.photos', 'GRANT SELECT ON %s, public.photos TO regress_ros_reader');
SELECT * FROM shardid.run_on_shards('public.photos', 'SELECT %s.id FROM %s');
SELECT * FROM shardid.run_on_shards('public.photos', 'SELECT count(*) FROM public.photos WHERE %s IS NOT NULL');
SELECT * FROM shardid.run_on_shards('public.photos', 'COMMENT ON TABLE public.photos IS NULL -- %s');
SELECT * FROM shardid.run_on_shards('public.photos', 'COMMENT ON COLUMN public.photos.%s IS NULL');
SELECT * FROM pg_temp.readers();

-- GRANT: the template (shard NULL: new shards are made from it) and every
-- copy, each as its owner; a row each
SELECT * FROM shardid.run_on_shards('public.photos', 'GRANT SELECT ON %s TO regress_ros_reader');
-- a column's privileges, and REVOKE
SELECT * FROM shardid.run_on_shards('public.photos', 'GRANT UPDATE (caption) ON TABLE %s TO regress_ros_reader');
SELECT count(*) AS caption_updatable FROM pg_class AS c
 WHERE c.relname = 'photos' AND has_column_privilege('regress_ros_reader', c.oid, 'caption', 'UPDATE');
SELECT * FROM shardid.run_on_shards('public.photos', 'REVOKE UPDATE (caption) ON %s FROM regress_ros_reader');
-- COMMENT ON a column
SELECT * FROM shardid.run_on_shards('public.photos', 'COMMENT ON COLUMN %s.caption IS ''shown under the photo''');
SELECT * FROM shardid.run_on_shards('public.photos', 'COMMENT ON CONSTRAINT photos_pkey ON %s IS ''the ID''', 3);
SELECT count(*) AS pkeys_commented FROM pg_constraint AS k
 WHERE k.conname = 'photos_pkey' AND obj_description(k.oid, 'pg_constraint') = 'the ID';
SELECT * FROM pg_temp.readers();
-- reads: one value per copy, the template left out; the same in batches
-- of 2 (3 batches, each a transaction of the loopback connection)
SELECT * FROM shardid.run_on_shards('public.photos', 'SELECT count(*) FROM %s');
SELECT * FROM shardid.run_on_shards('public.photos', 'SELECT string_agg(p.caption, '','' ORDER BY p.id) FROM %s AS p WHERE p.user_id < 3', 2);
-- the reader may now read every copy (with USAGE on each shard's schema,
-- which is the schema's, not the table's)
DO $$
DECLARE s record;
BEGIN
    FOR s IN SELECT schema FROM shardid.shards LOOP
        EXECUTE format('GRANT USAGE ON SCHEMA %I TO regress_ros_reader', s.schema);
    END LOOP;
END $$;
SET ROLE regress_ros_reader;
DO $$
DECLARE s record; n bigint := 0; m bigint;
BEGIN
    FOR s IN SELECT schema FROM shardid.shards LOOP
        EXECUTE format('SELECT count(*) FROM %I.photos', s.schema) INTO m;
        n := n + m;
    END LOOP;
    RAISE NOTICE 'regress_ros_reader read % rows from every copy', n;
END $$;
-- but may not run commands on every copy of this node (42501)
SELECT * FROM shardid.run_on_shards('public.photos', 'SELECT count(*) FROM %s');
RESET ROLE;

-- a copy's error is its row (success false, the message and SQLSTATE);
-- the other copies go on
ALTER TABLE shard_0002.photos RENAME COLUMN caption TO title;
DROP TABLE shard_0000.photos;
SELECT * FROM shardid.run_on_shards('public.photos', 'SELECT count(caption) FROM %s');
SELECT * FROM shardid.run_on_shards('public.photos', 'GRANT SELECT ON %s TO regress_ros_nobody');
ALTER TABLE shard_0002.photos RENAME COLUMN title TO caption;

-- The fence: a tenant owns a sharded table and its copies; its function,
-- called by a superuser's read, runs as the tenant in a security-
-- restricted operation and cannot make the tenant a superuser (42501).
CREATE SCHEMA tenant AUTHORIZATION regress_ros_tenant;
SET ROLE regress_ros_tenant;
CREATE TABLE tenant.notes (id bigint PRIMARY KEY, body text);
CREATE FUNCTION tenant.pwn() RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    ALTER ROLE regress_ros_tenant SUPERUSER;
    RETURN 'superuser now';
END $$;
CREATE FUNCTION tenant.whoami() RETURNS text LANGUAGE sql AS $$ SELECT current_user::text $$;
RESET ROLE;
SELECT shardid.create_table('tenant.notes');
DO $$
DECLARE s record;
BEGIN
    FOR s IN SELECT schema FROM shardid.shards LOOP
        EXECUTE format('ALTER TABLE %I.notes OWNER TO regress_ros_tenant', s.schema);
        EXECUTE format('GRANT USAGE ON SCHEMA %I TO regress_ros_tenant, regress_ros_other', s.schema);
    END LOOP;
END $$;
SELECT * FROM shardid.run_on_shards('tenant.notes', 'SELECT tenant.whoami() || '' '' || count(*) FROM %s');
-- (the message differs between majors: the SQLSTATE is what counts)
SELECT shard, success, substring(result FROM '\(SQLSTATE \w+\)$') AS error
  FROM shardid.run_on_shards('tenant.notes', 'SELECT tenant.pwn() FROM %s UNION ALL SELECT tenant.pwn()');
SELECT rolsuper AS tenant_is_superuser FROM pg_roles WHERE rolname = 'regress_ros_tenant';
-- a copy another role owns runs as that role: its own owner
ALTER TABLE shard_0001.notes OWNER TO regress_ros_other;
SELECT * FROM shardid.run_on_shards('tenant.notes', 'SELECT current_user::text || '' '' || count(*) FROM %s');
-- statements are for the caller's role, whoever the loopback connects as:
-- one without the owners' privileges is refused (as_role), before or per copy
SELECT * FROM shardid_internal._run_on_shards_batch('tenant.notes', 'SELECT count(*) FROM %s', '{1,2}', false, 'regress_ros_other');
SELECT * FROM shardid_internal._run_on_shards_batch('tenant.notes', 'SELECT count(*) FROM %s', '{1,2,7}', false, 'regress_ros_tenant');
-- a tenant on a node: the loopback is for superusers
SET ROLE regress_ros_tenant;
SELECT * FROM shardid.run_on_shards('tenant.notes', 'SELECT count(*) FROM %s');
RESET ROLE;

\c :regress_db
SET client_min_messages = warning;
DROP DATABASE regress_run_on_shards;
DROP ROLE regress_ros_reader;
DROP ROLE regress_ros_tenant;
DROP ROLE regress_ros_other;
