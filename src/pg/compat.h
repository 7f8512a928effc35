/*
 * compat.h — the PostgreSQL API differences between the majors shardid
 * builds against: 15 to 19 (tested on 15, 17, 18 and 19; 16 is expected to
 * build, its APIs are covered here, but no Debian suite carries it; 14 and
 * older are not supported). Every PG_VERSION_NUM test of the glue lives
 * here, so each file reads as if written for one major.
 *
 * The sequence page, its tuple and the XLOG_SEQ_LOG record that next_id()
 * writes are the same from 15 to 19; only names moved:
 *  - 16 renamed RelFileNode to RelFileLocator (xl_seq_rec.locator,
 *    Relation->rd_locator);
 *  - 17 moved the top transaction's local id into MyProc->vxid;
 *  - 18 asks modules for their name and version in the magic block;
 *  - 19 moved xl_seq_rec and XLOG_SEQ_LOG to commands/sequence_xlog.h and
 *    made the sequence page's magic public there (sequence.c kept it
 *    private before), passes syscache callbacks a SysCacheIdentifier
 *    rather than an int, and gives table_beginscan() a flags argument;
 *  - 16 gave the tree walkers a typed callback (a macro over *_impl); 15
 *    declares the walker as an unprototyped bool (*)().
 */
#pragma once

extern "C" {
#include "postgres.h"

#include "access/tableam.h"
#include "commands/sequence.h"
#include "storage/proc.h"
#include "utils/inval.h"
#if PG_VERSION_NUM >= 190000
#include "commands/sequence_xlog.h"
#endif
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

/*
 * The special space of a sequence page: 19's sequence_xlog.h declares it;
 * before, only sequence.c did, with the same value and layout.
 */
#if PG_VERSION_NUM < 190000
#define SEQ_MAGIC 0x1717

typedef struct sequence_magic
{
	uint32 magic;
} sequence_magic;
#endif

/* The cache id a syscache invalidation callback receives. */
#if PG_VERSION_NUM >= 190000
typedef SysCacheIdentifier SyscacheCallbackId;
#else
typedef int SyscacheCallbackId;
#endif

/* A sequential scan of a table with a snapshot; 19 takes scan flags too. */
#if PG_VERSION_NUM >= 190000
#define SHARDID_TABLE_BEGINSCAN(rel, snap, nkeys, keys)                                            \
	table_beginscan(rel, snap, nkeys, keys, SO_NONE)
#else
#define SHARDID_TABLE_BEGINSCAN(rel, snap, nkeys, keys) table_beginscan(rel, snap, nkeys, keys)
#endif

/*
 * Runs a portal to its end at top level (the background rebalance worker):
 * 18 dropped PortalRun()'s run_once argument.
 */
#if PG_VERSION_NUM >= 180000
#define SHARDID_PORTAL_RUN(portal, dest, qc) PortalRun(portal, FETCH_ALL, true, dest, dest, qc)
#else
#define SHARDID_PORTAL_RUN(portal, dest, qc)                                                       \
	PortalRun(portal, FETCH_ALL, true, true, dest, dest, qc)
#endif

/* raw_expression_tree_walker() with a walker bool (*)(Node *, void *) (on 15 through
 * void (*)(), the cast GCC allows between function types). */
#if PG_VERSION_NUM >= 160000
#define SHARDID_RAW_TREE_WALK(node, walker, context)                                               \
	raw_expression_tree_walker(node, walker, context)
#else
#define SHARDID_RAW_TREE_WALK(node, walker, context)                                               \
	raw_expression_tree_walker(node, (bool (*)())(void (*)())(walker), context)
#endif
