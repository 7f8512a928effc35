/*
 * shardid_pg.h — what the PostgreSQL glue files share.
 *
 * Only src/pg includes PostgreSQL headers; only src/core holds the logic.
 * The core's headers use nothing but <cstdint>/<cstddef>, so the two can
 * meet here without C++ library headers beside PostgreSQL's.
 */
#pragma once

extern "C" {
#include "postgres.h"

#include "fmgr.h"
#include "utils/timestamp.h"
}

#include "../core/generator.hpp"
#include "../core/layout.hpp"
#include "../core/shortcode.hpp"

/* Milliseconds between 1970-01-01 and 2000-01-01, PostgreSQL's epoch. */
constexpr int64 kPgEpochUnixMs = INT64CONST(946684800000);

/* shardid.max_drift, in milliseconds. */
extern int shardid_max_drift_ms;

/* The layout of this database, read once per backend and on change. */
const shardid::Layout &current_layout(void);

/*
 * The layout next_id() generates with, copied to *layout; refuses a layout
 * this transaction changed. Returns whether this backend has marked the
 * layout in use; until it has, next_id() must call mark_layout_in_use()
 * before issuing and start over.
 */
bool generator_layout(shardid::Layout *layout);

/* Marks the layout in use (no more configure()) and rereads it. */
void mark_layout_in_use(void);

/* timestamptz <-> Unix milliseconds (floor), erroring on infinities. */
int64 timestamptz_to_unix_ms(TimestampTz ts);
TimestampTz unix_ms_to_timestamptz(int64 unix_ms);

/* Raise the SQL error that matches a core status; never returns. */
[[noreturn]] void report_layout_status(shardid::Status st, const shardid::Layout &layout,
									   int64 value);
