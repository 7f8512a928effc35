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

#include "../core/ddl_template.hpp"
#include "../core/generator.hpp"
#include "../core/layout.hpp"
#include "../core/shortcode.hpp"

/* Milliseconds between 1970-01-01 and 2000-01-01, PostgreSQL's epoch. */
constexpr int64 kPgEpochUnixMs = INT64CONST(946684800000);

/* shardid.max_drift, in milliseconds. */
extern int shardid_max_drift_ms;

/* shardid.max_clock_skew, in milliseconds. */
extern int shardid_max_clock_skew_ms;

/* timestamptz -> Unix milliseconds (floor), erroring on infinities. */
static inline int64
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

/* Unix milliseconds -> timestamptz. */
static inline TimestampTz
unix_ms_to_timestamptz(int64 unix_ms)
{
	return (unix_ms - kPgEpochUnixMs) * 1000;
}
