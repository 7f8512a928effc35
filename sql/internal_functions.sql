-- internal_functions: who may execute shardid's functions (issue 19).
-- Internal functions (_name) are not executable by PUBLIC unless a function
-- that PUBLIC may call needs them; every function PUBLIC may execute is on
-- the list below with its reason, so a new one cannot slip in unnoticed.
-- In a database of its own: configure() needs one that has issued no ID.
SET client_min_messages = warning;
\set regress_db :DBNAME
DROP DATABASE IF EXISTS regress_internal_functions;
DROP DATABASE IF EXISTS regress_if_fresh;
DROP ROLE IF EXISTS regress_if_user, regress_if_admin, regress_if_fresh_user;
CREATE DATABASE regress_internal_functions;
CREATE ROLE regress_if_user;
CREATE ROLE regress_if_admin;
GRANT CREATE ON DATABASE regress_internal_functions TO regress_if_admin;
\c regress_internal_functions
SET client_min_messages = warning;
SET timezone = 'UTC';
\set SHOW_CONTEXT never
CREATE EXTENSION shardid;
GRANT CREATE ON SCHEMA public TO regress_if_admin;

CREATE TEMP TABLE public_execute (fn text PRIMARY KEY, why text NOT NULL);
INSERT INTO public_execute VALUES
    ('shardid.next_id(integer,regclass)', 'the generator, called by the column DEFAULTs of every role'),
    ('shardid.id_time(bigint)', 'decoder'),
    ('shardid.id_shard(bigint)', 'decoder'),
    ('shardid.id_seq(bigint)', 'decoder'),
    ('shardid.id_decode(bigint)', 'decoder'),
    ('shardid.make_id(timestamp with time zone,integer,integer)', 'pure composition'),
    ('shardid.time_to_id(timestamp with time zone)', 'pure, for range scans'),
    ('shardid.to_shortcode(bigint)', 'pure'),
    ('shardid.from_shortcode(text)', 'pure'),
    ('shardid.layout()', 'reports the layout'),
    ('shardid.sync_generators()', 'table owners; reads with their SELECT, raises with their UPDATE'),
    ('shardid.create_shard(integer)', 'shard administrators (registry grants checked)'),
    ('shardid.create_shards(integer,integer)', 'shard administrators (registry grants checked)'),
    ('shardid.shard_schema(integer)', 'applications find a shard''s schema'),
    ('shardid.create_table(regclass,name)', 'shard administrators (registry grants checked)'),
    ('shardid.drop_table(regclass)', 'shard administrators (registry grants and the template''s ownership checked; DROP TABLE checks each copy''s)'),
    ('shardid.attach_shard(integer,name)', 'shard administrators (registry grants checked)'),
    ('shardid.detach_shard(integer)', 'shard administrators (registry grants checked)'),
    ('shardid.adopt(regclass,integer,regclass,name)', 'shard administrators (registry and ownership checked)'),
    ('shardid.create_time_partitions(regclass,timestamp with time zone,timestamp with time zone,interval)', 'owners of partitioned tables'),
    ('shardid.placed_shards()', 'applications fan out over the placed shards (router)'),
    ('shardid.partition_connstrs()', 'reads shardid.nodes: rows only for roles that may read it'),
    ('shardid_internal._require_generator(regclass)', 'called by adopt() and attach_shard()'),
    ('shardid_internal._require_registry_privileges(text,boolean)', 'called by the shard functions'),
    ('shardid_internal._require_shard(integer)', 'called by the shard functions'),
    ('shardid_internal._require_shard_range(integer,integer)', 'called by create_shards() and create_shards_proc()'),
    ('shardid_internal._require_templates()', 'called by create_shard() and attach_shard()'),
    ('shardid_internal._require_template(shardid.sharded_tables)', 'called by _require_templates() and create_table(_proc)()'),
    ('shardid_internal._create_shard_tables(integer,boolean)', 'called by create_shard() and attach_shard()'),
    ('shardid_internal._shard_schema_name(integer)', 'called by create_shard(s)() and attach_shard()'),
    ('shardid_internal._fit_name(text,text)', 'called by create_time_partitions()'),
    ('shardid.create_shards_proc(integer,integer,integer)', 'shard administrators (registry grants checked)'),
    ('shardid.create_table_proc(regclass,name,integer)', 'shard administrators (registry grants checked)'),
    ('shardid_internal._commit_allowed()', 'called by every procedure, as _require_commit()''s first argument'),
    ('shardid_internal._require_commit(boolean,text,text,text)', 'called by every procedure: raises 25001 or does nothing'),
    ('shardid_internal._require_batch_size(integer)', 'called by the *_proc procedures'),
    ('shardid_internal._create_shards_start(integer,integer,integer)', 'called by create_shards_proc()'),
    ('shardid_internal._create_shards_batch(integer,integer,integer)', 'called by create_shards() and create_shards_proc()'),
    ('shardid_internal._create_table_start(regclass,name,integer)', 'called by create_table_proc()'),
    ('shardid_internal._create_table_batch(name,integer)', 'called by create_table() and create_table_proc()'),
    ('shardid_internal._raise_out_of_locks(text,text,text,text,text,integer,integer)', 'called by _create_shards_batch() and _create_table_batch(): only raises'),
    ('shardid_internal._register_table(text,regclass,name,boolean)', 'called by create_table() and create_table_proc()'),
    ('shardid_internal._create_shard_table(shardid.shard_registry,shardid.sharded_tables)', 'called by the shard functions and procedures'),
    ('shardid_internal._raise(text,text,text,text)', 'raises an error, which grants nothing; called by the event trigger shardid_template_drop'),
    ('shardid_internal._raise_generator(regclass,bigint)', 'called by sync_generators(); checks UPDATE on the sequence as setval() does'),
    ('shardid_internal._index_list(regclass)', 'called by _create_shard_table(): reads the catalog'),
    -- issue 44: definitions from the catalog; a fix is a call
    ('shardid_internal._run_as_owner_read(regrole,text)', 'the fence for run_on_shards() reads, read-only; only as a role the caller has the privileges of'),
    ('shardid_internal._index_statement(oid,regclass)', 'called by _index_list() with the caller''s rights: reads the catalog'),
    ('shardid.finish_ddl(bigint)', 'apply_ddl() of a change by its ID: apply_ddl() checks the caller'),
    ('shardid_internal._finish_ddl_change(bigint)', 'called by finish_ddl() as the caller: reads the ledger, as apply_ddl() does'),
    ('shardid_internal._name_indexes(regclass,jsonb)', 'called by _create_shard_table(); ALTER INDEX checks ownership'),
    ('shardid.apply_ddl(text,text,integer,text,interval,integer)', 'template owners (membership of the owner checked; statements run as the owner)'),
    ('shardid_internal._apply_ddl_start(text,text,boolean,text)', 'called by apply_ddl() (membership of the template owner checked)'),
    ('shardid_internal._apply_ddl_batch(shardid.ddl_changes,integer,interval,integer,integer,integer)', 'called by apply_ddl()'),
    ('shardid_internal._ddl_options(jsonb)', 'called by apply_ddl() and, on a node, by the router''s CALL: builds and checks the options record'),
    ('shardid_internal._apply_ddl_check(text,name,name)', 'called by apply_ddl(): pure'),
    ('shardid_internal._ddl_template(text,name,name)', 'called by apply_ddl(): pure'),
    ('shardid_internal._ddl_command(text,name,name)', 'called by apply_ddl(): parses only'),
    ('shardid_internal._ddl_inverse(text)', 'called by abandon_ddl(undo => true): parses only'),
    ('shardid_internal._apply_ddl_claim(bigint,text[])', 'called by apply_ddl() (membership of the template owner checked)'),
    ('shardid_internal._apply_ddl_mark_done(bigint,text)', 'called by apply_ddl(); writes the ledger with the caller''s grants'),
    ('shardid_internal._apply_ddl_close_change(bigint)', 'called by apply_ddl(); writes the ledger with the caller''s grants'),
    ('shardid_internal._apply_ddl_on_nodes()', 'called by apply_ddl()'),
    ('shardid_internal._apply_ddl_owner(name)', 'called by apply_ddl(); checks membership of the template owner'),
    ('shardid.abandon_ddl(text,boolean)', 'closes a change of a table the caller may change (checks the template owner); on a router, administrators only; its undo needs what apply_ddl() CONCURRENTLY needs'),
    ('shardid_internal._apply_ddl_failed(bigint,text)', 'called by apply_ddl() over its loopback; checks the template owner'),
    ('shardid_internal._apply_ddl_first_batch(shardid.ddl_changes,integer,integer,integer,interval)', 'called by apply_ddl(); its functions check the caller'),
    ('shardid_internal._apply_ddl_grants()', 'called by apply_ddl(); reads the caller''s privileges'),
    ('shardid_internal._apply_ddl_here(text,text,shardid.ddl_options,text)', 'the node loop of apply_ddl(); its functions check the caller'),
    ('shardid_internal._apply_ddl_raise(shardid.ddl_changes,integer,text,text,text,text,text)', 'called by apply_ddl(): raises the caller''s error'),
    ('shardid_internal._apply_ddl_rerun(shardid.ddl_changes)', 'called by apply_ddl(): reads the ledger and the template'),
    ('shardid_internal._apply_ddl_same_indexes(bigint,text)', 'called by apply_ddl() over its connection: reads the catalogs'),
    ('shardid_internal._apply_ddl_record(shardid.ddl_changes,integer,integer,text)', 'called by apply_ddl(); writes the ledger with the caller''s grants'),
    ('shardid_internal._apply_ddl_skip(text,text,text)', 'called by apply_ddl(): a NOTICE'),
    ('shardid_internal._apply_ddl_owners(name,name,integer)', 'called by apply_ddl(); reads the copies'' owners'),
    ('shardid_internal._run_as_owner(regrole,text,boolean)', 'the fence, called by apply_ddl(); only as a role the caller has the privileges of, replica for superusers only'),
    ('shardid_internal._apply_ddl_targets(bigint,integer)', 'called by apply_ddl(); reads public tables'),
    ('shardid_internal._apply_ddl_notice_end(shardid.ddl_changes,integer,integer,integer)', 'called by apply_ddl(): a NOTICE'),
    ('shardid_internal._apply_ddl_router(text,text,shardid.ddl_options)', 'called by apply_ddl() on a router: its loop (_apply_ddl_router_start() is for administrators)'),
    ('shardid_internal._apply_ddl_concurrently(shardid.ddl_changes,integer,integer,shardid.ddl_options,text,integer[])', 'called by apply_ddl(): its CONCURRENTLY loop (the claim checks membership of the template owner)'),
    ('shardid_internal._batch_progress(text,text,integer[],integer,integer,integer)', 'called by the *_proc procedures and apply_ddl(): counts and NOTICEs'),
    ('shardid_internal._batch_next(text,jsonb,integer,integer,integer)', 'called by create_shards_proc() and create_table_proc(); runs _create_shards_batch() or _create_table_batch()'),
    ('shardid_internal._batch_run(text,text,jsonb,integer,integer,integer[])', 'the loop of create_shards_proc() and create_table_proc(); its batches check the caller'),
    ('shardid_internal._create_shards_done(integer,integer,integer)', 'called by create_shards_proc(): a NOTICE'),
    ('shardid_internal._create_table_done(name,integer,integer)', 'called by create_table_proc(): a NOTICE'),
    ('shardid.run_on_shards(text,text,integer,text)', 'checks the caller: on a node the loopback is for superusers (_run_on_shards_here), on a router for administrators; statements run as each copy''s owner'),
    ('shardid_internal._run_on_shards_command(text,name,name)', 'called by run_on_shards(): parses only'),
    ('shardid_internal._run_on_shards_check(text,name,name)', 'called by run_on_shards(): pure'),
    ('shardid_internal._run_on_shards_start(text,text,name,boolean)', 'called by run_on_shards(); checks the privileges of the template owner'),
    ('shardid_internal._run_on_shards_batch(text,text,integer[],boolean,name,boolean)', 'called by run_on_shards() over its loopback or from the router; statements only through the fence, as a role the caller has the privileges of');
-- privileges that follow the shards (issue 46)
INSERT INTO public_execute VALUES
    ('shardid.grant_shards(text,name,text[],integer,text)', 'run_on_shards() with the GRANT it composes: its checks, its fence'),
    ('shardid.revoke_shards(text,name,text[],integer,text)', 'run_on_shards() with the REVOKE it composes: its checks, its fence'),
    ('shardid_internal._grant_shards_command(text,boolean,text,name,text[])', 'called by grant_shards(): pure'),
    ('shardid_internal._privilege_steps(integer[],name,boolean)', 'called by _create_shard_table() and run_on_shards(): reads the catalog'),
    ('shardid_internal._align_privileges(integer[],name,boolean,boolean,name)', 'called by _create_shard_table() and run_on_shards(); statements only through the fence, as a role the caller has the privileges of'),
    ('shardid_internal._grantee(oid)', 'called by _privilege_steps(): reads the catalog');

CREATE TEMP VIEW extension_functions AS
SELECT p.oid::regprocedure::text AS fn,
       EXISTS (SELECT FROM aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) AS a
                WHERE a.grantee = 0 AND a.privilege_type = 'EXECUTE') AS public_may_execute
  FROM pg_depend AS d JOIN pg_proc AS p ON p.oid = d.objid
 WHERE d.classid = 'pg_proc'::regclass AND d.refclassid = 'pg_extension'::regclass
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'shardid') AND d.deptype = 'e';
GRANT SELECT ON extension_functions TO regress_if_user;

-- Executable by PUBLIC but not on the list: none.
SELECT fn AS not_listed FROM extension_functions WHERE public_may_execute
EXCEPT SELECT fn FROM public_execute ORDER BY 1;
-- On the list but not executable by PUBLIC (or gone): none.
SELECT fn AS listed_only FROM public_execute
EXCEPT SELECT fn FROM extension_functions WHERE public_may_execute ORDER BY 1;
-- \df shardid.* lists what docs/reference.md documents for users: every
-- internal helper (a name beginning with "_") is in shardid_internal.
SELECT (SELECT count(*) FROM pg_proc WHERE pronamespace = 'shardid'::regnamespace AND starts_with(proname, '_'))
     + (SELECT count(*) FROM pg_class WHERE relnamespace = 'shardid'::regnamespace AND starts_with(relname, '_'))
       AS internal_in_shardid,
       (SELECT count(*) FROM pg_proc WHERE pronamespace = 'shardid_internal'::regnamespace AND NOT starts_with(proname, '_'))
       AS public_in_internal;
-- The internal functions PUBLIC may not execute.
SELECT fn AS internal_revoked FROM extension_functions
 WHERE fn LIKE 'shardid\_internal.%' AND NOT public_may_execute ORDER BY 1;

-- An ordinary role cannot attach an internal trigger function to a table
-- of its own: CREATE TRIGGER checks EXECUTE on the function. (In 0.2,
-- _layout_changed() attached this way reset every backend's plan cache on
-- each statement.)
CREATE TABLE public.if_own (id bigint);
ALTER TABLE public.if_own OWNER TO regress_if_user;
SET ROLE regress_if_user;
CREATE TRIGGER reset_all AFTER INSERT ON public.if_own
    FOR EACH STATEMENT EXECUTE FUNCTION shardid_internal._layout_changed();
\echo :LAST_ERROR_SQLSTATE
CREATE TRIGGER refuse AFTER INSERT ON public.if_own
    FOR EACH STATEMENT EXECUTE FUNCTION shardid_internal._refuse_frozen_write('1', 'x');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS triggers FROM pg_trigger WHERE tgrelid = 'public.if_own'::regclass;

-- Nor call any of them: each call is refused with 42501 before it runs.
-- (Arguments are NULLs from a subquery: a constant NULL would let the
-- planner fold a STRICT function's call away, privileges unchecked. A
-- procedure is CALLed, with constants: CALL takes no subquery.)
SET client_min_messages = notice;
DO $$
DECLARE
    f record;
BEGIN
    FOR f IN
        SELECT p.oid::regprocedure AS fn,
               pg_catalog.format('%s %s(%s)', CASE p.prokind WHEN 'p' THEN 'CALL' ELSE 'SELECT' END, p.oid::regproc,
                                 (SELECT string_agg(CASE p.prokind WHEN 'p' THEN 'NULL::' || format_type(t, NULL)  -- no subquery in CALL
                                                    ELSE '(SELECT NULL::' || format_type(t, NULL) || ')' END, ', ' ORDER BY o)
                                    FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY AS u(t, o))) AS call
          FROM extension_functions AS e JOIN pg_proc AS p ON p.oid = e.fn::regprocedure
         WHERE e.fn LIKE 'shardid\_internal.%' AND NOT e.public_may_execute
         ORDER BY p.oid::regprocedure::text
    LOOP
        BEGIN
            EXECUTE f.call;
            RAISE NOTICE '%: ran', f.fn;
        EXCEPTION WHEN OTHERS THEN
            RAISE NOTICE '%: %', f.fn, SQLSTATE;
        END;
    END LOOP;
END
$$;
SET client_min_messages = warning;
RESET ROLE;

-- The flows that use them still work. Trigger functions run without
-- EXECUTE when they fire: an application role writing to a frozen or a
-- retired shard gets 25006, not 42501.
GRANT INSERT, UPDATE, DELETE ON shardid.shard_registry, shardid.sharded_tables TO regress_if_admin;
SET ROLE regress_if_admin;
CREATE TABLE public.posts (id bigint PRIMARY KEY, body text);
SELECT shardid.create_shards(1, 2);
SELECT shardid.create_table('public.posts');
GRANT USAGE ON SCHEMA shard_0001, shard_0002 TO regress_if_user;
GRANT INSERT, SELECT ON shard_0001.posts, shard_0002.posts TO regress_if_user;
GRANT USAGE ON SEQUENCE shard_0001.id_seq, shard_0002.id_seq TO regress_if_user;
RESET ROLE;
SELECT shardid.freeze_shard_tables('shard_0001', 1, 'node_b');
SET ROLE regress_if_user;
INSERT INTO shard_0001.posts (body) VALUES ('frozen');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT shardid.unfreeze_shard_tables('shard_0001');
SET ROLE regress_if_user;
INSERT INTO shard_0001.posts (body) VALUES ('thawed') RETURNING shardid.id_shard(id) AS shard;
RESET ROLE;
SELECT shardid.retire_shard(2, 'node_b', 'shard_0002_moved');
SET ROLE regress_if_user;
INSERT INTO shard_0002_moved.posts (body) VALUES ('retired');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
-- sync_generators() run by the owner of the tables, no superuser: it reads
-- the DEFAULTs through the view shardid_internal._next_id_defaults, which PUBLIC
-- may read (it shows only what pg_catalog shows).
SET ROLE regress_if_admin;
INSERT INTO shard_0001.posts (id, body)
    VALUES (shardid.make_id(now() + interval '1 day', 1, 5), 'ahead of the generator');
SELECT generator, action, table_name FROM shardid.sync_generators();
RESET ROLE;

-- configure() (superusers) fires the layout triggers; decoders follow.
CREATE DATABASE regress_if_fresh;
\c regress_if_fresh
SET client_min_messages = warning;
SET timezone = 'UTC';
CREATE EXTENSION shardid;
SELECT epoch, shard_bits, seq_bits FROM shardid.configure('2020-01-01 00:00:00+00', 12, 11);
SELECT shardid.id_shard(shardid.make_id('2021-01-01 00:00:00+00', 4000, 1)) AS shard_with_12_bits;
-- an ordinary role cannot configure, nor reach the trigger's helpers
CREATE ROLE regress_if_fresh_user;
SET ROLE regress_if_fresh_user;
SELECT shardid.configure('2021-01-01');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid_internal._refuse_stored_decodes();
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
DROP ROLE regress_if_fresh_user;

\c :regress_db
SET client_min_messages = warning;
DROP DATABASE regress_internal_functions;
DROP DATABASE regress_if_fresh;
DROP ROLE regress_if_user, regress_if_admin;
