/*
 * sequence_state.h — a generator's state in its sequence's tuple
 * (sequence_state.cpp): the checks a generator sequence must pass, its
 * locked page, and the one way a new state is written and WAL-logged.
 */
#pragma once

#include "shardid_pg.h"

extern "C" {
#include "access/htup.h"
#include "access/xlogdefs.h"
#include "commands/sequence.h"
#include "storage/bufmgr.h"
#include "utils/relcache.h"
#include "utils/resowner.h"
}

/* What the caller of check_generator_sequence() does with the generator. */
enum class GeneratorUse
{
	issue, /* next_id(): needs USAGE or UPDATE */
	raise, /* _raise_generator(): compares with SELECT, USAGE or UPDATE */
};

/*
 * Refuses a relation that cannot hold a generator's state durably for this
 * use: not a sequence, temporary or unlogged (a crash resets it), without
 * the caller's privileges, a MAXVALUE below largest_state (the layout's
 * last state to issue, the target to raise), or (to issue) a sequence that
 * logical replication overwrites.
 */
void check_generator_sequence(Relation rel, GeneratorUse use, int64 largest_state);

/*
 * Opens a generator's sequence after locking it RowExclusiveLock, the lock
 * held by owner (nextval() gives it to the top transaction); errors if the
 * sequence is gone.
 */
Relation open_generator_sequence(Oid relid, ResourceOwner owner);

/*
 * Block 0 of a sequence, pinned and exclusively locked, and its tuple;
 * *page_lsn is the page's LSN as found (before any hint this call writes).
 */
Form_pg_sequence_data lock_sequence_tuple(Relation rel, Buffer *buf, HeapTupleData *tuple,
										  XLogRecPtr *page_lsn);

/*
 * Where this server's timeline begins, cached per backend; PG_UINT64_MAX
 * until timeline_begin() has read it. A generator whose page LSN is below
 * it was last logged on an earlier timeline (before a promotion or a
 * restore): compare with timeline_begin_cached first, one comparison on
 * the hot path, and call timeline_begin() only when it says "below".
 */
extern XLogRecPtr timeline_begin_cached;

/* Reads and caches where this server's timeline begins; not in recovery. */
XLogRecPtr timeline_begin(void);

/*
 * The state a generator last logged on an earlier timeline moves to before
 * its first step on this one (shardid::failover_state with the settings),
 * reported in the server log once the caller has released the buffer
 * (report_failover_move()).
 */
int64 failover_move(const shardid::Layout &layout, int64 state, int64 now_unix_ms);

/* Logs a generator's move on a new timeline (LOG, to the server log). */
void report_failover_move(Relation rel, const shardid::Layout &layout, int64 from, int64 to,
						  int64 now_unix_ms);

/*
 * Writes state into the sequence's locked page: with log, the page is first
 * WAL-logged holding `logged` (>= state), the state a crash recovers to, as
 * nextval() logs values fetched ahead; log_cnt keeps logged - state.
 */
void write_generator_state(Relation rel, Buffer buf, HeapTupleData *tuple, int64 state,
						   int64 logged, bool log);
