/*
 * next_id.cpp — shardid.next_id(shard, seq): the generator.
 *
 * The state lives in the generator's sequence (sequence_state.cpp, which
 * says how it is locked and WAL-logged). Per call, next_id() follows
 * nextval() in sequence.c:
 *
 *  - The sequence is locked RowExclusiveLock once per transaction, owned by
 *    the top transaction, and checked then (check_generator_sequence(),
 *    which looks up logical replication in the catalog cache); later calls
 *    of the transaction only open it.
 *  - Each call takes block 0's buffer lock exclusively; the step C -> C'
 *    and the tuple update happen under that lock, so concurrent callers are
 *    serialised and every C' is unique. No lock is held while a caller
 *    waits for the clock (shardid.max_drift).
 *  - Before issuing C', the page is WAL-logged holding a state kLogAheadMs
 *    ahead whenever C' passes what was logged, the sequence was never
 *    called, or the page has not been logged since the last checkpoint.
 *  - A page last logged before this server's timeline began (a promotion,
 *    a restore) moves its state past the old timeline's reach first
 *    (failover_move(), sequence_state.cpp), and is logged.
 *
 * The first ID of a backend marks the layout in use (layout_freeze.cpp)
 * once every check has passed, and starts over with the layout reread.
 */
#include "shardid_pg.h"
#include "compat.h"
#include "errors.h"
#include "layout_freeze.h"
#include "sequence_state.h"

extern "C" {
#include "access/relation.h"
#include "access/xlog.h"
#include "catalog/pg_sequence.h"
#include "miscadmin.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "tcop/utility.h"
#include "utils/inval.h"
#include "utils/rel.h"
#include "utils/resowner.h"
#include "utils/syscache.h"
#include "utils/wait_event.h"

PG_FUNCTION_INFO_V1(shardid_next_id);
}

/* How far ahead of the issued state the WAL-logged state runs. */
constexpr int64 kLogAheadMs = 32;

/*
 * Sequences this backend has locked and checked in its current transaction,
 * for the role that checked them. A handful of slots is enough: a statement
 * rarely feeds more generators. Any change to a sequence's pg_class or
 * pg_sequence row (GRANT, ALTER SEQUENCE ... UNLOGGED / MAXVALUE, even in
 * this transaction) sends an invalidation that empties the slots, so the
 * checks run again.
 */
struct CheckedSequence
{
	Oid relid;
	Oid userid;
	LocalTransactionId lxid;
};

constexpr int kCheckedSlots = 8;
static CheckedSequence checked[kCheckedSlots];
static int next_slot = 0;
static bool callbacks_registered = false;

/*
 * The lead ceiling of each generator this backend used lately (see
 * generator.hpp): 0 while the generator is within shardid.max_drift.
 * Losing an entry is safe (the next step starts again from the lead it
 * sees), so a few slots, reused in turn, are enough.
 */
struct DriftCeiling
{
	Oid relid;
	int64 lead_ms;
};

static DriftCeiling ceilings[kCheckedSlots];
static int next_ceiling = 0;

/* The lead ceiling slot of a generator, claiming one if it has none. */
static int64 *
lead_ceiling(Oid relid)
{
	for (auto &slot : ceilings)
		if (slot.relid == relid)
			return &slot.lead_ms;
	DriftCeiling &slot = ceilings[next_ceiling];

	next_ceiling = (next_ceiling + 1) % kCheckedSlots;
	slot = DriftCeiling{relid, 0};
	return &slot.lead_ms;
}

/* Cache callback: forget every check (invalidations are rare). */
static void
forget_checked_sequences(Datum, SyscacheCallbackId, uint32)
{
	for (auto &slot : checked)
		slot = CheckedSequence{InvalidOid, InvalidOid, InvalidLocalTransactionId};
}

/* Relcache callback: a sequence's pg_class row (ACL, persistence) changed. */
static void
forget_checked_relation(Datum arg, Oid relid)
{
	for (auto &slot : ceilings)
		if (relid == InvalidOid || slot.relid == relid)
			slot = DriftCeiling{InvalidOid, 0};
	for (auto &slot : checked)
		if (relid == InvalidOid || slot.relid == relid)
		{
			forget_checked_sequences(arg, SEQRELID, 0);
			return;
		}
}

/*
 * Opens the generator sequence. The first call of a transaction (per role)
 * takes the lock (owned by the top transaction, as nextval() does) and
 * checks the sequence and the caller's privileges; later calls only open it.
 */
static Relation
open_generator(Oid relid, const shardid::Layout &layout)
{
	LocalTransactionId lxid = SHARDID_MY_LXID();
	Oid userid = GetUserId();

	for (const auto &slot : checked)
		if (slot.relid == relid && slot.lxid == lxid && slot.userid == userid)
			return relation_open(relid, NoLock);

	if (!callbacks_registered)
	{
		CacheRegisterRelcacheCallback(forget_checked_relation, (Datum) 0);
		CacheRegisterSyscacheCallback(SEQRELID, forget_checked_sequences, (Datum) 0);
		callbacks_registered = true;
	}

	Relation rel = open_generator_sequence(relid, TopTransactionResourceOwner);

	check_generator_sequence(rel, GeneratorUse::issue, shardid::max_state(layout));

	checked[next_slot] = CheckedSequence{relid, userid, lxid};
	next_slot = (next_slot + 1) % kCheckedSlots;
	return rel;
}

/* The wall clock in Unix milliseconds. */
static int64
now_unix_ms(void)
{
	return timestamptz_to_unix_ms(GetCurrentTimestamp());
}

/* Sleeps, holding no lock, until the clock may have caught up (at most 1 s). */
static void
wait_for_clock(int64 wait_ms)
{
	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					 (long) Min(wait_ms, 1000), PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
}

/*
 * Issues the next ID of generator relid into *id, or errors. Returns false,
 * having issued nothing and holding no buffer, when every check has passed
 * but the layout is not yet marked in use (marked false): the caller marks
 * it and starts over.
 */
static bool
issue_id(Oid relid, int32 shard, const shardid::Layout &layout, bool marked, int64 *id)
{
	Relation rel = open_generator(relid, layout);
	int64 *ceiling = lead_ceiling(relid);

	for (;;)
	{
		Buffer buf;
		HeapTupleData tuple;
		XLogRecPtr page_lsn;
		Form_pg_sequence_data seq = lock_sequence_tuple(rel, &buf, &tuple, &page_lsn);
		int64 state = seq->last_value;

		/*
		 * The clock is read under the lock: a reading taken before waiting
		 * for the lock could be older than the state by more than the drift
		 * cap, and next_step would take it for a clock stepped back and
		 * raise the generator's lead ceiling past the cap.
		 */
		int64 now_ms = now_unix_ms();

		/* one comparison on one timeline; a new timeline moves the state once */
		int64 moved_from = -1;

		if (unlikely(page_lsn < timeline_begin_cached) && page_lsn < timeline_begin())
		{
			moved_from = seq->is_called ? state : 0;
			state = failover_move(layout, moved_from, now_ms);
		}
		shardid::Step step =
			shardid::next_step(layout, state, now_ms, shard, shardid_max_drift_ms, ceiling);

		switch (step.kind)
		{
			case shardid::Step::Kind::wait:
				UnlockReleaseBuffer(buf);
				wait_for_clock(step.wait_ms);
				continue;
			case shardid::Step::Kind::before_epoch:
				UnlockReleaseBuffer(buf);
				report_clock_before_epoch(layout, now_ms);
			case shardid::Step::Kind::exhausted:
				UnlockReleaseBuffer(buf);
				report_generator_exhausted(RelationGetRelationName(rel), layout, state);
			case shardid::Step::Kind::issue:
				break;
		}
		if (unlikely(!marked))
		{
			UnlockReleaseBuffer(buf);
			relation_close(rel, NoLock);
			return false;
		}

		int64 logged = seq->is_called ? state + seq->log_cnt : 0;
		bool logit = !seq->is_called || step.state > logged || moved_from >= 0 ||
					 page_lsn <= GetRedoRecPtr();

		if (logit)
			logged = shardid::state_ahead(layout, step.state, kLogAheadMs);
		write_generator_state(rel, buf, &tuple, step.state, logged, logit);

		UnlockReleaseBuffer(buf);
		if (unlikely(moved_from >= 0))
			report_failover_move(rel, layout, moved_from, state, now_ms);
		relation_close(rel, NoLock);
		*id = step.id;
		return true;
	}
}

/* next_id(shard int, seq regclass) — the next ID of a generator. */
extern "C" Datum
shardid_next_id(PG_FUNCTION_ARGS)
{
	int32 shard = PG_GETARG_INT32(0);
	Oid relid = PG_GETARG_OID(1);
	shardid::Layout layout;
	int64 id;

	PreventCommandDuringRecovery("shardid.next_id()");
	PreventCommandIfReadOnly("shardid.next_id()");
	PreventCommandIfParallelMode("shardid.next_id()");

	for (;;)
	{
		bool marked = generator_layout(&layout);

		if (shard < 0 || shard > layout.max_shard())
			report_layout_status(shardid::Status::shard_out_of_range, layout, shard);
		if (issue_id(relid, shard, layout, marked, &id))
			PG_RETURN_INT64(id);

		/* the checks run again with the layout reread after marking */
		mark_layout_in_use();
		forget_checked_sequences((Datum) 0, SEQRELID, 0);
	}
}
