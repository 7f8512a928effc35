/*
 * rebalance_worker.cpp — the background rebalance: a dynamic background
 * worker, registered by the backend that calls rebalance_start(), so no
 * shared_preload_libraries entry is needed.
 *
 * _rebalance_launch(job) registers the worker (bgw_library_name "shardid",
 * entry shardid_rebalance_worker_main) with the job ID as its argument and
 * the database, the calling role and the caller's transaction ID in
 * bgw_extra, and waits until it has started. The worker connects to that
 * database as that role, waits for the caller's transaction to end (the
 * job's row is inserted there; a rollback leaves no row and the worker
 * exits), then runs CALL shardid_internal._rebalance_job_run(job) at top level, as
 * a client's query runs (a portal: non-atomic), so that the procedure
 * commits after every move. It is the one rebalance driver: rebalance()
 * and drain_node() CALL it in their own session.
 * An error ends the CALL: the worker records it in the job's row
 * (_rebalance_job_failed()) in a new transaction and exits.
 *
 * The worker exits with 0 only when its job has ended (finished, stopped,
 * failed: recorded in its row) or is not to run (_rebalance_job_begin()
 * says so); the postmaster then forgets it. Any other end (SIGTERM from
 * pg_terminate_backend at the next interrupt check, a FATAL error, a
 * crash) exits otherwise, and the postmaster starts the worker again after
 * RESTART_SECONDS (at once after a crash's reinitialisation): it resumes
 * the job, the move left in progress first, so that no shard stays frozen
 * in a move's cut-over. A restart of the server forgets dynamic workers:
 * rebalance_status() then reports the job interrupted, check_cluster() its
 * move (move_stalled), and rebalance_start() resumes the work. SIGINT
 * cancels the running statement, as in a backend.
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

PG_FUNCTION_INFO_V1(shardid_rebalance_launch);
PG_FUNCTION_INFO_V1(shardid_rebalance_launch_move);
PGDLLEXPORT void shardid_rebalance_worker_main(Datum main_arg);
PGDLLEXPORT void shardid_rebalance_move_main(Datum main_arg);
}

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
 * database, role and transaction, and waits until it has started; its
 * process ID.
 */
static pid_t
launch(int64 job_id, int32 shard, const char *entry, const char *name, int restart_seconds)
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
	extra.role = GetUserId();
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
	return pid;
}

/*
 * _rebalance_launch(job bigint) → integer: starts the worker for a job whose
 * row the caller's transaction has just inserted; returns its process ID.
 */
extern "C" Datum
shardid_rebalance_launch(PG_FUNCTION_ARGS)
{
	int64 job_id = PG_GETARG_INT64(0);

	PG_RETURN_INT32(launch(job_id, 0, "shardid_rebalance_worker_main",
						   psprintf("shardid rebalance job %lld", (long long) job_id),
						   RESTART_SECONDS));
}

/*
 * _rebalance_launch_move(job bigint, shard integer) → integer: starts the
 * worker of one move of a job (a row of shardid.rebalance_job_moves the
 * caller's transaction has written); never restarted: the driver sees it
 * gone and retries the move.
 */
extern "C" Datum
shardid_rebalance_launch_move(PG_FUNCTION_ARGS)
{
	int64 job_id = PG_GETARG_INT64(0);
	int32 shard = PG_GETARG_INT32(1);

	PG_RETURN_INT32(
		launch(job_id, shard, "shardid_rebalance_move_main",
			   psprintf("shardid rebalance job %lld move of shard %d", (long long) job_id, shard),
			   BGW_NEVER_RESTART));
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
static void
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
	proc_exit(0);
}
