-- ddl_undo: abandon_ddl(template, undo => true) on a node (issue 46): a
-- change that failed part of the way is reversed where it was applied, as
-- a change of its own run by apply_ddl() (over a loopback connection): a
-- CREATE UNIQUE INDEX CONCURRENTLY (the invalid index its failed build
-- left dropped too), an ADD CONSTRAINT, a SET DEFAULT and a SET
-- STATISTICS (the previous value read from the tables that lack the
-- change). Refusals with their SQLSTATEs, before anything changes: no
-- open change, a change with no safe inverse (ADD COLUMN, a type change:
-- the HINT is the apply_ddl() call that completes it), a previous value
-- no table keeps. undo => false is abandon_ddl(template).
SET client_min_messages = warning;
SET timezone = 'UTC';
\set regress_db :DBNAME
DROP DATABASE IF EXISTS regress_ddl_undo;
CREATE DATABASE regress_ddl_undo;
\c regress_ddl_undo
SET client_min_messages = notice;
\set SHOW_CONTEXT never
CREATE EXTENSION shardid;
CREATE EXTENSION dblink;
CREATE TABLE public.posts (id bigint PRIMARY KEY, user_id bigint NOT NULL, body text DEFAULT 'x');
CALL shardid.create_shards_proc(0, 5);
CALL shardid.create_table_proc('public.posts');
INSERT INTO shard_0003.posts (user_id, body) VALUES (1, 'a'), (1, 'b');

-- the tables (template, copies) that have an index of that name, valid or not
CREATE FUNCTION pg_temp.indexes(name text) RETURNS text LANGUAGE sql AS $$
    SELECT COALESCE(string_agg(n.nspname || CASE WHEN x.indisvalid THEN '' ELSE ' (invalid)' END, ', ' ORDER BY n.nspname), 'none')
      FROM pg_index AS x JOIN pg_class AS i ON i.oid = x.indexrelid JOIN pg_namespace AS n ON n.oid = i.relnamespace
     WHERE i.relname = name
$$;

-- refused: no open change
SELECT * FROM shardid.abandon_ddl('public.posts', undo => true);
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT * FROM shardid.abandon_ddl('public.posts', undo => NULL);
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;

-- a unique index over duplicates in shard 3: fails there, one table at a
-- time, so the template and shards 0-2 have it and shard 3 an invalid one
CALL shardid.apply_ddl('public.posts', 'CREATE UNIQUE INDEX CONCURRENTLY posts_user_uq ON %s (user_id)', connections => 1);
SELECT pg_temp.indexes('posts_user_uq');
SELECT * FROM shardid.abandon_ddl('public.posts', undo => true);
SELECT pg_temp.indexes('posts_user_uq');
SELECT change_id, kind, command, finished_at IS NOT NULL AS closed, abandoned FROM shardid.ddl_changes ORDER BY change_id;

-- ADD CONSTRAINT, failing in the second batch: dropped where it was added
UPDATE shard_0003.posts SET user_id = -1 WHERE body = 'a';
CALL shardid.apply_ddl('public.posts', 'ALTER TABLE %s ADD CONSTRAINT posts_user_pos CHECK (user_id > 0)', batch_size => 2);
SELECT count(*) AS tables_with_it FROM pg_constraint WHERE conname = 'posts_user_pos';
SELECT node, command, targets_with FROM shardid.abandon_ddl('public.posts', undo => true);
SELECT count(*) AS tables_with_it FROM pg_constraint WHERE conname = 'posts_user_pos';

-- SET DEFAULT, failing on shard 3 (its column renamed, and so are those
-- of shards 4 and 5): no table that lacks it has the column, so the
-- previous value is not known (55000); once shard 5's is back, it is:
-- 'x' again where 'y' was set
ALTER TABLE shard_0003.posts RENAME COLUMN body TO body_3;
ALTER TABLE shard_0004.posts RENAME COLUMN body TO body_4;
ALTER TABLE shard_0005.posts RENAME COLUMN body TO body_5;
CALL shardid.apply_ddl('public.posts', 'ALTER TABLE %s ALTER COLUMN body SET DEFAULT ''y''', batch_size => 2);
SELECT * FROM shardid.abandon_ddl('public.posts', undo => true);
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
ALTER TABLE shard_0005.posts RENAME COLUMN body_5 TO body;
SELECT node, command, targets_with FROM shardid.abandon_ddl('public.posts', undo => true);
ALTER TABLE shard_0003.posts RENAME COLUMN body_3 TO body;
ALTER TABLE shard_0004.posts RENAME COLUMN body_4 TO body;
SELECT string_agg(DISTINCT pg_get_expr(d.adbin, d.adrelid), ', ') AS defaults
  FROM pg_attrdef AS d JOIN pg_class AS c ON c.oid = d.adrelid
  JOIN pg_attribute AS a ON a.attrelid = c.oid AND a.attnum = d.adnum
 WHERE c.relname = 'posts' AND a.attname = 'body';

-- SET STATISTICS, failing on shard 4 (its column renamed): back to the
-- default (-1; PostgreSQL 17 and later store it as NULL)
ALTER TABLE shard_0004.posts RENAME COLUMN body TO body_4;
CALL shardid.apply_ddl('public.posts', 'ALTER TABLE %s ALTER COLUMN body SET STATISTICS 500', batch_size => 2);
ALTER TABLE shard_0004.posts RENAME COLUMN body_4 TO body;
SELECT node, command, targets_with FROM shardid.abandon_ddl('public.posts', undo => true);
SELECT string_agg(DISTINCT COALESCE(a.attstattarget::integer, -1)::text, ', ') AS targets
  FROM pg_attribute AS a JOIN pg_class AS c ON c.oid = a.attrelid
 WHERE c.relname = 'posts' AND c.relkind = 'r' AND a.attname = 'body';

-- no safe inverse: refused before anything changes, the HINT completes it
CALL shardid.apply_ddl('public.posts', 'ALTER TABLE %s ADD COLUMN n integer NOT NULL', batch_size => 2);
SELECT * FROM shardid.abandon_ddl('public.posts', undo => true);
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT change_id, finished_at IS NULL AS open FROM shardid.ddl_changes WHERE command LIKE '%ADD COLUMN n%';
-- undo => false: abandon_ddl(template), as far as it got
SELECT node, targets_with, targets_without, without FROM shardid.abandon_ddl('public.posts', undo => false);
-- a type change: refused the same way
UPDATE shard_0003.posts SET body = repeat('z', 20) WHERE body = 'b';
CALL shardid.apply_ddl('public.posts', 'ALTER TABLE %s ALTER COLUMN body TYPE varchar(10)', batch_size => 2);
SELECT * FROM shardid.abandon_ddl('public.posts', undo => true);
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;

\c :regress_db
SET client_min_messages = warning;
DROP DATABASE regress_ddl_undo;
