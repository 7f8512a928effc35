-- time_partitions_names: partition names of create_time_partitions() fit
-- 63 bytes without splitting a character and stay distinct, also for a
-- parent whose name is long and multibyte (issue 19: every partition was
-- cut to the same name, one was made, inserts failed). In a UTF8 database
-- of its own, whatever the server's default encoding.
SET client_min_messages = warning;
\set regress_db :DBNAME
DROP DATABASE IF EXISTS regress_tp_names;
DROP ROLE IF EXISTS regress_tp_owner;
CREATE DATABASE regress_tp_names TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C';
CREATE ROLE regress_tp_owner;
\c regress_tp_names
SET client_encoding = 'UTF8';
SET client_min_messages = notice;
SET timezone = 'UTC';
\set SHOW_CONTEXT never
CREATE EXTENSION shardid;
GRANT CREATE ON SCHEMA public TO regress_tp_owner;

-- 30 Cyrillic letters: 60 bytes. Daily names need 10 bytes of suffix,
-- sub-daily ones 15: the base keeps 26 and 24 letters.
SET ROLE regress_tp_owner;
CREATE TABLE public."шшшшшшшшшшшшшшшшшшшшшшшшшшшшшш" (id bigint NOT NULL) PARTITION BY RANGE (id);
SELECT p FROM shardid.create_time_partitions('public."шшшшшшшшшшшшшшшшшшшшшшшшшшшшшш"',
                                             '2024-01-01', '2024-01-04', '1 day') AS p;
SELECT p FROM shardid.create_time_partitions('public."шшшшшшшшшшшшшшшшшшшшшшшшшшшшшш"',
                                             '2024-01-04', '2024-01-04 12:00', '6 hours') AS p;
-- again: nothing new
SELECT count(*) AS made_again
  FROM shardid.create_time_partitions('public."шшшшшшшшшшшшшшшшшшшшшшшшшшшшшш"',
                                      '2024-01-01', '2024-01-04', '1 day');
SELECT c.relname, octet_length(c.relname) AS bytes, c.relname::text ~ '^ш+_p2024' AS whole_letters
  FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid
 WHERE i.inhparent = 'public."шшшшшшшшшшшшшшшшшшшшшшшшшшшшшш"'::regclass ORDER BY 1;
-- every row finds its partition
INSERT INTO public."шшшшшшшшшшшшшшшшшшшшшшшшшшшшшш"
SELECT shardid.make_id('2024-01-01'::timestamptz + g * interval '6 hours', 1, 0) FROM generate_series(0, 13) AS g;
SELECT tableoid::regclass AS partition, count(*)
  FROM public."шшшшшшшшшшшшшшшшшшшшшшшшшшшшшш" GROUP BY 1 ORDER BY min(id);

-- A cut that falls inside a character: "a" and 20 euro signs (61 bytes)
-- keep "a" and 17 of them (52 bytes) before "_p20240101".
CREATE TABLE public."a€€€€€€€€€€€€€€€€€€€€" (id bigint NOT NULL) PARTITION BY RANGE (id);
SELECT p FROM shardid.create_time_partitions('public."a€€€€€€€€€€€€€€€€€€€€"', '2024-01-01', '2024-01-02', '1 day') AS p;
SELECT octet_length(relname) AS bytes FROM pg_class WHERE relname LIKE 'a€%\_p20240101';

-- Another parent whose name is cut to the same 52 bytes (its 19th
-- character, 2 bytes, does not fit either) would get the same partition
-- names: refused, rather than taking the other's partitions for its own.
CREATE TABLE public."a€€€€€€€€€€€€€€€€€жcopy" (id bigint NOT NULL) PARTITION BY RANGE (id);
SELECT p FROM shardid.create_time_partitions('public."a€€€€€€€€€€€€€€€€€жcopy"', '2024-01-01', '2024-01-02', '1 day') AS p;
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;

\c :regress_db
SET client_min_messages = warning;
DROP DATABASE regress_tp_names;
DROP ROLE regress_tp_owner;
