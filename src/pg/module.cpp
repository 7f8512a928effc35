/*
 * module.cpp — the module: its magic block, its GUCs, and what shardid's
 * batch procedures ask of the session (_commit_allowed()).
 *
 * shardid needs no shared_preload_libraries entry: nothing lives in shared
 * memory. The generator's state is the sequence tuple (see
 * sequence_state.cpp) and the layout is a table read into backend-local
 * memory (layout_cache.cpp). Preloaded (opt-in), it registers the
 * launcher, which resumes background jobs after a restart or a promotion
 * and runs housekeeping (launcher.cpp).
 *
 * A procedure that COMMITs (create_shards_proc, create_table_proc) works
 * only when CALLed on its own: not inside BEGIN ... COMMIT, a function, a
 * multi-statement query string or a block with an EXCEPTION clause.
 * Otherwise its first COMMIT fails with PostgreSQL's bare "invalid
 * transaction termination", after work that is then rolled back. The
 * procedures ask first and refuse with their own message.
 */
#include "shardid_pg.h"
#include "compat.h"

extern "C" {
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/guc.h"

SHARDID_MODULE_MAGIC;

void _PG_init(void);

PG_FUNCTION_INFO_V1(shardid_commit_allowed);
}

#include "workers.h"

int shardid_max_drift_ms = 2000;
int shardid_max_clock_skew_ms = 60 * 1000;

/* Defines the GUCs, reserves the shardid.* prefix, and, preloaded, registers the launcher. */
void
_PG_init(void)
{
	DefineCustomIntVariable(
		"shardid.max_drift", "How far ahead of the clock a burst may carry a generator's time.",
		"Past it, next_id() waits, holding no lock, until the clock catches up.",
		&shardid_max_drift_ms, 2000, 0, 3600 * 1000, PGC_SUSET, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable(
		"shardid.max_clock_skew", "How far the clocks of a primary and its standbys may differ.",
		"After a promotion or a restore (a new timeline), next_id() moves each generator "
		"this far, plus shardid.max_drift, ahead of the clock, past every ID the old "
		"timeline could have issued.",
		&shardid_max_clock_skew_ms, 60 * 1000, 0, 24 * 3600 * 1000, PGC_SIGHUP, GUC_UNIT_MS, NULL,
		NULL, NULL);
	DefineCustomIntVariable(
		"shardid.launcher_naptime", "How often the launcher visits each database.",
		"With shardid in shared_preload_libraries: it resumes background rebalance jobs whose "
		"worker is gone and drops retired copies past their retention.",
		&shardid_launcher_naptime_s, 60, 1, 24 * 3600, PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomIntVariable("shardid.retired_copy_retention",
							"How long the launcher keeps a move's retired copy.",
							"A copy retired longer ago is dropped by the launcher, by the rules of "
							"drop_retired_copies(); -1 keeps every copy.",
							&shardid_retired_copy_retention_s, 24 * 3600, -1, INT_MAX, PGC_SIGHUP,
							GUC_UNIT_S, NULL, NULL, NULL);
	MarkGUCPrefixReserved("shardid");
	if (process_shared_preload_libraries_in_progress)
		shardid_register_launcher();
}

/*
 * _commit_allowed() — whether the PL/pgSQL procedure whose statement calls
 * this may COMMIT. The caller's SPI connection is the procedure's: this
 * function opens none, so SPI answers exactly what SPI_commit() would check.
 */
extern "C" Datum
shardid_commit_allowed(PG_FUNCTION_ARGS)
{
	(void) fcinfo;
	PG_RETURN_BOOL(SPI_inside_nonatomic_context());
}
