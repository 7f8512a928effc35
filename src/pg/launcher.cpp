/*
 * launcher.cpp — the opt-in launcher. With shardid in
 * shared_preload_libraries, one background worker per server (registered
 * by _PG_init, started once the server accepts connections: on a primary
 * after a start or crash recovery, on a hot standby once it is
 * consistent) visits every database that accepts connections, at once
 * and then every shardid.launcher_naptime, and at once when its standby
 * is promoted: for each it starts a short-lived worker that connects to
 * it as the bootstrap superuser and, where the shardid extension is
 * installed, CALLs shardid_internal._launcher_run(), which resumes the
 * background rebalance jobs whose driver is gone (each as the role that
 * started it) and drops retired copies older than
 * shardid.retired_copy_retention; on a standby it calls
 * shardid_internal._launcher_standby() instead, which drops the slots of
 * moves the server made while it was a primary (a demoted leader's). The
 * launcher itself never touches a database; one database worker runs at
 * a time.
 *
 * Without the preload nothing here runs, and everything else works as
 * before: a job's driver that dies is restarted by the postmaster
 * (rebalance_worker.cpp), and after a restart of the server a job waits
 * for rebalance_resume() or the next rebalance_start().
 *
 * The database worker calls the procedure only when it belongs to the
 * extension and a superuser owns it: a schema named shardid_internal that
 * a tenant made in a database without shardid is not called.
 */
#include "shardid_pg.h"
#include "compat.h"

extern "C" {
#include "access/htup_details.h"
#include "access/heapam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_database.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/wait_event.h"

PGDLLEXPORT void shardid_launcher_main(Datum main_arg);
PGDLLEXPORT void shardid_launcher_database_main(Datum main_arg);
}

#include "workers.h"

int shardid_launcher_naptime_s = 60;
int shardid_retired_copy_retention_s = 24 * 3600;

/* Registers the launcher; called by _PG_init while the server starts. */
void
shardid_register_launcher(void)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof worker);
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	worker.bgw_restart_time = 10;
	strlcpy(worker.bgw_library_name, "shardid", sizeof worker.bgw_library_name);
	strlcpy(worker.bgw_function_name, "shardid_launcher_main", sizeof worker.bgw_function_name);
	strlcpy(worker.bgw_name, "shardid launcher", sizeof worker.bgw_name);
	strlcpy(worker.bgw_type, "shardid launcher", sizeof worker.bgw_type);
	RegisterBackgroundWorker(&worker);
}

/* The databases the launcher visits: those that accept connections. */
static Oid *
databases(int *count)
{
	Relation rel;
	TableScanDesc scan;
	HeapTuple tup;
	int n = 0, size = 16;
	Oid *oids = (Oid *) MemoryContextAlloc(TopMemoryContext, size * sizeof(Oid));

	StartTransactionCommand();
	rel = table_open(DatabaseRelationId, AccessShareLock);
	scan = table_beginscan_catalog(rel, 0, NULL);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Form_pg_database db = (Form_pg_database) GETSTRUCT(tup);

		/* a database being dropped has datconnlimit -2 (16 and later) */
		if (!db->datallowconn || db->datistemplate || db->datconnlimit < -1)
			continue;
		if (n == size)
		{
			size *= 2;
			oids = (Oid *) repalloc(oids, size * sizeof(Oid));
		}
		oids[n++] = db->oid;
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	CommitTransactionCommand();
	*count = n;
	return oids;
}

/* Starts the worker of one database and waits until it has ended. */
static void
visit(Oid database)
{
	BackgroundWorker worker;
	BackgroundWorkerHandle *handle;

	memset(&worker, 0, sizeof worker);
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	strlcpy(worker.bgw_library_name, "shardid", sizeof worker.bgw_library_name);
	strlcpy(worker.bgw_function_name, "shardid_launcher_database_main",
			sizeof worker.bgw_function_name);
	snprintf(worker.bgw_name, sizeof worker.bgw_name, "shardid launcher for database %u", database);
	strlcpy(worker.bgw_type, "shardid launcher", sizeof worker.bgw_type);
	worker.bgw_main_arg = ObjectIdGetDatum(database);
	worker.bgw_notify_pid = MyProcPid;
	if (!RegisterDynamicBackgroundWorker(&worker, &handle))
	{
		ereport(LOG, (errmsg("shardid launcher: no background worker slot is free for database %u",
							 database),
					  errhint("Raise max_worker_processes.")));
		return;
	}
	(void) WaitForBackgroundWorkerShutdown(handle);
	pfree(handle);
}

/*
 * Sleeps one naptime, or less: a reload (SIGHUP) or a shutdown request
 * ends the nap, and on a standby a promotion does (checked every second),
 * so that a promoted router resumes its jobs at once.
 */
static void
nap(void)
{
	long left = (long) shardid_launcher_naptime_s * 1000L;
	bool standby = RecoveryInProgress();

	while (left > 0)
	{
		long step = standby ? Min(left, 1000L) : left;
		int rc = WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, step,
						   PG_WAIT_EXTENSION);

		ResetLatch(MyLatch);
		if ((rc & WL_LATCH_SET) || (standby && !RecoveryInProgress()))
			return;
		left -= step;
	}
}

/* The launcher: visits every database now and every naptime after. */
void
shardid_launcher_main(Datum main_arg)
{
	(void) main_arg;
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	pgstat_report_appname("shardid launcher");
	ereport(LOG, (errmsg("shardid launcher started"),
				  errdetail("It resumes background rebalance jobs and drops retired copies "
							"older than shardid.retired_copy_retention, every "
							"shardid.launcher_naptime (%d s); on a standby it drops the slots "
							"of moves made while it was a primary.",
							shardid_launcher_naptime_s)));
	for (;;)
	{
		int count;
		Oid *oids;

		if (ShutdownRequestPending)
			proc_exit(0);
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		oids = databases(&count);
		for (int i = 0; i < count && !ShutdownRequestPending; i++)
			visit(oids[i]);
		pfree(oids);
		if (ShutdownRequestPending)
			proc_exit(0);
		nap();
	}
}

/*
 * Whether the routine $1 (a regprocedure's text) of this database is a
 * member of the extension shardid and a superuser owns it.
 */
static const char *const launcher_routine_query =
	"SELECT FROM pg_catalog.pg_depend AS d"
	" JOIN pg_catalog.pg_extension AS e ON e.oid OPERATOR(pg_catalog.=) d.refobjid"
	" JOIN pg_catalog.pg_proc AS p ON p.oid OPERATOR(pg_catalog.=) d.objid"
	" JOIN pg_catalog.pg_roles AS r ON r.oid OPERATOR(pg_catalog.=) p.proowner"
	" WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass"
	" AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass"
	" AND d.deptype OPERATOR(pg_catalog.=) 'e'"
	" AND e.extname OPERATOR(pg_catalog.=) 'shardid' AND r.rolsuper"
	" AND d.objid OPERATOR(pg_catalog.=) pg_catalog.to_regprocedure($1)";

/* Whether this database has shardid's routine SIGNATURE, owned as it must be. */
static bool
has_launcher_routine(const char *signature)
{
	bool found = false;
	Oid type = TEXTOID;
	Datum value = CStringGetTextDatum(signature);

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	SPI_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	if (SPI_execute_with_args(launcher_routine_query, 1, &type, &value, NULL, true, 1) ==
		SPI_OK_SELECT)
		found = SPI_processed > 0;
	PopActiveSnapshot();
	SPI_finish();
	CommitTransactionCommand();
	return found;
}

/*
 * The worker of one database: as the bootstrap superuser, with a pinned
 * search_path, where shardid is installed: on a primary CALLs
 * _launcher_run(retention); on a standby (read only) calls
 * _launcher_standby(), where this version of shardid has it.
 */
void
shardid_launcher_database_main(Datum main_arg)
{
	Oid database = DatumGetObjectId(main_arg);

	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(database, InvalidOid, 0);
	pgstat_report_appname("shardid launcher");
	SetConfigOption("search_path", "pg_catalog, pg_temp", PGC_SUSET, PGC_S_SESSION);
	if (RecoveryInProgress())
	{
		if (has_launcher_routine("shardid_internal._launcher_standby()"))
			run_top_level("SELECT shardid_internal._launcher_standby()");
	}
	else if (has_launcher_routine("shardid_internal._launcher_run(integer)"))
		run_top_level(
			psprintf("CALL shardid_internal._launcher_run(%d)", shardid_retired_copy_retention_s));
	proc_exit(0);
}
