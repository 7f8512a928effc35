// layout.hpp — the bit layout of a shardid ID and pure composition/decoding.
//
// An ID is [0][time: ms since epoch][shard][seq]. Nothing here knows about
// PostgreSQL; every function is noexcept and reports failure as a Status so
// the glue can raise the matching SQL error without C++ frames in the way.
#pragma once

#include <cstdint>

namespace shardid {

// Why an operation refused its input; the glue maps each to a SQLSTATE.
enum class Status : std::uint8_t {
	ok,
	bad_shard_bits,
	bad_seq_bits,
	bad_time_bits,
	time_too_wide,
	bad_epoch,
	shard_out_of_range,
	seq_out_of_range,
	time_before_epoch,
	time_past_end,
	negative_id,
};

// Limits a layout must respect, shared by validation and error messages.
constexpr int kMaxFieldBits = 31;                      // shard and seq are returned as int4
constexpr int kMinTimeBits = 35;                       // at least ~397 days of IDs
constexpr std::int64_t kMinEpochMs = 0;                // 1970-01-01 UTC
constexpr std::int64_t kMaxEpochMs = 253402300799999;  // 9999-12-31 23:59:59.999 UTC
// Last Unix millisecond PostgreSQL's timestamptz can hold (294276-12-31).
constexpr std::int64_t kMaxUnixMs = 9224318015999999;

// A validated layout: epoch in Unix milliseconds and the widths of the
// shard and sequence fields; time takes the remaining 63 bits.
struct Layout {
	std::int64_t epoch_ms;
	int shard_bits;
	int seq_bits;

	constexpr int time_bits() const { return 63 - shard_bits - seq_bits; }
	constexpr int time_shift() const { return shard_bits + seq_bits; }
	constexpr std::int64_t max_shard() const { return (std::int64_t{1} << shard_bits) - 1; }
	constexpr std::int64_t max_seq() const { return (std::int64_t{1} << seq_bits) - 1; }
	// Largest time offset (ms after the epoch) an ID can hold.
	constexpr std::int64_t max_offset_ms() const { return (std::int64_t{1} << time_bits()) - 1; }
	// Last Unix millisecond an ID can hold.
	constexpr std::int64_t last_ms() const { return epoch_ms + max_offset_ms(); }
};

// Instagram's published layout: 13 shard bits, 10 seq bits, epoch
// 2011-08-24 21:07:01.721 UTC.
constexpr Layout kDefaultLayout{1314220021721, 13, 10};

// Checks a candidate layout; on success *out holds it.
Status make_layout(std::int64_t epoch_ms, int shard_bits, int seq_bits, Layout *out) noexcept;

// The three fields of an ID.
struct Parts {
	std::int64_t unix_ms;
	std::int32_t shard;
	std::int32_t seq;
};

// Builds an ID from a Unix millisecond, a shard and a sequence value.
Status compose(const Layout &layout, std::int64_t unix_ms, std::int64_t shard, std::int64_t seq,
			   std::int64_t *id) noexcept;

// Splits an ID into its fields; negative IDs are refused.
Status decode(const Layout &layout, std::int64_t id, Parts *out) noexcept;

// The smallest ID whose time is unix_ms (shard 0, seq 0).
Status time_to_id(const Layout &layout, std::int64_t unix_ms, std::int64_t *id) noexcept;

}  // namespace shardid
