/*
 * layout_freeze.cpp — the layout is fixed once a generator has issued an
 * ID, and the SQL functions configure() and layout() stand on.
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
 * next_id() refuses to run in a transaction that changed the layout (the
 * trigger remembers the transaction; a row written by it is noticed too):
 * if that transaction rolled back, the generator state would be left in
 * the units of a layout that never existed.
 */
#include "layout_freeze.h"
#include "errors.h"
#include "layout_cache.h"
#include "compat.h"

extern "C" {
#include "access/htup_details.h"
#include "access/heapam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/transam.h"
#include "commands/sequence.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

PG_FUNCTION_INFO_V1(shardid_layout);
PG_FUNCTION_INFO_V1(shardid_check_layout);
}

/*
 * The layout generation (layout_cache.h) in which this backend marked the
 * layout in use; 0 until it has, or when the marking must be made again.
 */
static uint64 marked_generation = 0;

/*
 * The transaction (local id) that wrote or saw an uncommitted freeze record
 * here; invalid once a committed one was seen (or there is no table).
 */
static LocalTransactionId freeze_pending_lxid = InvalidLocalTransactionId;

/* Refuses to generate with a layout this transaction changed. */
static void
refuse_uncommitted_layout(void)
{
	if (layout_changed_in_this_transaction())
		ereport(
			ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("next_id() cannot run in the transaction that changed the layout"),
			 errdetail("Were the transaction rolled back, generators would keep states in the "
					   "units of a layout that never took effect."),
			 errhint("Commit the configure() first, then call next_id() in a new transaction.")));
}

bool
generator_layout(shardid::Layout *layout)
{
	/* the freeze record of an earlier transaction may have rolled back */
	if (unlikely(freeze_pending_lxid != InvalidLocalTransactionId) &&
		freeze_pending_lxid != SHARDID_MY_LXID())
		marked_generation = 0;
	if (unlikely(marked_generation != layout_generation()))
	{
		refuse_uncommitted_layout();
		*layout = reload_layout();
		refuse_uncommitted_layout();
		return false;
	}
	*layout = last_read_layout();
	return true;
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
	const shardid::Layout &layout = reload_layout();

	refuse_uncommitted_layout();
	record_freeze(layout);
	marked_generation = layout_generation();
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
