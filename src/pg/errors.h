/*
 * errors.h — the SQL errors of the core's refusals: a layout status
 * (layout.hpp) or a generator step that cannot issue (generator.hpp), each
 * with the SQLSTATE a PostgreSQL user expects and the values involved.
 */
#pragma once

#include "shardid_pg.h"

/* Raises the SQL error that matches a core status; never returns. */
[[noreturn]] void report_layout_status(shardid::Status st, const shardid::Layout &layout,
									   int64 value);

/* next_id() read a clock earlier than the layout's epoch. */
[[noreturn]] void report_clock_before_epoch(const shardid::Layout &layout, int64 now_ms);

/*
 * Generator `generator` cannot step past `state`: a state beyond what the
 * layout holds (set by hand or restored), or the layout's last millisecond.
 */
[[noreturn]] void report_generator_exhausted(const char *generator, const shardid::Layout &layout,
											 int64 state);
