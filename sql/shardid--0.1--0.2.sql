-- shardid 0.1 -> 0.2: ALTER EXTENSION shardid UPDATE TO '0.2'.
-- Everything this script creates or changes is also in sql/install/*.sql,
-- the 0.2 install script; test/update checks that both give the same objects.

\echo Use "ALTER EXTENSION shardid UPDATE TO '0.2'" to load this file. \quit
