/*
 * sequence_state.cpp — a generator's state in its sequence, and
 * _raise_generator(), which sets it for sync_generators().
 *
 * The generator's durable state is the composite C = time << seq_bits |
 * counter (generator.hpp), kept in the last_value of an ordinary sequence,
 * so it is as crash-safe and replicated as nextval() and needs no shared
 * memory. Locking and WAL follow nextval() and setval() in sequence.c:
 *
 *  - Callers lock the sequence RowExclusiveLock (ALTER/DROP SEQUENCE
 *    conflict with it and wait), then pin block 0 and take its buffer lock
 *    exclusively; a new state is computed and written under that lock, so
 *    concurrent callers are serialised and no state is lost or lowered.
 *  - write_generator_state() is the one place a state is written: the page
 *    is WAL-logged (the sequence's own XLOG_SEQ_LOG, replayed by
 *    PostgreSQL's sequence redo) holding a state at least the new one, and
 *    log_cnt keeps the headroom between the two, like nextval's count of
 *    values fetched ahead. A transaction that writes such a record gets an
 *    xid, so its commit flushes the WAL: after a crash the replayed state
 *    is above every ID of a committed row.
 *
 * A generator must have no writer but shardid: PostgreSQL 19's logical
 * replication of sequences (CREATE PUBLICATION ... FOR ALL SEQUENCES) sets
 * a subscriber's sequence to the publisher's state at every REFRESH, lower
 * than IDs issued here if need be. next_id() therefore refuses a sequence
 * that a subscription synchronises (listed in pg_subscription_rel), looked
 * up in PostgreSQL's catalog cache (which keeps the answer, also "none",
 * until pg_subscription_rel changes); before 19 the catalog lists only
 * tables, and the lookup finds nothing.
 *
 * A promotion or a restore starts a new timeline at a switch point: a
 * generator whose page LSN is below it was last logged on an earlier
 * timeline, which may have issued more IDs than this server replayed.
 * Before its first step here (next_id() or _raise_generator()), the state
 * moves past what that timeline could have reached (failover_move()) and
 * the page is WAL-logged on this timeline, so the move happens once: a
 * crash before that commit finds the page below the switch point again and
 * moves it again, from a later clock; a later promotion has a later switch
 * point and moves it again. The switch point is read from the timeline
 * history once per backend. Plain nextval() or setval() on a generator,
 * before its first next_id() on a new timeline, logs the page there
 * without the move (docs/guarantees.md says so).
 *
 * _failover_pending(seq) reports, for shardid.generators, a generator
 * that will make that move.
 *
 * _raise_generator(seq, state) follows setval(): RowExclusiveLock, the same
 * buffer lock, the new state WAL-logged with no headroom. It compares and
 * writes under the buffer lock, so it never lowers a state that next_id()
 * advanced meanwhile, and it takes no lock that a writer waits for.
 */
#include "sequence_state.h"
#include "layout_cache.h"
#include "compat.h"

extern "C" {
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/timeline.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "access/xloginsert.h"
#include "catalog/pg_sequence.h"
#include "catalog/pg_subscription.h"
#include "catalog/pg_subscription_rel.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "tcop/utility.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/catcache.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

PG_FUNCTION_INFO_V1(shardid_raise_generator);
PG_FUNCTION_INFO_V1(shardid_failover_pending);
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

/* The MAXVALUE of a sequence, from its pg_sequence row. */
static int64
sequence_maxvalue(Oid relid)
{
	HeapTuple tup = SearchSysCache1(SEQRELID, ObjectIdGetDatum(relid));

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for sequence %u", relid);
	int64 seqmax = ((Form_pg_sequence) GETSTRUCT(tup))->seqmax;

	ReleaseSysCache(tup);
	return seqmax;
}

void
check_generator_sequence(Relation rel, GeneratorUse use, int64 largest_state)
{
	Oid relid = RelationGetRelid(rel);
	const char *name = RelationGetRelationName(rel);
	bool issue = use == GeneratorUse::issue;

	if (rel->rd_rel->relkind != RELKIND_SEQUENCE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE), errmsg("\"%s\" is not a sequence", name),
				 issue ? errhint("next_id() keeps its state in a sequence: CREATE SEQUENCE "
								 "... AS bigint.")
					   : 0));

	if (rel->rd_rel->relpersistence != RELPERSISTENCE_PERMANENT)
	{
		const char *kind =
			rel->rd_rel->relpersistence == RELPERSISTENCE_TEMP ? "temporary" : "unlogged";

		if (issue)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("sequence \"%s\" is %s", name, kind),
					 errdetail("A crash resets temporary and unlogged sequences, so IDs would "
							   "repeat."),
					 errhint("Use a permanent sequence.")));
		/* another session's temporary sequence cannot even be read */
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						errmsg("sequence \"%s\" is not a generator: it is %s", name, kind)));
	}

	AclMode needed = issue ? ACL_USAGE | ACL_UPDATE : ACL_SELECT | ACL_USAGE | ACL_UPDATE;

	if (pg_class_aclcheck(relid, GetUserId(), needed) != ACLCHECK_OK)
		ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
						errmsg("permission denied for sequence %s", name),
						issue ? errhint("next_id() needs USAGE or UPDATE on the sequence.") : 0));

	int64 seqmax = sequence_maxvalue(relid);

	if (seqmax < largest_state)
	{
		if (issue)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("sequence \"%s\" is too small for the generator state", name),
					 errdetail("Its MAXVALUE is %lld; this layout needs %lld.", (long long) seqmax,
							   (long long) largest_state),
					 errhint("ALTER SEQUENCE %s AS bigint MAXVALUE 9223372036854775807.", name)));
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("generator state %lld is above the MAXVALUE of sequence \"%s\" (%lld)",
						(long long) largest_state, name, (long long) seqmax),
				 errhint("ALTER SEQUENCE %s AS bigint MAXVALUE 9223372036854775807.", name)));
	}

	if (issue)
		refuse_synchronised_sequence(rel);
}

Relation
open_generator_sequence(Oid relid, ResourceOwner owner)
{
	ResourceOwner saved = CurrentResourceOwner;

	CurrentResourceOwner = owner;
	LockRelationOid(relid, RowExclusiveLock);
	CurrentResourceOwner = saved;

	Relation rel = try_relation_open(relid, NoLock);

	if (rel == NULL)
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT),
						errmsg("sequence with OID %u does not exist", relid)));
	return rel;
}

Form_pg_sequence_data
lock_sequence_tuple(Relation rel, Buffer *buf, HeapTupleData *tuple, XLogRecPtr *page_lsn)
{
	*buf = ReadBuffer(rel, 0);
	LockBuffer(*buf, BUFFER_LOCK_EXCLUSIVE);

	Page page = BufferGetPage(*buf);

	/* before the hint below, which may log the page (data checksums) */
	*page_lsn = PageGetLSN(page);
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

XLogRecPtr timeline_begin_cached = PG_UINT64_MAX;

XLogRecPtr
timeline_begin(void)
{
	if (timeline_begin_cached != PG_UINT64_MAX)
		return timeline_begin_cached;

	/*
	 * The history file's newest entry is this timeline, from its switch
	 * point on (0 on timeline 1, which has no file). A server out of
	 * recovery stays on its timeline until it stops, so one read serves
	 * the backend.
	 */
	List *history = readTimeLineHistory(GetWALInsertionTimeLine());
	XLogRecPtr begin = ((TimeLineHistoryEntry *) linitial(history))->begin;

	list_free_deep(history);
	timeline_begin_cached = begin;
	return begin;
}

int64
failover_move(const shardid::Layout &layout, int64 state, int64 now_unix_ms)
{
	return shardid::failover_state(layout, state, now_unix_ms, shardid_max_drift_ms,
								   shardid_max_clock_skew_ms);
}

void
report_failover_move(Relation rel, const shardid::Layout &layout, int64 from, int64 to,
					 int64 now_unix_ms)
{
	int64 to_ms = 0;
	int64 counter = 0;

	(void) shardid::decode_state(layout, to, &to_ms, &counter);
	XLogRecPtr begin = timeline_begin();

	/* every shard's generator has the same name: the schema says which shard */
	const char *nspname = get_namespace_name(RelationGetNamespace(rel));
	const char *name = nspname ? psprintf("%s.%s", nspname, RelationGetRelationName(rel))
							   : RelationGetRelationName(rel);

	ereport(LOG, (errmsg("shardid: generator \"%s\" moved past the previous timeline's IDs, "
						 "from state %lld to %lld, %lld ms ahead of the clock",
						 name, (long long) from, (long long) to, (long long) (to_ms - now_unix_ms)),
				  errdetail("Timeline %u begins at %X/%X; the generator was last logged before it. "
							"shardid.max_clock_skew = %d ms, shardid.max_drift = %d ms.",
							GetWALInsertionTimeLine(), (uint32) (begin >> 32), (uint32) begin,
							shardid_max_clock_skew_ms, shardid_max_drift_ms)));
}

/*
 * The WAL record of a generator's page holding `logged`, replayed by
 * PostgreSQL's sequence redo; inside write_generator_state()'s critical
 * section. Kept out of line: most calls log nothing.
 */
static pg_noinline void
log_generator_page(Relation rel, Buffer buf, HeapTupleData *tuple, int64 logged)
{
	Form_pg_sequence_data seq = (Form_pg_sequence_data) GETSTRUCT(tuple);
	xl_seq_rec xlrec;

	XLogBeginInsert();
	XLogRegisterBuffer(0, buf, REGBUF_WILL_INIT);
	seq->last_value = logged;
	seq->is_called = true;
	seq->log_cnt = 0;
	SHARDID_SEQ_REC_SET_REL(xlrec, rel);
	XLogRegisterData((char *) &xlrec, sizeof(xl_seq_rec));
	XLogRegisterData((char *) tuple->t_data, tuple->t_len);
	XLogRecPtr recptr = XLogInsert(RM_SEQ_ID, XLOG_SEQ_LOG);

	PageSetLSN(BufferGetPage(buf), recptr); /* a macro: evaluates its argument twice */
}

void
write_generator_state(Relation rel, Buffer buf, HeapTupleData *tuple, int64 state, int64 logged,
					  bool log)
{
	Form_pg_sequence_data seq = (Form_pg_sequence_data) GETSTRUCT(tuple);
	bool wal = log && RelationNeedsWAL(rel);

	/* as nextval() and setval(): the commit of a transaction with an xid flushes the WAL */
	if (wal)
		GetTopTransactionId();

	START_CRIT_SECTION();
	MarkBufferDirty(buf);
	if (wal)
		log_generator_page(rel, buf, tuple, logged);
	seq->last_value = state;
	seq->is_called = true;
	seq->log_cnt = logged - state;
	END_CRIT_SECTION();
}

/*
 * _failover_pending(seq regclass) — true when the generator's page was last
 * WAL-logged before this server's timeline began: its next next_id() (or
 * raise) makes the failover move. The same switch point next_id() compares
 * with; the page is only read. NULL in recovery (the switch point is not
 * known before the promotion), for a sequence gone or not permanent.
 */
extern "C" Datum
shardid_failover_pending(PG_FUNCTION_ARGS)
{
	Oid relid = PG_GETARG_OID(0);

	if (RecoveryInProgress())
		PG_RETURN_NULL();

	Relation rel = try_relation_open(relid, AccessShareLock);

	if (rel == NULL)
		PG_RETURN_NULL();
	if (rel->rd_rel->relkind != RELKIND_SEQUENCE ||
		rel->rd_rel->relpersistence != RELPERSISTENCE_PERMANENT)
	{
		relation_close(rel, AccessShareLock);
		PG_RETURN_NULL();
	}

	Buffer buf = ReadBuffer(rel, 0);

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	XLogRecPtr page_lsn = BufferGetLSNAtomic(buf);

	UnlockReleaseBuffer(buf);
	relation_close(rel, AccessShareLock);
	PG_RETURN_BOOL(page_lsn < timeline_begin());
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

	PreventCommandDuringRecovery("shardid_internal._raise_generator()");
	PreventCommandIfReadOnly("shardid_internal._raise_generator()");
	PreventCommandIfParallelMode("shardid_internal._raise_generator()");

	shardid::Layout layout = current_layout();

	if (target < 0 || target > shardid::max_state(layout))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("generator state %lld is outside this layout", (long long) target),
				 errdetail("States run from 0 to %lld.", (long long) shardid::max_state(layout))));

	Relation rel = open_generator_sequence(relid, CurrentResourceOwner);

	check_generator_sequence(rel, GeneratorUse::raise, target);

	Buffer buf;
	HeapTupleData tuple;
	XLogRecPtr page_lsn;
	Form_pg_sequence_data seq = lock_sequence_tuple(rel, &buf, &tuple, &page_lsn);

	/*
	 * A state last logged on an earlier timeline makes its failover move
	 * first, as next_id() would: the raise logs the page on this timeline,
	 * after which next_id() would not move it.
	 */
	int64 from = seq->is_called ? seq->last_value : 0;
	int64 now_ms = timestamptz_to_unix_ms(GetCurrentTimestamp());
	int64 moved = page_lsn < timeline_begin() ? failover_move(layout, from, now_ms) : -1;

	target = Max(target, moved);
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
		write_generator_state(rel, buf, &tuple, target, target, true);
	UnlockReleaseBuffer(buf);
	if (moved >= 0)
		report_failover_move(rel, layout, from, moved, now_ms);
	relation_close(rel, NoLock);
	PG_RETURN_BOOL(raise);
}
