/*
 * next_id.cpp — shardid.next_id(shard, seq): the generator.
 *
 * The generator's durable state is the composite C = time << seq_bits |
 * counter (generator.hpp), kept in the last_value of an ordinary sequence,
 * so it is as crash-safe and replicated as nextval() and needs no shared
 * memory. Locking and WAL follow nextval() in sequence.c:
 *
 *  - The sequence is locked RowExclusiveLock once per transaction, owned by
 *    the top transaction (ALTER/DROP SEQUENCE conflict with it and wait).
 *  - Each call pins block 0 and takes its buffer lock exclusively; the step
 *    C -> C' and the tuple update happen under that lock, so concurrent
 *    callers are serialised and every C' is unique. No lock is held while
 *    a caller waits for the clock (shardid.max_drift).
 *  - Before issuing C', a WAL record (the sequence's own XLOG_SEQ_LOG,
 *    replayed by PostgreSQL's sequence redo) logs a state kLogAheadMs
 *    ahead whenever C' passes what was logged, the sequence was never
 *    called, or the page has not been logged since the last checkpoint.
 *    log_cnt holds the logged headroom (logged - C), like nextval's count
 *    of values fetched ahead. A transaction that writes such a record gets
 *    an xid, so its commit flushes the WAL: after a crash the replayed state
 *    is above every ID of a committed row.
 *
 * A generator must have no writer but next_id(): PostgreSQL 19's logical
 * replication of sequences (CREATE PUBLICATION ... FOR ALL SEQUENCES) sets
 * a subscriber's sequence to the publisher's state at every REFRESH, lower
 * than IDs issued here if need be. next_id() therefore refuses a sequence
 * that a subscription synchronises (listed in pg_subscription_rel). The
 * lookup runs with the other checks of a transaction's first call, not per
 * call, in PostgreSQL's catalog cache (which keeps the answer, also "none",
 * until pg_subscription_rel changes); before 19 the catalog lists only
 * tables, and the lookup finds nothing.
 *
 * _raise_generator(seq, state), for sync_generators(), follows setval():
 * RowExclusiveLock, the same buffer lock, log_cnt reset and the new state
 * WAL-logged. It compares and writes under the buffer lock, so it never
 * lowers a state that next_id() advanced meanwhile, and it takes no lock
 * that a writer waits for.
 */
#include "shardid_pg.h"
#include "compat.h"
#include "errors.h"
#include "layout_cache.h"
#include "layout_freeze.h"

extern "C" {
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "access/xloginsert.h"
#include "catalog/pg_sequence.h"
#include "catalog/pg_subscription.h"
#include "catalog/pg_subscription_rel.h"
#include "commands/sequence.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "tcop/utility.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/catcache.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/resowner.h"
#include "utils/syscache.h"
#include "utils/wait_event.h"

PG_FUNCTION_INFO_V1(shardid_next_id);
PG_FUNCTION_INFO_V1(shardid_raise_generator);
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
 * Refuses a generator that a subscription synchronises: its state may be
 * overwritten by the publisher's at the next REFRESH, so IDs issued here
 * could be issued again.
 */
static void
refuse_synchronised_sequence(Relation rel)
{
	Oid subid = InvalidOid;
	CatCList *rels =
		SearchSysCacheList1(SUBSCRIPTIONRELMAP, ObjectIdGetDatum(RelationGetRelid(rel)));

	for (int i = 0; i < rels->n_members; i++)
	{
		Oid member = ((Form_pg_subscription_rel) GETSTRUCT(&rels->members[i]->tuple))->srsubid;

		if (!OidIsValid(subid) || member < subid)
			subid = member;
	}
	ReleaseSysCacheList(rels);

	if (!OidIsValid(subid))
		return;

	const char *subname = "?";
	HeapTuple sub = SearchSysCache1(SUBSCRIPTIONOID, ObjectIdGetDatum(subid));

	if (HeapTupleIsValid(sub))
	{
		subname = pstrdup(NameStr(((Form_pg_subscription) GETSTRUCT(sub))->subname));
		ReleaseSysCache(sub);
	}
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("sequence %s is synchronized by logical replication",
					quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
											   RelationGetRelationName(rel))),
			 errdetail("Subscription \"%s\" sets it to the publisher's state (ALTER SUBSCRIPTION "
					   "... REFRESH SEQUENCES), lower than IDs issued here if need be.",
					   subname),
			 errhint("Drop subscription \"%s\", or remove the sequence from its publication and "
					 "run ALTER SUBSCRIPTION ... REFRESH PUBLICATION; then run "
					 "shardid.sync_generators().",
					 subname)));
}

/* Refuses a sequence that cannot hold the generator's state durably. */
static void
check_sequence(Relation rel, const shardid::Layout &layout)
{
	Oid relid = RelationGetRelid(rel);

	if (rel->rd_rel->relkind != RELKIND_SEQUENCE)
		ereport(
			ERROR,
			(errcode(ERRCODE_WRONG_OBJECT_TYPE),
			 errmsg("\"%s\" is not a sequence", RelationGetRelationName(rel)),
			 errhint("next_id() keeps its state in a sequence: CREATE SEQUENCE ... AS bigint.")));

	if (rel->rd_rel->relpersistence != RELPERSISTENCE_PERMANENT)
		ereport(
			ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("sequence \"%s\" is %s", RelationGetRelationName(rel),
					rel->rd_rel->relpersistence == RELPERSISTENCE_TEMP ? "temporary" : "unlogged"),
			 errdetail("A crash resets temporary and unlogged sequences, so IDs would repeat."),
			 errhint("Use a permanent sequence.")));

	if (pg_class_aclcheck(relid, GetUserId(), ACL_USAGE | ACL_UPDATE) != ACLCHECK_OK)
		ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
						errmsg("permission denied for sequence %s", RelationGetRelationName(rel)),
						errhint("next_id() needs USAGE or UPDATE on the sequence.")));

	HeapTuple tup = SearchSysCache1(SEQRELID, ObjectIdGetDatum(relid));

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for sequence %u", relid);
	int64 seqmax = ((Form_pg_sequence) GETSTRUCT(tup))->seqmax;

	ReleaseSysCache(tup);

	if (seqmax < shardid::max_state(layout))
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						errmsg("sequence \"%s\" is too small for the generator state",
							   RelationGetRelationName(rel)),
						errdetail("Its MAXVALUE is %lld; this layout needs %lld.",
								  (long long) seqmax, (long long) shardid::max_state(layout)),
						errhint("ALTER SEQUENCE %s AS bigint MAXVALUE 9223372036854775807.",
								RelationGetRelationName(rel))));
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

	ResourceOwner saved = CurrentResourceOwner;

	CurrentResourceOwner = TopTransactionResourceOwner;
	LockRelationOid(relid, RowExclusiveLock);
	CurrentResourceOwner = saved;

	Relation rel = try_relation_open(relid, NoLock);

	if (rel == NULL)
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT),
						errmsg("sequence with OID %u does not exist", relid)));
	check_sequence(rel, layout);
	refuse_synchronised_sequence(rel);

	checked[next_slot] = CheckedSequence{relid, userid, lxid};
	next_slot = (next_slot + 1) % kCheckedSlots;
	return rel;
}

/* Block 0 of a sequence, pinned and exclusively locked, and its tuple. */
static Form_pg_sequence_data
lock_sequence_tuple(Relation rel, Buffer *buf, HeapTupleData *tuple)
{
	*buf = ReadBuffer(rel, 0);
	LockBuffer(*buf, BUFFER_LOCK_EXCLUSIVE);

	Page page = BufferGetPage(*buf);
	auto *sm = reinterpret_cast<sequence_magic *>(PageGetSpecialPointer(page));

	if (sm->magic != SEQ_MAGIC)
		elog(ERROR, "bad magic number in sequence \"%s\": %08X", RelationGetRelationName(rel),
			 sm->magic);

	ItemId lp = PageGetItemId(page, FirstOffsetNumber);

	tuple->t_data = (HeapTupleHeader) PageGetItem(page, lp);
	tuple->t_len = ItemIdGetLength(lp);

	/* clear an xmax left by an old SELECT FOR UPDATE, as sequence.c does */
	if (HeapTupleHeaderGetRawXmax(tuple->t_data) != InvalidTransactionId)
	{
		HeapTupleHeaderSetXmax(tuple->t_data, InvalidTransactionId);
		tuple->t_data->t_infomask &= ~HEAP_XMAX_COMMITTED;
		tuple->t_data->t_infomask |= HEAP_XMAX_INVALID;
		MarkBufferDirtyHint(*buf, true);
	}
	return (Form_pg_sequence_data) GETSTRUCT(tuple);
}

/* The wall clock in Unix milliseconds. */
static int64
now_unix_ms(void)
{
	return timestamptz_to_unix_ms(GetCurrentTimestamp());
}

/* next_id(shard int, seq regclass) — the next ID of a generator. */
extern "C" Datum
shardid_next_id(PG_FUNCTION_ARGS)
{
	int32 shard = PG_GETARG_INT32(0);
	Oid relid = PG_GETARG_OID(1);

	PreventCommandDuringRecovery("shardid.next_id()");
	PreventCommandIfReadOnly("shardid.next_id()");
	PreventCommandIfParallelMode("shardid.next_id()");

	shardid::Layout layout;
	bool marked;

restart:
	marked = generator_layout(&layout);

	if (shard < 0 || shard > layout.max_shard())
		report_layout_status(shardid::Status::shard_out_of_range, layout, shard);

	Relation rel = open_generator(relid, layout);
	bool needs_wal = RelationNeedsWAL(rel);
	int64 *ceiling = lead_ceiling(relid);

	for (;;)
	{
		Buffer buf;
		HeapTupleData tuple;
		Form_pg_sequence_data seq = lock_sequence_tuple(rel, &buf, &tuple);
		Page page = BufferGetPage(buf);
		int64 state = seq->last_value;

		/*
		 * The clock is read under the lock: a reading taken before waiting
		 * for the lock could be older than the state by more than the drift
		 * cap, and next_step would take it for a clock stepped back and
		 * raise the generator's lead ceiling past the cap.
		 */
		int64 now_ms = now_unix_ms();
		shardid::Step step =
			shardid::next_step(layout, state, now_ms, shard, shardid_max_drift_ms, ceiling);

		if (step.kind == shardid::Step::Kind::wait)
		{
			UnlockReleaseBuffer(buf);
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 (long) Min(step.wait_ms, 1000), PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
			continue;
		}
		if (step.kind != shardid::Step::Kind::issue)
		{
			UnlockReleaseBuffer(buf);
			if (step.kind == shardid::Step::Kind::before_epoch)
				ereport(ERROR,
						(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
						 errmsg("the clock reads %s, before the layout's epoch",
								timestamptz_to_str(unix_ms_to_timestamptz(now_ms))),
						 errdetail("IDs start at %s.",
								   timestamptz_to_str(unix_ms_to_timestamptz(layout.epoch_ms)))));
			if (state > shardid::max_state(layout))
				ereport(
					ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("generator \"%s\" holds state %lld, past the last state of this layout "
							"(%lld)",
							RelationGetRelationName(rel), (long long) state,
							(long long) shardid::max_state(layout)),
					 errdetail(
						 "The sequence was set beyond what the layout can hold (setval, ALTER "
						 "SEQUENCE RESTART, or a restore from a database with another layout)."),
					 errhint("setval() it to the state of its largest issued ID: (id >> %d) << %d "
							 "| (id & %lld).",
							 layout.shard_bits + layout.seq_bits, layout.seq_bits,
							 (long long) layout.max_seq())));
			ereport(
				ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("generator \"%s\" has run out of time: the layout ends at %s",
						RelationGetRelationName(rel),
						timestamptz_to_str(unix_ms_to_timestamptz(layout.last_ms()))),
				 errdetail("With %d time bits no later ID can be represented.", layout.time_bits()),
				 errhint("A new layout (configure() in a new database) is needed to go on.")));
		}

		/*
		 * Every check has passed: the first ID of this backend marks the
		 * layout in use (so configure() refuses from now on), then starts
		 * over with the layout reread after marking, checks included.
		 */
		if (unlikely(!marked))
		{
			UnlockReleaseBuffer(buf);
			relation_close(rel, NoLock);
			mark_layout_in_use();
			forget_checked_sequences((Datum) 0, SEQRELID, 0);
			goto restart;
		}

		int64 logged = seq->is_called ? state + seq->log_cnt : 0;
		bool logit = !seq->is_called || step.state > logged || PageGetLSN(page) <= GetRedoRecPtr();

		if (logit)
			logged = shardid::state_ahead(layout, step.state, kLogAheadMs);
		if (logit && needs_wal)
			GetTopTransactionId();

		START_CRIT_SECTION();
		MarkBufferDirty(buf);
		if (logit && needs_wal)
		{
			xl_seq_rec xlrec;

			XLogBeginInsert();
			XLogRegisterBuffer(0, buf, REGBUF_WILL_INIT);
			seq->last_value = logged;
			seq->is_called = true;
			seq->log_cnt = 0;
			SHARDID_SEQ_REC_SET_REL(xlrec, rel);
			XLogRegisterData((char *) &xlrec, sizeof(xl_seq_rec));
			XLogRegisterData((char *) tuple.t_data, tuple.t_len);
			XLogRecPtr recptr = XLogInsert(RM_SEQ_ID, XLOG_SEQ_LOG);

			PageSetLSN(page, recptr); /* a macro: evaluates its argument twice */
		}
		seq->last_value = step.state;
		seq->is_called = true;
		seq->log_cnt = logged - step.state;
		END_CRIT_SECTION();

		UnlockReleaseBuffer(buf);
		relation_close(rel, NoLock);
		PG_RETURN_INT64(step.id);
	}
}

/*
 * _raise_generator(seq regclass, state bigint) — sets a generator's state to
 * at least state, never lower; true if it changed. Raising needs UPDATE on
 * the sequence (as setval()); comparing needs SELECT, USAGE or UPDATE, which
 * already show the state.
 */
extern "C" Datum
shardid_raise_generator(PG_FUNCTION_ARGS)
{
	Oid relid = PG_GETARG_OID(0);
	int64 target = PG_GETARG_INT64(1);

	PreventCommandDuringRecovery("shardid._raise_generator()");
	PreventCommandIfReadOnly("shardid._raise_generator()");
	PreventCommandIfParallelMode("shardid._raise_generator()");

	shardid::Layout layout = current_layout();

	if (target < 0 || target > shardid::max_state(layout))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("generator state %lld is outside this layout", (long long) target),
				 errdetail("States run from 0 to %lld.", (long long) shardid::max_state(layout))));

	LockRelationOid(relid, RowExclusiveLock);

	Relation rel = try_relation_open(relid, NoLock);

	if (rel == NULL)
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT),
						errmsg("sequence with OID %u does not exist", relid)));
	if (rel->rd_rel->relkind != RELKIND_SEQUENCE)
		ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE),
						errmsg("\"%s\" is not a sequence", RelationGetRelationName(rel))));
	/* another session's temporary sequence cannot even be read */
	if (rel->rd_rel->relpersistence != RELPERSISTENCE_PERMANENT)
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						errmsg("sequence \"%s\" is not a generator: it is %s",
							   RelationGetRelationName(rel),
							   rel->rd_rel->relpersistence == RELPERSISTENCE_TEMP ? "temporary"
																				  : "unlogged")));
	if (pg_class_aclcheck(relid, GetUserId(), ACL_SELECT | ACL_USAGE | ACL_UPDATE) != ACLCHECK_OK)
		ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
						errmsg("permission denied for sequence %s", RelationGetRelationName(rel))));

	HeapTuple tup = SearchSysCache1(SEQRELID, ObjectIdGetDatum(relid));

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for sequence %u", relid);
	int64 seqmax = ((Form_pg_sequence) GETSTRUCT(tup))->seqmax;

	ReleaseSysCache(tup);
	if (target > seqmax)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("generator state %lld is above the MAXVALUE of sequence \"%s\" (%lld)",
						(long long) target, RelationGetRelationName(rel), (long long) seqmax),
				 errhint("ALTER SEQUENCE %s AS bigint MAXVALUE 9223372036854775807.",
						 RelationGetRelationName(rel))));

	Buffer buf;
	HeapTupleData tuple;
	Form_pg_sequence_data seq = lock_sequence_tuple(rel, &buf, &tuple);
	bool raise = !seq->is_called || seq->last_value < target;

	if (raise && pg_class_aclcheck(relid, GetUserId(), ACL_UPDATE) != ACLCHECK_OK)
	{
		UnlockReleaseBuffer(buf);
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for sequence %s", RelationGetRelationName(rel)),
				 errhint("Raising a generator needs UPDATE on its sequence, as setval() does.")));
	}
	if (raise)
	{
		Page page = BufferGetPage(buf);
		bool needs_wal = RelationNeedsWAL(rel);

		/* as setval(): the commit of a transaction with an xid flushes the WAL */
		if (needs_wal)
			GetTopTransactionId();

		START_CRIT_SECTION();
		seq->last_value = target;
		seq->is_called = true;
		seq->log_cnt = 0;
		MarkBufferDirty(buf);
		if (needs_wal)
		{
			xl_seq_rec xlrec;

			XLogBeginInsert();
			XLogRegisterBuffer(0, buf, REGBUF_WILL_INIT);
			SHARDID_SEQ_REC_SET_REL(xlrec, rel);
			XLogRegisterData((char *) &xlrec, sizeof(xl_seq_rec));
			XLogRegisterData((char *) tuple.t_data, tuple.t_len);
			XLogRecPtr recptr = XLogInsert(RM_SEQ_ID, XLOG_SEQ_LOG);

			PageSetLSN(page, recptr);
		}
		END_CRIT_SECTION();
	}
	UnlockReleaseBuffer(buf);
	relation_close(rel, NoLock);
	PG_RETURN_BOOL(raise);
}
