/*
 * rebalance_worker.cpp — the background workers of rebalancing: a job's
 * driver and its moves, dynamic background workers registered by the
 * backend that starts them, so no shared_preload_libraries entry is needed
 * (src/pg/launcher.cpp, opt-in, resumes jobs after a restart).
 *
 * _rebalance_launch(job, shard, role) registers a worker (bgw_library_name
 * "shardid") with the job ID as its argument and the database, the role it
 * runs as and the caller's transaction ID in bgw_extra, and waits until it
 * has started. It returns the worker's process ID and its handle (slot and
 * generation in the postmaster's worker array, and the postmaster's start
 * time), which the caller records in the job's or the move's row: a worker
 * is alive while the postmaster has it registered (_rebalance_worker_alive:
 * running, or waiting to be restarted), never by comparing start times.
 * The worker connects to that database as that role, waits for the
 * caller's transaction to end (the row it runs is written there; a
 * rollback leaves none and the worker exits), then runs its CALL at top
 * level, as a client's query runs (a portal: non-atomic), so that the
 * procedure commits as it goes.
 *
 * A job's driver (no shard: CALL _rebalance_job_run(job)) exits with 0
 * only when its job has ended or is not to run; the postmaster then
 * forgets it. Any other end (SIGTERM from pg_terminate_backend, a FATAL
 * error, a crash) exits otherwise, and the postmaster starts it again
 * after RESTART_SECONDS: it resumes the job, the moves left in progress
 * first. A move's worker (CALL _rebalance_move_run(job, shard)) is never
 * restarted: its driver is told when it ends, as the postmaster signals
 * the process that registered a worker (bgw_notify_pid), which sets that
 * process's latch; the driver sleeps on its latch between decisions
 * (_rebalance_sleep) and decides at once. rebalance_stop() wakes a driver
 * too (_rebalance_wake). An error that ends a worker's CALL is recorded in
 * its row in a new transaction, and the worker exits. SIGINT cancels the
 * running statement, as in a backend.
 *
 * No C++ object with a destructor lives in these functions: ereport's
 * longjmp may cross every one of their frames.
 */
#include "shardid_pg.h"
#include "compat.h"

extern "C" {
#include "access/xact.h"
#include "executor/spi.h"
#include "tcop/pquery.h"
#include "tcop/utility.h"
#include "utils/portal.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "access/htup_details.h"
#include "funcapi.h"
#include "storage/latch.h"
#include "storage/procarray.h"
#include "utils/wait_event.h"

PG_FUNCTION_INFO_V1(shardid_rebalance_launch);
PG_FUNCTION_INFO_V1(shardid_rebalance_worker_alive);
PG_FUNCTION_INFO_V1(shardid_rebalance_sleep);
PG_FUNCTION_INFO_V1(shardid_rebalance_wake);
PGDLLEXPORT void shardid_rebalance_worker_main(Datum main_arg);
PGDLLEXPORT void shardid_rebalance_move_main(Datum main_arg);
}

#include "workers.h"

/*
 * bgworker.c's BackgroundWorkerHandle, which bgworker.h declares opaque:
 * the slot in the postmaster's worker array and that slot's generation,
 * unchanged since 9.4 (pg_cron and TimescaleDB keep handles the same way).
 * A copy of it in a table lets any backend ask the postmaster whether the
 * worker is still registered.
 */
struct BackgroundWorkerHandle
{
	int slot;
	uint64 generation;
};

/* What the worker needs from the backend that launched it. */
struct WorkerExtra
{
	Oid database;
	Oid role;
	TransactionId starter_xid;
	int32 shard; /* a move worker's shard */
};
static_assert(sizeof(WorkerExtra) <= BGW_EXTRALEN, "bgw_extra holds WorkerExtra");

/* How long the postmaster waits before it starts a worker that died again. */
static const int RESTART_SECONDS = 5;

/*
 * Registers a worker (entry point entry, restarted after restart_seconds or
 * never) for a job, and a shard for a move worker, with the caller's
 * database and transaction, to run as role, and waits until it has
 * started; its process ID, and its handle in handle_out.
 */
static pid_t
launch(int64 job_id, int32 shard, Oid role, const char *entry, const char *name,
	   int restart_seconds, BackgroundWorkerHandle *handle_out)
{
	BackgroundWorker worker;
	BackgroundWorkerHandle *handle;
	BgwHandleStatus status;
	pid_t pid;
	WorkerExtra extra;

	memset(&worker, 0, sizeof worker);
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = restart_seconds;
	strlcpy(worker.bgw_library_name, "shardid", sizeof worker.bgw_library_name);
	strlcpy(worker.bgw_function_name, entry, sizeof worker.bgw_function_name);
	strlcpy(worker.bgw_name, name, sizeof worker.bgw_name);
	strlcpy(worker.bgw_type, "shardid rebalance", sizeof worker.bgw_type);
	worker.bgw_main_arg = Int64GetDatum(job_id);
	worker.bgw_notify_pid = MyProcPid;
	memset(&extra, 0, sizeof extra);
	extra.database = MyDatabaseId;
	extra.role = role;
	extra.starter_xid = GetTopTransactionId();
	extra.shard = shard;
	memcpy(worker.bgw_extra, &extra, sizeof extra);

	if (!RegisterDynamicBackgroundWorker(&worker, &handle))
		ereport(
			ERROR,
			(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
			 errmsg("no background worker slot is free for the rebalance"),
			 errdetail("Every one of max_worker_processes (%d) is in use.", max_worker_processes),
			 errhint("Raise max_worker_processes (a restart), or wait for other background workers "
					 "(parallel queries, logical replication) to end, or CALL shardid.rebalance() "
					 "instead.")));

	status = WaitForBackgroundWorkerStartup(handle, &pid);
	if (status != BGWH_STARTED)
		ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_RESOURCES),
						errmsg("the rebalance background worker could not be started"),
						errhint("See the server log.")));
	*handle_out = *handle;
	return pid;
}

/*
 * _rebalance_launch(job bigint, shard integer, role oid) → (pid, slot,
 * generation, server_start): starts the worker of a job (shard NULL: its
 * driver, restarted by the postmaster if it dies) or of one of its moves
 * (never restarted: its driver sees it gone and retries the move), as role,
 * for a row the caller's transaction has just written. Only a superuser may
 * start a worker as another role (the launcher resumes a job as the role
 * that started it).
 */
extern "C" Datum
shardid_rebalance_launch(PG_FUNCTION_ARGS)
{
	int64 job_id = PG_GETARG_INT64(0);
	bool driver = PG_ARGISNULL(1);
	int32 shard = driver ? 0 : PG_GETARG_INT32(1);
	Oid role = PG_ARGISNULL(2) ? GetUserId() : PG_GETARG_OID(2);
	BackgroundWorkerHandle handle;
	TupleDesc desc;
	Datum values[4];
	bool nulls[4] = {false, false, false, false};
	pid_t pid;

	if (role != GetUserId() && !superuser())
		ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
						errmsg("only a superuser may start a rebalance worker as another role")));
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "_rebalance_launch() must return a record");
	if (driver)
		pid = launch(job_id, 0, role, "shardid_rebalance_worker_main",
					 psprintf("shardid rebalance job %lld", (long long) job_id), RESTART_SECONDS,
					 &handle);
	else
		pid = launch(
			job_id, shard, role, "shardid_rebalance_move_main",
			psprintf("shardid rebalance job %lld move of shard %d", (long long) job_id, shard),
			BGW_NEVER_RESTART, &handle);
	values[0] = Int32GetDatum(pid);
	values[1] = Int32GetDatum(handle.slot);
	values[2] = Int64GetDatum((int64) handle.generation);
	values[3] = TimestampTzGetDatum(PgStartTime);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}

/*
 * _rebalance_worker_alive(slot, generation, server_start) → boolean: whether
 * the worker of that handle, started by this postmaster (server_start: a
 * promoted standby or a restarted server has another), is still registered:
 * running, or waiting for the postmaster to start it again. A worker that
 * exited for good, or one of another server's life, is not.
 */
extern "C" Datum
shardid_rebalance_worker_alive(PG_FUNCTION_ARGS)
{
	BackgroundWorkerHandle handle;
	pid_t pid;

	handle.slot = PG_GETARG_INT32(0);
	handle.generation = (uint64) PG_GETARG_INT64(1);
	if (PG_GETARG_TIMESTAMPTZ(2) != PgStartTime || handle.slot < 0 ||
		handle.slot >= max_worker_processes)
		PG_RETURN_BOOL(false);
	switch (GetBackgroundWorkerPid(&handle, &pid))
	{
		case BGWH_STARTED:
		case BGWH_NOT_YET_STARTED:
			PG_RETURN_BOOL(true);
		default:
			PG_RETURN_BOOL(false);
	}
}

/*
 * _rebalance_sleep(seconds float8): a driver waits between two decisions
 * until its latch is set (a move worker it started has ended, or
 * rebalance_stop() woke it) or seconds have passed. Interruptible.
 */
extern "C" Datum
shardid_rebalance_sleep(PG_FUNCTION_ARGS)
{
	double seconds = PG_GETARG_FLOAT8(0);
	long ms = seconds <= 0 ? 0 : seconds > 60 ? 60000 : (long) (seconds * 1000.0);

	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, ms,
					 PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
	PG_RETURN_VOID();
}

/*
 * _rebalance_wake(pid integer) → boolean: sets the latch of the backend with
 * that process ID (a job's driver), so that it decides at once; false when
 * there is no such backend.
 */
extern "C" Datum
shardid_rebalance_wake(PG_FUNCTION_ARGS)
{
	PGPROC *proc = BackendPidGetProc(PG_GETARG_INT32(0));

	if (proc == NULL)
		PG_RETURN_BOOL(false);
	SetLatch(&proc->procLatch);
	PG_RETURN_BOOL(true);
}

/*
 * Runs one statement in its own transaction as a client's simple query
 * does (exec_simple_query() in postgres.c): in a portal, at top level, so
 * that a CALL is non-atomic and its procedure may COMMIT (which needs the
 * portal's snapshot handling; SPI in a worker has no portal). The parse and
 * plan trees live in a context of their own, as exec_simple_query() keeps
 * them in MessageContext: the procedure's first COMMIT resets the
 * transaction's memory, and ExecuteCallStmt() reads the CALL's tree again
 * when the procedure returns.
 */
void
run_top_level(const char *sql)
{
	List *parsetrees;
	RawStmt *parsetree;
	List *querytrees;
	List *plantrees;
	Portal portal;
	DestReceiver *receiver;
	int16 format = 0;
	QueryCompletion qc;
	static MemoryContext query_cxt = NULL;
	MemoryContext old_cxt;

	if (query_cxt == NULL)
		query_cxt = AllocSetContextCreate(TopMemoryContext, "shardid rebalance query",
										  ALLOCSET_DEFAULT_SIZES);
	else
		MemoryContextReset(query_cxt);
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	pgstat_report_activity(STATE_RUNNING, sql);
	old_cxt = MemoryContextSwitchTo(query_cxt);
	parsetrees = pg_parse_query(sql);
	parsetree = linitial_node(RawStmt, parsetrees);
	PushActiveSnapshot(GetTransactionSnapshot());
	querytrees = pg_analyze_and_rewrite_fixedparams(parsetree, sql, NULL, 0, NULL);
	plantrees = pg_plan_queries(querytrees, sql, CURSOR_OPT_PARALLEL_OK, NULL);
	PopActiveSnapshot();
	MemoryContextSwitchTo(old_cxt);

	portal = CreatePortal("", true, true);
	portal->visible = false;
	PortalDefineQuery(portal, NULL, sql, CreateCommandTag(parsetree->stmt), plantrees, NULL);
	PortalStart(portal, NULL, 0, InvalidSnapshot);
	PortalSetResultFormat(portal, 1, &format);
	receiver = CreateDestReceiver(DestNone);
	SHARDID_PORTAL_RUN(portal, receiver, &qc);
	PortalDrop(portal, false);
	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, NULL);
}

/*
 * Both workers: connects as its starter asked, waits for the starter's
 * transaction (the job's or the move's row is committed or rolled back with
 * it), runs call at top level; returns the text of the error that ended
 * it (message and detail), or NULL.
 */
static char *
worker_run(const WorkerExtra &extra, const char *appname, const char *call)
{
	MemoryContext worker_cxt;
	ErrorData *volatile failure = NULL;

	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(extra.database, extra.role, 0);
	pgstat_report_appname(appname);

	StartTransactionCommand();
	XactLockTableWait(extra.starter_xid, NULL, NULL, XLTW_None);
	CommitTransactionCommand();

	worker_cxt = CurrentMemoryContext;
	PG_TRY();
	{
		run_top_level(call);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(worker_cxt);
		failure = CopyErrorData();
		FlushErrorState();
		AbortCurrentTransaction();
	}
	PG_END_TRY();

	if (!failure)
		return NULL;
	const char *msg = failure->message ? failure->message : "unknown error";
	return failure->detail ? psprintf("%s (%s)", msg, failure->detail) : pstrdup(msg);
}

/* The worker of a job: runs it, records the failure that ends it. */
void
shardid_rebalance_worker_main(Datum main_arg)
{
	int64 job_id = DatumGetInt64(main_arg);
	WorkerExtra extra;

	memcpy(&extra, MyBgworkerEntry->bgw_extra, sizeof extra);
	char *text =
		worker_run(extra, "shardid rebalance",
				   psprintf("CALL shardid_internal._rebalance_job_run(%lld)", (long long) job_id));
	if (text)
	{
		/* the server log has it too, as from any backend */
		ereport(LOG, (errmsg("shardid rebalance job %lld failed: %s", (long long) job_id, text)));
		run_top_level(psprintf("SELECT shardid_internal._rebalance_job_failed(%lld, %s)",
							   (long long) job_id, quote_literal_cstr(text)));
	}
	/* the job has ended, or is not to run: not to be started again */
	proc_exit(0);
}

/*
 * A move worker: CALLs _rebalance_move_run(job, shard) (move_shard() in a
 * session of its own), and records an error that ends it with
 * _rebalance_move_failed().
 */
void
shardid_rebalance_move_main(Datum main_arg)
{
	int64 job_id = DatumGetInt64(main_arg);
	WorkerExtra extra;

	memcpy(&extra, MyBgworkerEntry->bgw_extra, sizeof extra);
	char *text = worker_run(extra, "shardid rebalance move",
							psprintf("CALL shardid_internal._rebalance_move_run(%lld, %d)",
									 (long long) job_id, extra.shard));
	if (text)
	{
		ereport(LOG, (errmsg("shardid rebalance job %lld: the move of shard %d failed: %s",
							 (long long) job_id, extra.shard, text)));
		run_top_level(psprintf("SELECT shardid_internal._rebalance_move_failed(%lld, %d, %s)",
							   (long long) job_id, extra.shard, quote_literal_cstr(text)));
	}
	/* the driver that started this worker is told by the postmaster; a
	 * driver restarted since is woken here */
	run_top_level(psprintf("SELECT shardid_internal._rebalance_wake(j.worker_pid) FROM "
						   "shardid.rebalance_jobs AS j WHERE j.job_id OPERATOR(pg_catalog.=) %lld "
						   "AND j.worker_pid IS NOT NULL",
						   (long long) job_id));
	proc_exit(0);
}
