// generator.cpp — the generator step: C' = max(now << seq_bits, C + 1).
#include "generator.hpp"

#include <algorithm>

namespace shardid {

Step
next_step(const Layout &layout, std::int64_t state, std::int64_t now_unix_ms, std::int64_t shard,
		  std::int64_t max_drift_ms, std::int64_t *lead_ceiling_ms) noexcept
{
	if (now_unix_ms < layout.epoch_ms)
		return Step{Step::Kind::before_epoch, state, 0, 0};

	const std::int64_t limit = max_state(layout);
	// Offsets past the end of the layout saturate: they can only fail.
	const std::int64_t now_offset =
		std::min(now_unix_ms - layout.epoch_ms, layout.max_offset_ms() + 1);
	const std::int64_t prev = std::max<std::int64_t>(state, 0);

	if (now_offset > layout.max_offset_ms() || prev >= limit)
		return Step{Step::Kind::exhausted, state, 0, 0};

	const std::int64_t from_clock = now_offset << layout.seq_bits;
	const std::int64_t next = std::max(from_clock, prev + 1);

	// How far the state may run ahead of the clock: max_drift_ms, or the
	// lead ceiling while the state is already beyond it.
	const std::int64_t drift = std::max<std::int64_t>(max_drift_ms, 0);
	const std::int64_t prev_lead = (prev >> layout.seq_bits) - now_offset;
	if (prev_lead > drift)
		*lead_ceiling_ms = std::max(*lead_ceiling_ms, prev_lead);
	else
		*lead_ceiling_ms = 0;
	const std::int64_t allowed = std::max(drift, *lead_ceiling_ms);

	// The highest state allowed at this clock reading: the last counter
	// value of the millisecond `allowed` ahead.
	const std::int64_t allowed_offset = std::min(now_offset + allowed, layout.max_offset_ms());
	const std::int64_t allowed_limit = (allowed_offset << layout.seq_bits) | layout.max_seq();
	if (next > allowed_limit) {
		const std::int64_t ahead_ms = (next >> layout.seq_bits) - now_offset - allowed;
		return Step{Step::Kind::wait, state, 0, std::max<std::int64_t>(ahead_ms, 1)};
	}

	return Step{Step::Kind::issue, next, state_to_id(layout, next, shard), 0};
}

bool
decode_state(const Layout &layout, std::int64_t state, std::int64_t *unix_ms,
			 std::int64_t *counter) noexcept
{
	if (state < 0 || state > max_state(layout))
		return false;
	*unix_ms = layout.epoch_ms + (state >> layout.seq_bits);
	*counter = state & layout.max_seq();
	return true;
}

std::int64_t
failover_state(const Layout &layout, std::int64_t state, std::int64_t now_unix_ms,
			   std::int64_t max_drift_ms, std::int64_t max_clock_skew_ms) noexcept
{
	const std::int64_t limit = max_state(layout);
	const std::int64_t max_offset = layout.max_offset_ms();
	const std::int64_t drift = std::clamp<std::int64_t>(max_drift_ms, 0, max_offset);
	const std::int64_t skew = std::clamp<std::int64_t>(max_clock_skew_ms, 0, max_offset);
	const std::int64_t now_offset =
		std::clamp<std::int64_t>(now_unix_ms - layout.epoch_ms, 0, max_offset);
	const std::int64_t prev = std::clamp<std::int64_t>(state, 0, limit);

	// Offsets saturate one past the layout's last millisecond: such a state
	// is capped at max_state, where the next step reports exhaustion.
	const std::int64_t clock_offset = std::min(now_offset + skew + drift + 1, max_offset + 1);
	const std::int64_t from_clock =
		clock_offset > max_offset ? limit : clock_offset << layout.seq_bits;
	const std::int64_t from_state =
		state_ahead(layout, prev, std::min(skew + drift + 1, max_offset));
	return std::max(from_clock, from_state);
}

std::int64_t
state_ahead(const Layout &layout, std::int64_t state, std::int64_t ahead_ms) noexcept
{
	const std::int64_t limit = max_state(layout);
	const std::int64_t room = limit - state;
	const std::int64_t step = ahead_ms << layout.seq_bits;
	return room <= step ? limit : state + step;
}

}  // namespace shardid
