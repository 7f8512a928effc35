/*
 * layout_cache.cpp — the database's ID layout, cached per backend.
 *
 * The layout lives in shardid.layout_config, a one-row extension config
 * table (empty means Instagram's default), so it travels with pg_dump.
 * Decoders must not read a table per call, so the row is read once into a
 * static and forgotten on a relcache invalidation of that table; a trigger
 * on the table sends that invalidation whenever a statement changes it,
 * configure() and a restore's COPY alike.
 *
 * The layout may not change once a generator has issued an ID. The marker
 * is the sequence shardid.ids_issued: when the first next_id() of a backend
 * has passed every check and is about to issue, it advances the marker
 * (non-transactional and WAL-logged, so an aborted transaction still
 * counts; from C, so ordinary roles need no privilege on the marker and
 * cannot advance it themselves), rereads the layout and starts over with
 * it. configure() locks layout_config and refuses once IDs have been
 * issued (_refuse_issued_layout(): ids_issued is_called, a generator holds
 * a state, or a freeze record exists); a backend marking the sequence while
 * configure() runs reads the layout after configure() commits, because it
 * reads with a fresh snapshot and its AccessShareLock waits for
 * configure()'s lock.
 *
 * setval() and PostgreSQL 19's sequence replication can reset the marker
 * and the generators, so marking also writes the freeze record: a row of
 * shardid.layout_freeze, which no sequence operation reaches and whose
 * trigger refuses every UPDATE, DELETE and TRUNCATE. The insert is
 * transactional: until this backend has seen a committed row, each new
 * transaction that issues marks again (freeze_pending_lxid), so a rolled
 * back record is written again.
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
 *
 * next_id() refuses to run in a transaction that changed the layout (the
 * trigger remembers the transaction; a row written by it is noticed too):
 * if that transaction rolled back, the generator state would be left in
 * the units of a layout that never existed.
 */
#include "shardid_pg.h"
#include "compat.h"

extern "C" {
#include "access/htup_details.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/heapam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/namespace.h"
#include "catalog/pg_namespace.h"
#include "commands/sequence.h"
#include "commands/trigger.h"
#include "funcapi.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

PG_FUNCTION_INFO_V1(shardid_layout);
PG_FUNCTION_INFO_V1(shardid_check_layout);
PG_FUNCTION_INFO_V1(shardid_layout_changed);
}

static shardid::Layout cached_layout = shardid::kDefaultLayout;
static bool layout_valid = false;
static bool layout_marked = false;
static Oid layout_table_oid = InvalidOid;
static bool callback_registered = false;

/* The layout row cached was written by the current transaction. */
static bool layout_uncommitted = false;

/* The transaction (local id) that last changed layout_config here. */
static LocalTransactionId layout_changed_lxid = InvalidLocalTransactionId;

/* The transaction (local id) that holds its lock on layout_config. */
static LocalTransactionId layout_locked_lxid = InvalidLocalTransactionId;

/*
 * The transaction (local id) that wrote or saw an uncommitted freeze record
 * here; invalid once a committed one was seen (or there is no table).
 */
static LocalTransactionId freeze_pending_lxid = InvalidLocalTransactionId;

/* Forgets the cached layout; the next current_layout() reads it again. */
static void
forget_layout(void)
{
	layout_valid = false;
	layout_marked = false;
}

/* Relcache callback: drop the cache when layout_config (or everything) changes. */
static void
layout_relcache_callback(Datum, Oid relid)
{
	if (relid == InvalidOid || relid == layout_table_oid)
		forget_layout();
}

/* OID of an object of the extension's schema, or InvalidOid. */
static Oid
shardid_relation_oid_if_exists(const char *relname)
{
	Oid nsp = get_namespace_oid("shardid", true);

	return OidIsValid(nsp) ? get_relname_relid(relname, nsp) : InvalidOid;
}

/* OID of an object of the extension's schema, erroring if it is missing. */
static Oid
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

/* Refuses to generate with a layout this transaction changed. */
static void
refuse_uncommitted_layout(void)
{
	if (layout_changed_lxid == SHARDID_MY_LXID() || (layout_valid && layout_uncommitted))
		ereport(
			ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("next_id() cannot run in the transaction that changed the layout"),
			 errdetail("Were the transaction rolled back, generators would keep states in the "
					   "units of a layout that never took effect."),
			 errhint("Commit the configure() first, then call next_id() in a new transaction.")));
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

bool
generator_layout(shardid::Layout *layout)
{
	/* the freeze record of an earlier transaction may have rolled back */
	if (unlikely(freeze_pending_lxid != InvalidLocalTransactionId) &&
		freeze_pending_lxid != SHARDID_MY_LXID())
		layout_marked = false;
	if (unlikely(!layout_marked))
	{
		refuse_uncommitted_layout();
		load_layout();
		refuse_uncommitted_layout();
	}
	*layout = cached_layout;
	return layout_marked;
}

/*
 * Writes the freeze record (layout_freeze) with this layout, unless a row
 * is there. A database still on 0.1 has no such table: nothing to write.
 */
static void
record_freeze(const shardid::Layout &layout)
{
	Oid relid = shardid_relation_oid_if_exists("layout_freeze");

	freeze_pending_lxid = InvalidLocalTransactionId;
	if (!OidIsValid(relid))
		return;

	Relation rel = table_open(relid, RowExclusiveLock);
	Snapshot snap = RegisterSnapshot(GetLatestSnapshot());
	TableScanDesc scan = SHARDID_TABLE_BEGINSCAN(rel, snap, 0, NULL);
	HeapTuple tup;
	bool committed = false;
	bool mine = false;

	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		if (!TransactionIdIsCurrentTransactionId(HeapTupleHeaderGetXmin(tup->t_data)))
		{
			committed = true;
			break;
		}
		mine = true;
	}
	table_endscan(scan);
	UnregisterSnapshot(snap);

	if (!committed && !mine)
	{
		Datum values[4] = {TimestampTzGetDatum(GetCurrentTimestamp()),
						   Int64GetDatum(layout.epoch_ms), Int32GetDatum(layout.shard_bits),
						   Int32GetDatum(layout.seq_bits)};
		bool nulls[4] = {false, false, false, false};
		HeapTuple row = heap_form_tuple(RelationGetDescr(rel), values, nulls);

		simple_heap_insert(rel, row);
		heap_freetuple(row);
	}
	table_close(rel, NoLock);
	if (!committed)
		freeze_pending_lxid = SHARDID_MY_LXID();
}

void
mark_layout_in_use(void)
{
	(void) nextval_internal(shardid_relation_oid("ids_issued"), false);
	load_layout();
	refuse_uncommitted_layout();
	record_freeze(cached_layout);
	layout_marked = true;
}

/* Whether layout_freeze holds a row visible to the active snapshot. */
static bool
freeze_recorded(void)
{
	Oid relid = shardid_relation_oid_if_exists("layout_freeze");

	if (!OidIsValid(relid))
		return false;
	Relation rel = table_open(relid, AccessShareLock);
	TableScanDesc scan = SHARDID_TABLE_BEGINSCAN(rel, GetActiveSnapshot(), 0, NULL);
	bool found = heap_getnext(scan, ForwardScanDirection) != NULL;

	table_endscan(scan);
	table_close(rel, AccessShareLock);
	return found;
}

int64
timestamptz_to_unix_ms(TimestampTz ts)
{
	if (TIMESTAMP_NOT_FINITE(ts))
		ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
						errmsg("an infinite timestamp has no ID")));
	/* floor division: times before 2000 are negative */
	int64 ms = ts / 1000;

	if (ts % 1000 < 0)
		ms -= 1;
	return ms + kPgEpochUnixMs;
}

TimestampTz
unix_ms_to_timestamptz(int64 unix_ms)
{
	return (unix_ms - kPgEpochUnixMs) * 1000;
}

/* A timestamptz text for messages. */
static const char *
unix_ms_text(int64 unix_ms)
{
	return timestamptz_to_str(unix_ms_to_timestamptz(unix_ms));
}

void
report_layout_status(shardid::Status st, const shardid::Layout &layout, int64 value)
{
	using shardid::Status;

	switch (st)
	{
		case Status::bad_shard_bits:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("shard_bits %lld is out of range", (long long) value),
					 errdetail("shard_bits must be between 0 and %d.", shardid::kMaxFieldBits)));
			break;
		case Status::bad_seq_bits:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("seq_bits %lld is out of range", (long long) value),
					 errdetail("seq_bits must be between 0 and %d.", shardid::kMaxFieldBits)));
			break;
		case Status::bad_time_bits:
			ereport(
				ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("shard_bits + seq_bits = %d leaves %d bits for time",
						layout.shard_bits + layout.seq_bits, layout.time_bits()),
				 errdetail("Time needs at least %d bits: shard_bits + seq_bits must be at most %d.",
						   shardid::kMinTimeBits, 63 - shardid::kMinTimeBits)));
			break;
		case Status::time_too_wide:
			ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							errmsg("shard_bits + seq_bits = %d leaves %d bits for time, more than "
								   "timestamptz can hold",
								   layout.shard_bits + layout.seq_bits, layout.time_bits()),
							errdetail("The last ID time must be before 294277-01-01; give more "
									  "bits to shard or seq.")));
			break;
		case Status::bad_epoch:
			ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							errmsg("epoch %s is out of range", unix_ms_text(value)),
							errdetail("The epoch must be between 1970-01-01 and 9999-12-31 UTC.")));
			break;
		case Status::shard_out_of_range:
			ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							errmsg("shard %lld is out of range", (long long) value),
							errdetail("This layout has %d shard bits (0..%lld).", layout.shard_bits,
									  (long long) layout.max_shard())));
			break;
		case Status::seq_out_of_range:
			ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							errmsg("seq %lld is out of range", (long long) value),
							errdetail("This layout has %d seq bits (0..%lld).", layout.seq_bits,
									  (long long) layout.max_seq())));
			break;
		case Status::time_before_epoch:
			ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
							errmsg("time %s is before the layout's epoch", unix_ms_text(value)),
							errdetail("IDs start at %s.", unix_ms_text(layout.epoch_ms))));
			break;
		case Status::time_past_end:
			ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
							errmsg("time %s is past the last time the layout can represent",
								   unix_ms_text(value)),
							errdetail("With %d time bits, IDs end at %s.", layout.time_bits(),
									  unix_ms_text(layout.last_ms()))));
			break;
		case Status::negative_id:
			ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							errmsg("ID %lld is negative", (long long) value),
							errdetail("shardid IDs are positive: the sign bit is always 0.")));
			break;
		case Status::ok:
			break;
	}
	elog(ERROR, "unexpected shardid status %d", static_cast<int>(st));
}

/* layout() — the database's layout and what it allows. */
extern "C" Datum
shardid_layout(PG_FUNCTION_ARGS)
{
	TupleDesc tupdesc;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);

	const shardid::Layout &layout = current_layout();
	Datum values[9];
	bool nulls[9] = {false};
	bool issued;

	/* pg_sequence_last_value() is NULL until the first nextval() */
	{
		LOCAL_FCINFO(lfcinfo, 1);

		InitFunctionCallInfoData(*lfcinfo, NULL, 1, InvalidOid, NULL, NULL);
		lfcinfo->args[0].value = ObjectIdGetDatum(shardid_relation_oid("ids_issued"));
		lfcinfo->args[0].isnull = false;
		(void) pg_sequence_last_value(lfcinfo);
		issued = !lfcinfo->isnull || freeze_recorded();
	}

	values[0] = TimestampTzGetDatum(unix_ms_to_timestamptz(layout.epoch_ms));
	values[1] = Int32GetDatum(layout.time_bits());
	values[2] = Int32GetDatum(layout.shard_bits);
	values[3] = Int32GetDatum(layout.seq_bits);
	values[4] = Int32GetDatum((int32) layout.max_shard());
	values[5] = Int64GetDatum(layout.max_seq() + 1);
	values[6] = Int64GetDatum((layout.max_seq() + 1) * 1000);
	values[7] = TimestampTzGetDatum(unix_ms_to_timestamptz(layout.last_ms()));
	values[8] = BoolGetDatum(issued);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* check_layout() — validates a candidate layout with the core's rules. */
extern "C" Datum
shardid_check_layout(PG_FUNCTION_ARGS)
{
	int64 epoch_ms = timestamptz_to_unix_ms(PG_GETARG_TIMESTAMPTZ(0));
	int32 shard_bits = PG_GETARG_INT32(1);
	int32 seq_bits = PG_GETARG_INT32(2);
	shardid::Layout layout;
	shardid::Status st = shardid::make_layout(epoch_ms, shard_bits, seq_bits, &layout);

	if (st != shardid::Status::ok)
	{
		shardid::Layout shown{epoch_ms, shard_bits, seq_bits};
		int64 value = st == shardid::Status::bad_shard_bits ? shard_bits
					  : st == shardid::Status::bad_seq_bits ? seq_bits
															: epoch_ms;

		report_layout_status(st, shown, value);
	}
	PG_RETURN_INT64(epoch_ms);
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
