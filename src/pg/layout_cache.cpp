/*
 * layout_cache.cpp — the database's ID layout, cached per backend.
 *
 * The layout lives in shardid.layout_config, a one-row extension config
 * table (empty means Instagram's default), so it travels with pg_dump.
 * Decoders must not read a table per call, so the row is read once into a
 * static and forgotten on a relcache invalidation of that table; a trigger
 * on the table sends that invalidation whenever a statement changes it,
 * configure() and a restore's COPY alike. When the layout may change, and
 * what next_id() generates with, is layout_freeze.cpp's.
 *
 * A transaction that decodes keeps AccessShareLock on layout_config until
 * it ends, as any reader of a table does, so configure() (which takes
 * AccessExclusiveLock) cannot change the layout under it; taking the lock
 * also processes the invalidation of a configure() committed before.
 *
 * Parallel plans: PostgreSQL refuses GetLatestSnapshot() in parallel mode
 * (in workers, and in the leader while a parallel plan runs), and the
 * leader and its workers must decode alike. There each process reads the
 * row visible to the query's snapshot, which the workers restore from the
 * leader, and checks it against the latest committed row (read with a
 * catalog snapshot, which workers may take): equal, it is what the
 * leader's cache holds too; different, a configure() committed after the
 * query began, and the query fails with a serialization failure rather
 * than decode with two layouts.
 */
#include "layout_cache.h"
#include "compat.h"

extern "C" {
#include "access/htup_details.h"
#include "access/transam.h"
#include "access/heapam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/namespace.h"
#include "catalog/pg_namespace.h"
#include "commands/trigger.h"
#include "storage/lmgr.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

PG_FUNCTION_INFO_V1(shardid_layout_changed);
}

static shardid::Layout cached_layout = shardid::kDefaultLayout;
static bool layout_valid = false;
static uint64 generation = 1;
static Oid layout_table_oid = InvalidOid;
static bool callback_registered = false;

/* The layout row cached was written by the current transaction. */
static bool layout_uncommitted = false;

/* The transaction (local id) that last changed layout_config here. */
static LocalTransactionId layout_changed_lxid = InvalidLocalTransactionId;

/* The transaction (local id) that holds its lock on layout_config. */
static LocalTransactionId layout_locked_lxid = InvalidLocalTransactionId;

/*
 * Forgets the cached layout, and with it the marking made for it (a new
 * generation); the next current_layout() reads it again.
 */
static void
forget_layout(void)
{
	layout_valid = false;
	generation++;
}

/* Relcache callback: drop the cache when layout_config (or everything) changes. */
static void
layout_relcache_callback(Datum, Oid relid)
{
	if (relid == InvalidOid || relid == layout_table_oid)
		forget_layout();
}

/* OID of an object of the extension's schema, or InvalidOid. */
Oid
shardid_relation_oid_if_exists(const char *relname)
{
	Oid nsp = get_namespace_oid("shardid", true);

	return OidIsValid(nsp) ? get_relname_relid(relname, nsp) : InvalidOid;
}

/* OID of an object of the extension's schema, erroring if it is missing. */
Oid
shardid_relation_oid(const char *relname)
{
	Oid relid = shardid_relation_oid_if_exists(relname);

	if (!OidIsValid(relid))
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						errmsg("relation shardid.%s does not exist", relname),
						errhint("Run CREATE EXTENSION shardid in this database.")));
	return relid;
}

/* The layout row snap sees (none: the default); *uncommitted if this transaction wrote it. */
static shardid::Layout
read_layout(Relation rel, Snapshot snap, bool *uncommitted)
{
	snap = RegisterSnapshot(snap);
	TableScanDesc scan = SHARDID_TABLE_BEGINSCAN(rel, snap, 0, NULL);
	shardid::Layout layout = shardid::kDefaultLayout;
	HeapTuple tup;
	int rows = 0;

	*uncommitted = false;
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		if (TransactionIdIsCurrentTransactionId(HeapTupleHeaderGetXmin(tup->t_data)))
			*uncommitted = true;
		Datum values[4];
		bool nulls[4];

		heap_deform_tuple(tup, RelationGetDescr(rel), values, nulls);
		if (nulls[1] || nulls[2] || nulls[3])
			elog(ERROR, "shardid.layout_config holds a NULL");
		shardid::Status st = shardid::make_layout(
			DatumGetInt64(values[1]), DatumGetInt32(values[2]), DatumGetInt32(values[3]), &layout);

		if (st != shardid::Status::ok)
			ereport(ERROR, (errcode(ERRCODE_DATA_CORRUPTED),
							errmsg("shardid.layout_config holds an invalid layout"),
							errhint("Fix the row with shardid.configure().")));
		rows++;
	}
	table_endscan(scan);
	UnregisterSnapshot(snap);

	if (rows > 1)
		ereport(ERROR, (errcode(ERRCODE_DATA_CORRUPTED),
						errmsg("shardid.layout_config holds %d rows, expected at most one", rows)));
	return layout;
}

/*
 * The layout in parallel mode (see the file header): the row the query's
 * snapshot sees, which every process of the query reads alike, provided
 * it is also the latest committed row.
 */
static shardid::Layout
read_layout_in_parallel(Relation rel, bool *uncommitted)
{
	shardid::Layout latest =
		read_layout(rel, GetCatalogSnapshot(RelationGetRelid(rel)), uncommitted);

	if (!ActiveSnapshotSet())
		return latest;

	shardid::Layout in_query = read_layout(rel, GetActiveSnapshot(), uncommitted);

	if (in_query.epoch_ms != latest.epoch_ms || in_query.shard_bits != latest.shard_bits ||
		in_query.seq_bits != latest.seq_bits)
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("the shardid layout changed after this query's snapshot was taken"),
				 errdetail("A parallel query decodes with the layout its snapshot sees, and "
						   "shardid.configure() has committed another one since."),
				 errhint("Retry the statement; under REPEATABLE READ or SERIALIZABLE, retry the "
						 "transaction.")));
	return in_query;
}

/*
 * Reads layout_config into cached_layout: the latest committed row (see
 * the file header), or in parallel mode the row the query's snapshot sees.
 */
static void
load_layout(void)
{
	if (!callback_registered)
	{
		CacheRegisterRelcacheCallback(layout_relcache_callback, (Datum) 0);
		callback_registered = true;
	}

	Oid relid = shardid_relation_oid("layout_config");
	Relation rel = table_open(relid, AccessShareLock);
	bool uncommitted = false;
	shardid::Layout layout = IsInParallelMode()
								 ? read_layout_in_parallel(rel, &uncommitted)
								 : read_layout(rel, GetLatestSnapshot(), &uncommitted);

	table_close(rel, AccessShareLock);

	cached_layout = layout;
	layout_uncommitted = uncommitted;
	layout_table_oid = relid;
	layout_valid = true;
}

/*
 * Locks layout_config until the transaction ends (see the file header),
 * owned by the top transaction so that a subtransaction's abort keeps it,
 * as nextval() keeps its sequence lock.
 */
static void
lock_layout_for_transaction(void)
{
	Oid relid = shardid_relation_oid("layout_config");
	ResourceOwner saved = CurrentResourceOwner;

	CurrentResourceOwner = TopTransactionResourceOwner;
	LockRelationOid(relid, AccessShareLock);
	CurrentResourceOwner = saved;
	layout_locked_lxid = SHARDID_MY_LXID();
}

const shardid::Layout &
current_layout(void)
{
	if (unlikely(layout_locked_lxid != SHARDID_MY_LXID()))
		lock_layout_for_transaction();
	if (unlikely(!layout_valid))
		load_layout();
	return cached_layout;
}

const shardid::Layout &
reload_layout(void)
{
	load_layout();
	return cached_layout;
}

const shardid::Layout &
last_read_layout(void)
{
	return cached_layout;
}

uint64
layout_generation(void)
{
	return generation;
}

bool
layout_changed_in_this_transaction(void)
{
	return layout_changed_lxid == SHARDID_MY_LXID() || (layout_valid && layout_uncommitted);
}

/*
 * Drops every cached plan in every backend (at commit): the decoders are
 * IMMUTABLE, so plans hold their results folded to constants, and plans
 * that read no table are not reset by a relcache invalidation. Any change
 * of a pg_namespace row makes each backend's plan cache reset itself, so
 * this sends one for the shardid schema's (unchanged) row.
 */
static void
invalidate_cached_plans(void)
{
	Oid nsp = get_namespace_oid("shardid", true);

	if (!OidIsValid(nsp))
		return;
	Relation rel = table_open(NamespaceRelationId, AccessShareLock);
	HeapTuple tup = SearchSysCacheCopy1(NAMESPACEOID, ObjectIdGetDatum(nsp));

	if (HeapTupleIsValid(tup))
	{
		CacheInvalidateHeapTuple(rel, tup, NULL);
		heap_freetuple(tup);
	}
	table_close(rel, AccessShareLock);
}

/* Statement trigger on layout_config: tell every backend to reread it. */
extern "C" Datum
shardid_layout_changed(PG_FUNCTION_ARGS)
{
	if (!CALLED_AS_TRIGGER(fcinfo))
		elog(ERROR, "shardid_layout_changed: not called by trigger manager");
	TriggerData *trigdata = (TriggerData *) fcinfo->context;

	layout_changed_lxid = SHARDID_MY_LXID();
	forget_layout();
	CacheInvalidateRelcacheByRelid(RelationGetRelid(trigdata->tg_relation));
	invalidate_cached_plans();
	return PointerGetDatum(NULL);
}
