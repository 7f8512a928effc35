// generator.hpp — one step of the ID generator, as a pure function.
//
// The durable state of a generator is one int64, the composite
//     C = time_offset_ms << seq_bits | counter
// kept by the caller (the glue keeps it in a sequence tuple). A step reads
// the wall clock and the last state and decides the next state:
//     C' = max(now << seq_bits, C + 1)
// so IDs are strictly increasing whatever the clock does: more than
// 2^seq_bits calls in a millisecond borrow the next millisecond, and a clock
// stepping backwards leaves the generator counting from its last state.
//
// Borrowing is capped: a step that would carry the state more than
// max_drift_ms ahead of the clock asks the caller to wait instead. A state
// already beyond the cap (the clock stepped back, or the cap was lowered)
// is not made to wait until the clock catches up, since waiting out a clock
// step of an hour would stall every writer for an hour; but its lead over
// the clock may not grow either. The caller keeps, per generator, the lead
// ceiling: the largest lead it has seen beyond the cap (0 while within it).
// Beyond the cap the state may move into a new millisecond only while its
// lead stays within that ceiling, so it advances at most as fast as the
// clock: 2^seq_bits IDs per millisecond, callers waiting for the rest.
// A ceiling is only ever a lead some step observed, so callers that each
// keep their own (or lose it, and start again from the lead they see)
// never take the lead past max(its value when the clock stepped back,
// max_drift_ms).
//
// A failover (a promoted standby, a point-in-time restore: a new timeline)
// moves a generator once, before its first step there, past every state the
// old timeline could have reached (failover_state). The old primary issued
// its last ID before this server's clock read now (it was fenced before the
// promotion), its clock was within max_clock_skew_ms of this one, and its
// states stayed within max_drift_ms of its clock: so none is past
// now + max_clock_skew_ms + max_drift_ms. A state that was further ahead
// (its clock had stepped back, or an earlier failover moved it) advanced
// at most as fast as its clock: the replayed state plus
// max_clock_skew_ms + max_drift_ms covers that long after the last state
// this server replayed.
#pragma once

#include <cstdint>

#include "layout.hpp"

namespace shardid {

struct Step {
	enum class Kind : std::uint8_t {
		issue,         // state and id are set
		wait,          // retry once the clock has moved (wait_ms is a hint)
		before_epoch,  // the clock reads earlier than the layout's epoch
		exhausted,     // the next state would be past the layout's last ms
	};
	Kind kind;
	std::int64_t state;
	std::int64_t id;
	std::int64_t wait_ms;
};

// The largest composite state a layout can hold (time and counter all ones).
constexpr std::int64_t
max_state(const Layout &layout)
{
	return (layout.max_offset_ms() << layout.seq_bits) | layout.max_seq();
}

// The ID that a composite state stands for on one shard; shard must be in
// range for the layout and state within max_state(layout).
constexpr std::int64_t
state_to_id(const Layout &layout, std::int64_t state, std::int64_t shard)
{
	return ((state >> layout.seq_bits) << layout.time_shift()) | (shard << layout.seq_bits) |
		   (state & layout.max_seq());
}

// The Unix millisecond and the counter of a composite state; false, and
// nothing written, when the state is outside the layout (negative, or
// past max_state: set by hand, or restored from another layout).
bool decode_state(const Layout &layout, std::int64_t state, std::int64_t *unix_ms,
				  std::int64_t *counter) noexcept;

// Computes the step after state at wall clock now_unix_ms for shard, and
// updates the caller's lead ceiling (ms) for this generator.
Step next_step(const Layout &layout, std::int64_t state, std::int64_t now_unix_ms,
			   std::int64_t shard, std::int64_t max_drift_ms,
			   std::int64_t *lead_ceiling_ms) noexcept;

// The state a generator moves to on a new timeline when `state` was last
// logged on an older one: the first state of the millisecond
// now + max_clock_skew_ms + max_drift_ms + 1, or state moved that many
// milliseconds ahead if that is later; capped at
// max_state (the next step then reports exhaustion). Negative settings
// count as 0; a clock before the epoch counts as the epoch.
std::int64_t failover_state(const Layout &layout, std::int64_t state, std::int64_t now_unix_ms,
							std::int64_t max_drift_ms, std::int64_t max_clock_skew_ms) noexcept;

// A state to make durable before issuing `state`: ahead_ms milliseconds
// further, capped at max_state so it always fits.
std::int64_t state_ahead(const Layout &layout, std::int64_t state, std::int64_t ahead_ms) noexcept;

}  // namespace shardid
