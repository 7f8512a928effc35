// layout.cpp — validation, composition and decoding of IDs for one layout.
#include "layout.hpp"

namespace shardid {

Status
make_layout(std::int64_t epoch_ms, int shard_bits, int seq_bits, Layout *out) noexcept
{
	if (shard_bits < 0 || shard_bits > kMaxFieldBits)
		return Status::bad_shard_bits;
	if (seq_bits < 0 || seq_bits > kMaxFieldBits)
		return Status::bad_seq_bits;
	if (63 - shard_bits - seq_bits < kMinTimeBits)
		return Status::bad_time_bits;
	if (epoch_ms < kMinEpochMs || epoch_ms > kMaxEpochMs)
		return Status::bad_epoch;
	Layout candidate{epoch_ms, shard_bits, seq_bits};
	if (candidate.max_offset_ms() > kMaxUnixMs - epoch_ms)
		return Status::time_too_wide;
	*out = candidate;
	return Status::ok;
}

// Range check of a Unix millisecond against the layout's time window.
static Status
check_time(const Layout &layout, std::int64_t unix_ms) noexcept
{
	if (unix_ms < layout.epoch_ms)
		return Status::time_before_epoch;
	if (unix_ms - layout.epoch_ms > layout.max_offset_ms())
		return Status::time_past_end;
	return Status::ok;
}

Status
compose(const Layout &layout, std::int64_t unix_ms, std::int64_t shard, std::int64_t seq,
		std::int64_t *id) noexcept
{
	if (shard < 0 || shard > layout.max_shard())
		return Status::shard_out_of_range;
	if (seq < 0 || seq > layout.max_seq())
		return Status::seq_out_of_range;
	Status st = check_time(layout, unix_ms);
	if (st != Status::ok)
		return st;
	*id = ((unix_ms - layout.epoch_ms) << layout.time_shift()) | (shard << layout.seq_bits) | seq;
	return Status::ok;
}

Status
decode(const Layout &layout, std::int64_t id, Parts *out) noexcept
{
	if (id < 0)
		return Status::negative_id;
	out->unix_ms = layout.epoch_ms + (id >> layout.time_shift());
	out->shard = static_cast<std::int32_t>((id >> layout.seq_bits) & layout.max_shard());
	out->seq = static_cast<std::int32_t>(id & layout.max_seq());
	return Status::ok;
}

Status
time_to_id(const Layout &layout, std::int64_t unix_ms, std::int64_t *id) noexcept
{
	return compose(layout, unix_ms, 0, 0, id);
}

}  // namespace shardid
