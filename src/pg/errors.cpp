/*
 * errors.cpp — every SQL error of a core refusal (see errors.h). The core
 * reports failures as status codes and step kinds; these turn them into
 * ereport(ERROR) once the core call has returned, so no C++ frame is in
 * the way of the longjmp.
 */
#include "errors.h"

extern "C" {
#include "utils/builtins.h"
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

void
report_clock_before_epoch(const shardid::Layout &layout, int64 now_ms)
{
	ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
					errmsg("the clock reads %s, before the layout's epoch", unix_ms_text(now_ms)),
					errdetail("IDs start at %s.", unix_ms_text(layout.epoch_ms))));
}

void
report_generator_exhausted(const char *generator, const shardid::Layout &layout, int64 state)
{
	if (state > shardid::max_state(layout))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("generator \"%s\" holds state %lld, past the last state of this layout "
						"(%lld)",
						generator, (long long) state, (long long) shardid::max_state(layout)),
				 errdetail("The sequence was set beyond what the layout can hold (setval, ALTER "
						   "SEQUENCE RESTART, or a restore from a database with another layout)."),
				 errhint("setval() it to the state of its largest issued ID: (id >> %d) << %d "
						 "| (id & %lld).",
						 layout.shard_bits + layout.seq_bits, layout.seq_bits,
						 (long long) layout.max_seq())));
	ereport(ERROR,
			(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
			 errmsg("generator \"%s\" has run out of time: the layout ends at %s", generator,
					unix_ms_text(layout.last_ms())),
			 errdetail("With %d time bits no later ID can be represented.", layout.time_bits()),
			 errhint("A new layout (configure() in a new database) is needed to go on.")));
}
