/*
 * compat.h — the PostgreSQL API differences between the majors shardid
 * builds against (14 to 18). Every PG_VERSION_NUM test of the glue lives
 * here, so each file reads as if written for one major.
 *
 * The sequence page, its tuple and the XLOG_SEQ_LOG record that next_id()
 * writes are the same from 14 to 18; only names moved:
 *  - 16 renamed RelFileNode to RelFileLocator (xl_seq_rec.locator,
 *    Relation->rd_locator);
 *  - 17 moved the top transaction's local id into MyProc->vxid;
 *  - 18 asks modules for their name and version in the magic block;
 *  - 15 added MarkGUCPrefixReserved (14 warns on placeholders instead);
 *  - 15 added InitMaterializedSRF (14 sets up the tuplestore by hand).
 */
#pragma once

extern "C" {
#include "postgres.h"

#include "storage/proc.h"
}

/* The local id of this backend's top transaction. */
#if PG_VERSION_NUM >= 170000
#define SHARDID_MY_LXID() (MyProc->vxid.lxid)
#else
#define SHARDID_MY_LXID() (MyProc->lxid)
#endif

/* Stores a relation's storage identity into a sequence WAL record. */
#if PG_VERSION_NUM >= 160000
#define SHARDID_SEQ_REC_SET_REL(xlrec, rel) ((xlrec).locator = (rel)->rd_locator)
#else
#define SHARDID_SEQ_REC_SET_REL(xlrec, rel) ((xlrec).node = (rel)->rd_node)
#endif

/* The module magic block; 18 records the module's name and version. */
#if PG_VERSION_NUM >= 180000
#define SHARDID_MODULE_MAGIC PG_MODULE_MAGIC_EXT(.name = "shardid", .version = SHARDID_VERSION)
#else
#define SHARDID_MODULE_MAGIC PG_MODULE_MAGIC
#endif

/* Reserves the shardid.* GUC prefix after the GUCs are defined. */
#if PG_VERSION_NUM >= 150000
#define SHARDID_RESERVE_GUC_PREFIX(prefix) MarkGUCPrefixReserved(prefix)
#else
#define SHARDID_RESERVE_GUC_PREFIX(prefix) EmitWarningsOnPlaceholders(prefix)
#endif

/* Sets up a set-returning function's tuplestore, materialize mode. */
#if PG_VERSION_NUM < 150000
extern "C" {
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/tuplestore.h"
}

static inline void
InitMaterializedSRF(FunctionCallInfo fcinfo, bits32)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	TupleDesc tupdesc;

	if (rsinfo == NULL || !IsA(rsinfo, ReturnSetInfo) || !(rsinfo->allowedModes & SFRM_Materialize))
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						errmsg("set-valued function called in context that cannot accept a set")));
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	MemoryContext old = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);

	rsinfo->returnMode = SFRM_Materialize;
	rsinfo->setDesc = CreateTupleDescCopy(tupdesc);
	rsinfo->setResult = tuplestore_begin_heap(true, false, work_mem);
	MemoryContextSwitchTo(old);
}
#endif
