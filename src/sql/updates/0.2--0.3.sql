-- shardid 0.2 -> 0.3: what CREATE OR REPLACE cannot do. The build appends
-- every function, procedure and view of src/sql/install/*.sql
-- (src/sql/include.awk), so the upgrade script build/shardid--0.2--0.3.sql
-- re-creates each of them from the same source as the install script; test/tap/update.pl checks that both
-- give the same objects (from 0.1 through 0.2, and from 0.2).

\echo Use "ALTER EXTENSION shardid UPDATE TO '0.3'" to load this file. \quit

-- The install script's schema check, so a 0.2 installed into a schema that
-- a non-superuser owns or may create in is not updated either.
\ir ../checks/extension_schema.sql

-- Internal helpers move out of the user's way (\df shardid.* lists what
-- docs/reference.md documents for users): every function, procedure and
-- view of 0.2 whose name begins with "_" goes to the schema
-- shardid_internal. SET SCHEMA keeps each object's OID, so the triggers on
-- users' tables that call them (a frozen or retired shard's) keep working;
-- the rest of this script re-creates each from its source there.
\ir ../schemas/shardid_internal.sql
DO $$
DECLARE
    o record;
BEGIN
    FOR o IN SELECT CASE p.prokind WHEN 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END AS kind,
                    pg_catalog.format('shardid.%I(%s)', p.proname, pg_catalog.pg_get_function_identity_arguments(p.oid)) AS what
               FROM pg_catalog.pg_proc AS p
              WHERE p.pronamespace OPERATOR(pg_catalog.=) 'shardid'::pg_catalog.regnamespace
                AND pg_catalog.starts_with(p.proname, '_')
    LOOP
        EXECUTE pg_catalog.format('ALTER %s %s SET SCHEMA shardid_internal', o.kind, o.what);
    END LOOP;
    FOR o IN SELECT pg_catalog.format('shardid.%I', c.relname) AS what
               FROM pg_catalog.pg_class AS c
              WHERE c.relnamespace OPERATOR(pg_catalog.=) 'shardid'::pg_catalog.regnamespace
                AND c.relkind OPERATOR(pg_catalog.=) 'v' AND pg_catalog.starts_with(c.relname, '_')
    LOOP
        EXECUTE pg_catalog.format('ALTER VIEW %s SET SCHEMA shardid_internal', o.what);
    END LOOP;
END
$$;

-- New in 0.3: the template of a sharded table cannot be dropped while it
-- is registered (shardid.drop_table() first). The event trigger is not a
-- function the build appends, so this part creates it, after its function.
\ir ../functions/_refuse_template_drop.sql
\ir ../event_triggers/template_drop.sql

-- Moves and rebalances lock through rows of shardid.session_locks, which
-- only administrators may take, instead of advisory locks on fixed keys.
\ir ../tables/session_locks.sql

-- Retired copies are recognised by what the move recorded (their schema's
-- OID and the relations shardid made in it), no longer by the trigger on
-- their tables alone. Copies a 0.2 move retired are not recorded: nothing
-- tells them safely from a schema a tenant moved a retired table into, so
-- shardid.retired_copies lists them as not recorded and
-- drop_retired_copies() keeps them (docs/rebalancing.md: drop them by hand).
\ir ../tables/retired_schemas.sql

-- Offline moves copy the rows as the tables' owners: the check of code
-- that a superuser's copy would have run is gone.
DROP FUNCTION shardid_internal._move_untrusted_code(name);

-- One idempotent connect: _node_connect() keeps a connection that is open
-- (0.2's _node_ensure), and _node_open()'s test is inlined where it is used.
DROP FUNCTION shardid_internal._node_ensure(text, text);
DROP FUNCTION shardid_internal._node_open(text);

-- The phase functions of a move take the move's row (move_shard() holds
-- it) instead of reading it again; move_shard() carries its run from step
-- to step in the type _move_run (_move_start, _move_step).
DROP FUNCTION shardid_internal._move_schema(integer);
DROP FUNCTION shardid_internal._move_copy(integer, interval, interval, jsonb);
DROP FUNCTION shardid_internal._move_cutover(integer, interval, interval);
DROP FUNCTION shardid_internal._move_repoint(integer);
DROP FUNCTION shardid_internal._move_finish(integer, boolean, interval);
\ir ../types/_move_run.sql

-- add_node() and place_shards() gained force (they check the node unless
-- it is given); the new signatures replace the old ones.
DROP FUNCTION shardid.add_node(text, text);
DROP FUNCTION shardid.place_shards(text, integer, integer);

-- Background rebalances: their jobs.
\ir ../tables/rebalance_jobs.sql

-- apply_ddl()'s ledger (part 38)
\ir ../tables/ddl_changes.sql
\ir ../tables/ddl_applied.sql

-- shardid.generators gained failover_pending (issue 37) after lead, from
-- _generator_states()'s new column: the view and the function it reads
-- change their columns, which CREATE OR REPLACE cannot do. The rest of
-- this script re-creates both, with their privileges and comments.
DROP VIEW shardid.generators;
DROP FUNCTION shardid_internal._generator_states();
