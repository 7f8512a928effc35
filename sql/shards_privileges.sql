-- Who may create shards, and the grants an application role needs.
SET client_min_messages = warning;
\set regress_db :DBNAME
DROP DATABASE IF EXISTS regress_shards_priv;
DROP ROLE IF EXISTS regress_shard_admin, regress_shard_other, regress_shard_app;
CREATE DATABASE regress_shards_priv;
CREATE ROLE regress_shard_admin;
CREATE ROLE regress_shard_other;
CREATE ROLE regress_shard_app;
\c regress_shards_priv
SET client_min_messages = warning;
\set SHOW_CONTEXT never
CREATE EXTENSION shardid;
CREATE TABLE public.photos (id bigint PRIMARY KEY, caption text);
GRANT SELECT ON public.photos TO regress_shard_admin, regress_shard_other;

-- Without CREATE on the database: refused.
SET ROLE regress_shard_admin;
SELECT shardid.create_shard(1);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
-- CREATE on the database is not enough: the registry needs a grant too.
GRANT CREATE ON DATABASE regress_shards_priv TO regress_shard_admin, regress_shard_other;
SET ROLE regress_shard_admin;
SELECT shardid.create_shard(1);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.create_table('public.photos');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.shard_schema(1);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT count(*) AS shards FROM shardid.shard_registry;
-- With both, the shard admin creates shards it owns.
GRANT INSERT, UPDATE, DELETE ON shardid.shard_registry, shardid.sharded_tables
    TO regress_shard_admin, regress_shard_other;
SET ROLE regress_shard_admin;
SELECT shardid.create_shards(1, 2);
SELECT shardid.create_table('public.photos');
RESET ROLE;
SELECT nspname, pg_get_userbyid(nspowner) AS owner FROM pg_namespace WHERE nspname LIKE 'shard\_%' ORDER BY 1;
SELECT pg_get_userbyid(relowner) AS owner, count(*) FROM pg_class
 WHERE relnamespace IN ('shard_0001'::regnamespace, 'shard_0002'::regnamespace) GROUP BY 1;
-- another admin cannot add tables to shards it does not own
CREATE TABLE public.tags (id bigint);
GRANT SELECT ON public.tags TO regress_shard_other;
SET ROLE regress_shard_other;
SELECT shardid.create_table('public.tags');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;

SET ROLE regress_shard_admin;
INSERT INTO shard_0002.photos (caption) VALUES ('b');
RESET ROLE;
-- An application role needs USAGE on the shard schema, INSERT (and what
-- else it does) on the tables, and USAGE on the generator sequence.
SET ROLE regress_shard_app;
INSERT INTO shard_0001.photos (caption) VALUES ('a');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SET ROLE regress_shard_admin;
GRANT USAGE ON SCHEMA shard_0001 TO regress_shard_app;
GRANT INSERT, SELECT ON shard_0001.photos TO regress_shard_app;
RESET ROLE;
SET ROLE regress_shard_app;
INSERT INTO shard_0001.photos (caption) VALUES ('a');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SET ROLE regress_shard_admin;
GRANT USAGE ON SEQUENCE shard_0001.id_seq TO regress_shard_app;
RESET ROLE;
SET ROLE regress_shard_app;
INSERT INTO shard_0001.photos (caption) VALUES ('a') RETURNING shardid.id_shard(id);
-- the registry is readable by everyone; generator state only with privileges
SELECT shard, schema, last_id IS NOT NULL AS state_visible FROM shardid.shards ORDER BY shard;
SELECT shardid.shard_schema(2);
-- and the application cannot change it
SELECT shardid.create_shard(3);
\echo :LAST_ERROR_SQLSTATE
DELETE FROM shardid.shard_registry;
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;

\c :regress_db
SET client_min_messages = warning;
DROP DATABASE regress_shards_priv;
DROP ROLE regress_shard_admin, regress_shard_other, regress_shard_app;
