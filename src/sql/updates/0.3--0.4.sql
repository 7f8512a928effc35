-- shardid 0.3 -> 0.4: what CREATE OR REPLACE cannot do (new tables,
-- ALTER TABLE, dropped or changed views and functions). The build appends
-- every function, procedure and view of the install script (src/sql/shardid.sql)
-- (src/sql/include.awk), so the upgrade script build/shardid--0.3--0.4.sql
-- re-creates each of them from the same source as the install script;
-- test/tap/update.pl checks that updating from every release gives the
-- objects of a fresh install.

\echo Use "ALTER EXTENSION shardid UPDATE TO '0.4'" to load this file. \quit

-- The install script's schema check, so a 0.3 installed into a schema that
-- a non-superuser owns or may create in is not updated either.
\ir ../common/extension_schema.sql

-- Moves: the three reports after a rollback are one function,
-- _move_rolled_back(s, after, to_node).
DROP FUNCTION shardid_internal._move_abort_end(shardid_internal._move_run);
DROP FUNCTION shardid_internal._move_aborted(shardid_internal._move_run, text);
DROP FUNCTION shardid_internal._move_failure(shardid_internal._move_run);

-- High availability (issue 45): a move's rollback retries a node that does
-- not answer (a failover under way) for up to node_timeout.
DROP PROCEDURE shardid_internal._move_rollback(integer);
DROP FUNCTION shardid_internal._move_rollback_steps(shardid.shard_moves);

-- check_cluster(): one function per kind (operations/router/_check_*.sql);
-- _check_unsafe_name() lists what _node_facts_unsafe() did.
DROP FUNCTION shardid_internal._node_facts_unsafe(jsonb);

-- drop_retired_copies(): _drop_retired_copy_on() drops or keeps one copy
-- and counts it (it took _drop_retired_copy_counted()'s part).
DROP FUNCTION shardid_internal._drop_retired_copy_counted(bigint[], text, name, boolean, text);
DROP FUNCTION shardid_internal._drop_retired_copy_on(text, name);

-- One rebalance driver (issue 38): rebalance() and drain_node() run
-- _rebalance_job_run() in their session, as a job of their own; their
-- helper families are gone, and the planner takes closed nodes and a
-- drain mode (drain_plan()).
ALTER TABLE shardid.rebalance_jobs ADD COLUMN in_session boolean NOT NULL DEFAULT false;
DROP FUNCTION shardid_internal._drain_finish(text, integer);
DROP FUNCTION shardid_internal._drain_next(shardid.shard_moves[], text, text);
DROP FUNCTION shardid_internal._drain_start(text);
DROP FUNCTION shardid_internal._rebalance_begin(text, integer);
DROP FUNCTION shardid_internal._rebalance_next(shardid.shard_moves[], text, integer, integer[], integer[]);
DROP FUNCTION shardid_internal._rebalance_moved(integer, text, integer[]);
DROP FUNCTION shardid_internal._rebalance_end(text[], integer, integer[]);
DROP FUNCTION shardid_internal._rebalance_job_create(text, text, jsonb);
DROP FUNCTION shardid_internal._rebalance_job_end(bigint);
DROP FUNCTION shardid_internal._rebalance_moves(text, integer, text[], integer[], text[], bigint[], integer[]);
DROP FUNCTION shardid_internal._plan_moves(text, integer, text[], integer[], text[], bigint[], integer[]);

-- Nodes that accept no shards (issue 39): shardid.set_node(), drain_node().
ALTER TABLE shardid.nodes ADD COLUMN accepts_shards boolean NOT NULL DEFAULT true;
COMMENT ON TABLE shardid.nodes IS
    'Router: the data nodes, by name, with a libpq key=value connect string (never a password). Whether it accepts shards (rebalance and drain plans move none onto it when not). Written by add_node(), set_node(), remove_node(). Readable by administrators only.';

-- Parallel moves and retries (issue 39): rebalance_start() and
-- drain_node_start() take max_parallel, max_moves_per_node, move_retries
-- and retry_pause; rebalance_status() and rebalance_wait() return every
-- move in flight and the failed ones.
\ir ../rebalance/router/rebalance_job_moves.sql
DROP FUNCTION shardid.rebalance_start(text, integer, integer[], boolean, interval, interval, interval, interval);
DROP FUNCTION shardid.drain_node_start(text, text, boolean, interval, interval, interval, interval);
DROP FUNCTION shardid.rebalance_wait(bigint, interval);
DROP FUNCTION shardid.rebalance_status(bigint);

-- apply_ddl(): batches bounded by time (batch_time), CONCURRENTLY on several
-- connections at once (connections); its internal functions renamed by what
-- they do or folded into their one caller. Dropped here, re-created below.
DROP PROCEDURE shardid.apply_ddl(text, text, integer, text);
DROP PROCEDURE shardid_internal._apply_ddl_here(text, text, integer, text, text);
DROP PROCEDURE shardid_internal._apply_ddl_concurrently(shardid.ddl_changes, integer, integer, text, integer[]);
DROP PROCEDURE shardid_internal._apply_ddl_router(text, text, integer);
DROP FUNCTION shardid_internal._apply_ddl_batch(bigint, integer);
DROP FUNCTION shardid_internal._apply_ddl_next_batch(shardid.ddl_changes, integer, integer, integer);
DROP FUNCTION shardid_internal._apply_ddl_first_batch(shardid.ddl_changes, integer, integer, integer);
DROP FUNCTION shardid_internal._apply_ddl_record(shardid.ddl_changes, integer, integer, integer);
DROP FUNCTION shardid_internal._apply_ddl_announce(shardid.ddl_changes, integer, integer, integer);
DROP FUNCTION shardid_internal._apply_ddl_claim(bigint);
DROP FUNCTION shardid_internal._apply_ddl_done(bigint, text);
DROP FUNCTION shardid_internal._apply_ddl_finish(bigint);
DROP FUNCTION shardid_internal._apply_ddl_finished(shardid.ddl_changes, integer, integer, integer);
DROP FUNCTION shardid_internal._apply_ddl_node(text, bigint, text, integer);
DROP FUNCTION shardid_internal._apply_ddl_node_done(text, bigint, text);
DROP FUNCTION shardid_internal._apply_ddl_on_node(text, shardid.ddl_changes, text, integer);

-- One scheduler (issue 43): serial is one slot; a job's driver and its
-- moves' workers are alive while the postmaster has them registered
-- (their handles recorded); rebalance_stop(cancel_move => true) rolls
-- back what it cancels; rebalance_resume() and the opt-in launcher resume
-- a job whose driver is gone.
ALTER TABLE shardid.rebalance_jobs
    ADD COLUMN worker_slot integer,
    ADD COLUMN worker_generation bigint,
    ADD COLUMN worker_server timestamptz,
    ADD COLUMN cancel_moves boolean NOT NULL DEFAULT false;
COMMENT ON TABLE shardid.rebalance_jobs IS
    'Router: rebalances and drains, one row per job, in the background (rebalance_start(), drain_node_start()) or in_session (rebalance(), drain_node()): options, state, moves done and planned, the current move, the last error, the driver (process, handle), times, whether its moves are cancelled. Read through rebalance_status(); administrators only.';
DROP FUNCTION shardid_internal._rebalance_launch(bigint);
DROP FUNCTION shardid_internal._rebalance_job_next(bigint);
DROP FUNCTION shardid_internal._rebalance_job_moved(bigint, text, integer, text);

-- A failed change has a way back in one call (issue 46):
-- abandon_ddl(template, undo boolean DEFAULT false) replaces
-- abandon_ddl(template).
DROP FUNCTION shardid.abandon_ddl(text);

-- One options record per kind of job (issue 47): apply_ddl()'s options are
-- shardid.ddl_options, built once by _ddl_options() and passed whole (to
-- every node too); the router changes up to connections tables of a node
-- at once, over _apply_ddl_concurrently(), not one table at a time. A new
-- option is an attribute: ALTER TYPE shardid.ddl_options ADD ATTRIBUTE.
\ir ../schema_changes/ddl_options.sql
DROP FUNCTION shardid_internal._apply_ddl_node_step(text, text, bigint);
-- A move's options are shardid.move_options, built once by _move_options()
-- and passed whole through the loop (_move_shard()) to the step that uses
-- each; a new move option is an attribute: ALTER TYPE shardid.move_options
-- ADD ATTRIBUTE.
\ir ../moves/router/move_options.sql
DROP FUNCTION shardid_internal._move_start(integer, text, boolean, boolean, interval, interval, interval, interval);
DROP FUNCTION shardid_internal._move_step(shardid_internal._move_run, boolean, interval, interval, interval, interval);
DROP FUNCTION shardid_internal._move_copy(shardid.shard_moves, interval, interval, jsonb);
DROP FUNCTION shardid_internal._move_cutover(shardid.shard_moves, interval, interval);
DROP FUNCTION shardid_internal._move_finish(shardid.shard_moves, boolean, interval);

-- No copied runs (issue 47): create_shards_proc() and create_table_proc()
-- share their loop (_batch_run(), the next batch from _batch_next()).
DROP FUNCTION shardid_internal._create_shards_next_batch(integer, integer, integer, integer, integer);
DROP FUNCTION shardid_internal._create_table_next_batch(name, integer, integer, integer);

-- Names say one thing (issue 47): check_cluster()'s kinds keep the prefix
-- _check_ (one function per kind, operations/router/), the validators
-- that refuse an argument or a state take _require_ (as _require_commit()
-- already did). The 0.3 names go; the build creates the new ones.
DROP FUNCTION shardid_internal._check_batch_size(integer);
DROP FUNCTION shardid_internal._check_generator(regclass);
DROP FUNCTION shardid_internal._check_layout(timestamptz, integer, integer);
DROP FUNCTION shardid_internal._check_move_done(integer, text);
DROP FUNCTION shardid_internal._check_node(text, integer, integer);
DROP FUNCTION shardid_internal._check_rebalance_options(text, integer);
DROP FUNCTION shardid_internal._check_registry_privileges(text, boolean);
DROP FUNCTION shardid_internal._check_shard(integer);
DROP FUNCTION shardid_internal._check_shard_range(integer, integer);
DROP FUNCTION shardid_internal._check_template(shardid.sharded_tables);
DROP FUNCTION shardid_internal._check_templates();
