/*
 * module.cpp — module magic, GUCs and cache callbacks.
 *
 * shardid needs no shared_preload_libraries entry: nothing lives in shared
 * memory. The generator's state is the sequence tuple (see next_id.cpp) and
 * the layout is a table read into backend-local memory (layout_cache.cpp, layout_freeze.cpp).
 */
#include "shardid_pg.h"
#include "compat.h"

extern "C" {
#include "utils/guc.h"
#include "utils/inval.h"

SHARDID_MODULE_MAGIC;

void _PG_init(void);
}

int shardid_max_drift_ms = 2000;

/* Defines the GUCs and reserves the shardid.* prefix. */
void
_PG_init(void)
{
	DefineCustomIntVariable(
		"shardid.max_drift", "How far ahead of the clock a burst may carry a generator's time.",
		"Past it, next_id() waits, holding no lock, until the clock catches up.",
		&shardid_max_drift_ms, 2000, 0, 3600 * 1000, PGC_SUSET, GUC_UNIT_MS, NULL, NULL, NULL);
	MarkGUCPrefixReserved("shardid");
}
