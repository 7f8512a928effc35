-- install_schema: CREATE EXTENSION refuses a schema "shardid" that a
-- non-superuser prepared (owns, or may create in), so no one can plant an
-- overload such as next_id(integer, text) beside shardid's functions.
SET client_min_messages = warning;
\set regress_db :DBNAME
DROP DATABASE IF EXISTS regress_install_schema;
DROP ROLE IF EXISTS regress_squatter;
CREATE DATABASE regress_install_schema;
CREATE ROLE regress_squatter;
GRANT CREATE ON DATABASE regress_install_schema TO regress_squatter;
\c regress_install_schema
SET client_min_messages = warning;
\set SHOW_CONTEXT never

-- A role with CREATE on the database squats the schema and plants an overload.
SET ROLE regress_squatter;
CREATE SCHEMA shardid;
CREATE FUNCTION shardid.next_id(integer, text) RETURNS bigint
    LANGUAGE sql AS 'SELECT 42::bigint';
RESET ROLE;
CREATE EXTENSION shardid;
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS extensions FROM pg_extension WHERE extname = 'shardid';

-- Owned by a superuser but open to CREATE by others: refused as well.
DROP SCHEMA shardid CASCADE;
CREATE SCHEMA shardid;
GRANT CREATE ON SCHEMA shardid TO regress_squatter, PUBLIC;
CREATE EXTENSION shardid;
\echo :LAST_ERROR_SQLSTATE
REVOKE CREATE ON SCHEMA shardid FROM PUBLIC;
CREATE EXTENSION shardid;
\echo :LAST_ERROR_SQLSTATE
REVOKE CREATE ON SCHEMA shardid FROM regress_squatter;

-- 0.1 did not check: a 0.1 installed into a schema others may create in
-- is not updated to 0.2 until that is fixed.
GRANT CREATE ON SCHEMA shardid TO regress_squatter;
CREATE EXTENSION shardid VERSION '0.1';
ALTER EXTENSION shardid UPDATE TO '0.2';
\echo :LAST_ERROR_SQLSTATE
SELECT extversion FROM pg_extension WHERE extname = 'shardid';
REVOKE CREATE ON SCHEMA shardid FROM regress_squatter;
ALTER EXTENSION shardid UPDATE TO '0.2';
SELECT extversion FROM pg_extension WHERE extname = 'shardid';
-- 0.2 -> 0.3 checks the same.
GRANT CREATE ON SCHEMA shardid TO regress_squatter;
\set LAST_ERROR_SQLSTATE 00000
ALTER EXTENSION shardid UPDATE TO '0.3';
\echo :LAST_ERROR_SQLSTATE
SELECT extversion FROM pg_extension WHERE extname = 'shardid';
REVOKE CREATE ON SCHEMA shardid FROM regress_squatter;
ALTER EXTENSION shardid UPDATE TO '0.3';
SELECT extversion FROM pg_extension WHERE extname = 'shardid';
-- 0.3 -> 0.4 checks the same.
GRANT CREATE ON SCHEMA shardid TO regress_squatter;
\set LAST_ERROR_SQLSTATE 00000
ALTER EXTENSION shardid UPDATE TO '0.4';
\echo :LAST_ERROR_SQLSTATE
SELECT extversion FROM pg_extension WHERE extname = 'shardid';
REVOKE CREATE ON SCHEMA shardid FROM regress_squatter;
ALTER EXTENSION shardid UPDATE TO '0.4';
SELECT extversion FROM pg_extension WHERE extname = 'shardid';
-- 0.4 -> 0.5 checks the same.
GRANT CREATE ON SCHEMA shardid TO regress_squatter;
\set LAST_ERROR_SQLSTATE 00000
ALTER EXTENSION shardid UPDATE TO '0.5';
\echo :LAST_ERROR_SQLSTATE
SELECT extversion FROM pg_extension WHERE extname = 'shardid';
REVOKE CREATE ON SCHEMA shardid FROM regress_squatter;
ALTER EXTENSION shardid UPDATE TO '0.5';
SELECT extversion FROM pg_extension WHERE extname = 'shardid';
DROP EXTENSION shardid;

-- The owner and CREATE privilege are not enough (issue 19): a squatter's
-- overload survives an owner fixed by an administrator. 0.1 checked
-- nothing, so it installs beside the squatter's next_id(integer, text); the
-- update is refused for the owner, then, once a superuser owns the schema,
-- for the overload, which it names. An untyped literal runs it.
DROP SCHEMA shardid;
SET ROLE regress_squatter;
CREATE SCHEMA shardid;
CREATE FUNCTION shardid.next_id(integer, text) RETURNS bigint
    LANGUAGE sql AS 'SELECT 42::bigint';
RESET ROLE;
CREATE EXTENSION shardid VERSION '0.1';
ALTER EXTENSION shardid UPDATE TO '0.2';
\echo :LAST_ERROR_SQLSTATE
ALTER SCHEMA shardid OWNER TO CURRENT_USER;
\set LAST_ERROR_SQLSTATE 00000
ALTER EXTENSION shardid UPDATE TO '0.2';
\echo :LAST_ERROR_SQLSTATE
SELECT extversion FROM pg_extension WHERE extname = 'shardid';
SELECT shardid.next_id(5, 'public.no_such_sequence') AS squatter_overload;
DROP FUNCTION shardid.next_id(integer, text);
ALTER EXTENSION shardid UPDATE TO '0.2';
SELECT extversion FROM pg_extension WHERE extname = 'shardid';
DROP EXTENSION shardid;

-- Any kind of object that is not the extension's is refused, also in a
-- schema a superuser made, at CREATE EXTENSION; each is named once (a
-- table's row type, an index, its statistics are the table's).
CREATE FUNCTION shardid.helper(integer) RETURNS integer LANGUAGE sql AS 'SELECT $1';
CREATE PROCEDURE shardid.proc() LANGUAGE sql AS 'SELECT 1';
CREATE AGGREGATE shardid.total(integer) (SFUNC = int4pl, STYPE = integer);
CREATE TABLE shardid.leftover (a integer PRIMARY KEY, b integer);
CREATE STATISTICS shardid.leftover_stats ON a, b FROM shardid.leftover;
CREATE VIEW shardid.leftover_view AS SELECT 1 AS one;
CREATE SEQUENCE shardid.leftover_seq;
CREATE TYPE shardid.pair AS (x integer, y integer);
CREATE TYPE shardid.mood AS ENUM ('ok');
CREATE DOMAIN shardid.positive AS integer CHECK (VALUE > 0);
CREATE OPERATOR shardid.=== (LEFTARG = integer, RIGHTARG = integer, FUNCTION = int4eq);
CREATE COLLATION shardid.binary FROM "C";
CREATE TEXT SEARCH CONFIGURATION shardid.words (COPY = pg_catalog.simple);
\set LAST_ERROR_SQLSTATE 00000
CREATE EXTENSION shardid;
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS extensions FROM pg_extension WHERE extname = 'shardid';
DROP SCHEMA shardid CASCADE;
CREATE SCHEMA shardid;

-- A superuser's own schema (e.g. left by DROP EXTENSION, or restored by
-- pg_dump) is accepted.
CREATE EXTENSION shardid;
SELECT pg_get_userbyid(nspowner) = current_user AS superuser_owned
  FROM pg_namespace WHERE nspname = 'shardid';
DROP EXTENSION shardid;
SELECT count(*) AS schema_left FROM pg_namespace WHERE nspname = 'shardid';
CREATE EXTENSION shardid;
SELECT extversion FROM pg_extension WHERE extname = 'shardid';

-- The DEFAULT the README shows is regclass-typed: it calls shardid's
-- next_id(integer, regclass) even if an (integer, text) overload existed.
CREATE SEQUENCE public.photos_gen AS bigint;
CREATE TABLE public.photos (
    id bigint PRIMARY KEY DEFAULT shardid.next_id(5, 'public.photos_gen'::regclass),
    caption text
);
SELECT pg_get_expr(adbin, adrelid) AS id_default FROM pg_attrdef
 WHERE adrelid = 'public.photos'::regclass;
INSERT INTO public.photos (caption) VALUES ('dog') RETURNING shardid.id_shard(id) AS shard;

-- Shard helpers write the regclass-typed form too.
SELECT shardid.create_shard(3);
SELECT shardid.create_table('public.photos');
SELECT pg_get_expr(adbin, adrelid) AS shard_default FROM pg_attrdef
 WHERE adrelid = 'shard_0003.photos'::regclass;

\c :regress_db
SET client_min_messages = warning;
DROP DATABASE regress_install_schema;
DROP ROLE regress_squatter;
