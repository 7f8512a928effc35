// layout_test.cpp — unit tests of src/core/layout: validation of layouts,
// composition and decoding at the edges of a layout, time_to_id.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>

#include "layout.hpp"

namespace {

using shardid::Layout;
using shardid::Parts;
using shardid::Status;

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kDefaultEpoch = 1314220021721;  // 2011-08-24 21:07:01.721 UTC
constexpr std::int64_t kDefaultLast = 2413731649496;   // 2046-06-27 17:00:49.496 UTC
constexpr std::int64_t kChinaEpoch = 1325376000000;    // 2012-01-01 00:00:00 UTC

// make_layout on a fresh sentinel, checking that a refusal leaves it alone.
Status
try_layout(std::int64_t epoch_ms, int shard_bits, int seq_bits, Layout *out)
{
	*out = Layout{-7, -7, -7};
	Status st = shardid::make_layout(epoch_ms, shard_bits, seq_bits, out);
	if (st != Status::ok) {
		EXPECT_EQ(out->epoch_ms, -7);
		EXPECT_EQ(out->shard_bits, -7);
		EXPECT_EQ(out->seq_bits, -7);
	}
	return st;
}

Layout
layout_of(std::int64_t epoch_ms, int shard_bits, int seq_bits)
{
	Layout l{};
	EXPECT_EQ(shardid::make_layout(epoch_ms, shard_bits, seq_bits, &l), Status::ok);
	return l;
}

TEST(Layout, DefaultIsInstagrams)
{
	const Layout &l = shardid::kDefaultLayout;
	EXPECT_EQ(l.epoch_ms, kDefaultEpoch);
	EXPECT_EQ(l.shard_bits, 13);
	EXPECT_EQ(l.seq_bits, 10);
	EXPECT_EQ(l.time_bits(), 40);
	EXPECT_EQ(l.time_shift(), 23);
	EXPECT_EQ(l.max_shard(), 8191);
	EXPECT_EQ(l.max_seq(), 1023);
	EXPECT_EQ(l.max_offset_ms(), 1099511627775);
	EXPECT_EQ(l.last_ms(), kDefaultLast);

	Layout made{};
	ASSERT_EQ(shardid::make_layout(kDefaultEpoch, 13, 10, &made), Status::ok);
	EXPECT_EQ(made.epoch_ms, l.epoch_ms);
	EXPECT_EQ(made.shard_bits, l.shard_bits);
	EXPECT_EQ(made.seq_bits, l.seq_bits);
}

TEST(MakeLayout, ShardBitsRange)
{
	Layout l{};
	EXPECT_EQ(try_layout(kDefaultEpoch, -1, 10, &l), Status::bad_shard_bits);
	EXPECT_EQ(try_layout(kDefaultEpoch, 32, 0, &l), Status::bad_shard_bits);
	EXPECT_EQ(try_layout(kDefaultEpoch, std::numeric_limits<int>::min(), 10, &l),
			  Status::bad_shard_bits);
	EXPECT_EQ(try_layout(kDefaultEpoch, std::numeric_limits<int>::max(), 10, &l),
			  Status::bad_shard_bits);
	// shard bits are checked before seq bits
	EXPECT_EQ(try_layout(kDefaultEpoch, -1, -1, &l), Status::bad_shard_bits);
	ASSERT_EQ(try_layout(kDefaultEpoch, 0, 10, &l), Status::ok);
	EXPECT_EQ(l.max_shard(), 0);
	EXPECT_EQ(l.time_bits(), 53);
}

TEST(MakeLayout, SeqBitsRange)
{
	Layout l{};
	EXPECT_EQ(try_layout(kDefaultEpoch, 13, -1, &l), Status::bad_seq_bits);
	EXPECT_EQ(try_layout(kDefaultEpoch, 0, 32, &l), Status::bad_seq_bits);
	EXPECT_EQ(try_layout(kDefaultEpoch, 13, std::numeric_limits<int>::min(), &l),
			  Status::bad_seq_bits);
	ASSERT_EQ(try_layout(kDefaultEpoch, 13, 0, &l), Status::ok);
	EXPECT_EQ(l.max_seq(), 0);
	EXPECT_EQ(l.time_bits(), 50);
}

TEST(MakeLayout, TimeNeedsAtLeast35Bits)
{
	Layout l{};
	ASSERT_EQ(try_layout(kDefaultEpoch, 14, 14, &l), Status::ok);
	EXPECT_EQ(l.time_bits(), 35);
	EXPECT_EQ(try_layout(kDefaultEpoch, 15, 14, &l), Status::bad_time_bits);
	EXPECT_EQ(try_layout(kDefaultEpoch, 14, 15, &l), Status::bad_time_bits);
	EXPECT_EQ(try_layout(kDefaultEpoch, 31, 0, &l), Status::bad_time_bits);
	EXPECT_EQ(try_layout(kDefaultEpoch, 0, 31, &l), Status::bad_time_bits);
	EXPECT_EQ(try_layout(kDefaultEpoch, 31, 31, &l), Status::bad_time_bits);
	ASSERT_EQ(try_layout(kDefaultEpoch, 28, 0, &l), Status::ok);
	EXPECT_EQ(l.max_shard(), (std::int64_t{1} << 28) - 1);
	ASSERT_EQ(try_layout(kDefaultEpoch, 0, 28, &l), Status::ok);
	EXPECT_EQ(l.max_seq(), (std::int64_t{1} << 28) - 1);
	// the time check comes before the epoch check
	EXPECT_EQ(try_layout(-1, 20, 20, &l), Status::bad_time_bits);
}

TEST(MakeLayout, EpochRange)
{
	Layout l{};
	EXPECT_EQ(try_layout(-1, 13, 10, &l), Status::bad_epoch);
	EXPECT_EQ(try_layout(std::numeric_limits<std::int64_t>::min(), 13, 10, &l), Status::bad_epoch);
	EXPECT_EQ(try_layout(shardid::kMaxEpochMs + 1, 13, 10, &l), Status::bad_epoch);
	EXPECT_EQ(try_layout(kInt64Max, 13, 10, &l), Status::bad_epoch);
	ASSERT_EQ(try_layout(0, 13, 10, &l), Status::ok);
	EXPECT_EQ(l.epoch_ms, 0);
	ASSERT_EQ(try_layout(shardid::kMaxEpochMs, 13, 10, &l), Status::ok);
	EXPECT_EQ(l.epoch_ms, 253402300799999);
}

TEST(MakeLayout, TimeMustFitTimestamptz)
{
	Layout l{};
	// 63 time bits reach far past year 294276
	EXPECT_EQ(try_layout(kDefaultEpoch, 0, 0, &l), Status::time_too_wide);
	// 54 bits: 2^54 ms is past the end of timestamptz from any epoch
	EXPECT_EQ(try_layout(0, 9, 0, &l), Status::time_too_wide);
	EXPECT_EQ(try_layout(0, 0, 9, &l), Status::time_too_wide);
	// 53 bits fit from 1970 (2^53 ms < 9224318015999999) ...
	ASSERT_EQ(try_layout(0, 10, 0, &l), Status::ok);
	EXPECT_EQ(l.last_ms(), (std::int64_t{1} << 53) - 1);
	EXPECT_LE(l.last_ms(), shardid::kMaxUnixMs);
	// ... but not from year 9999
	EXPECT_EQ(try_layout(shardid::kMaxEpochMs, 10, 0, &l), Status::time_too_wide);
	ASSERT_EQ(try_layout(shardid::kMaxEpochMs, 11, 0, &l), Status::ok);
	EXPECT_LE(l.last_ms(), shardid::kMaxUnixMs);
	// the largest epoch that still fits 53 bits
	const std::int64_t edge = shardid::kMaxUnixMs - ((std::int64_t{1} << 53) - 1);
	ASSERT_EQ(try_layout(edge, 0, 10, &l), Status::ok);
	EXPECT_EQ(l.last_ms(), shardid::kMaxUnixMs);
	EXPECT_EQ(try_layout(edge + 1, 0, 10, &l), Status::time_too_wide);
}

TEST(Compose, InstagramBlogExample)
{
	// 1387263000 ms after the epoch, user 31341 on 2000 shards, 5001st row
	std::int64_t id = 0;
	ASSERT_EQ(shardid::compose(shardid::kDefaultLayout, kDefaultEpoch + 1387263000, 31341 % 2000,
							   5001 % 1024, &id),
			  Status::ok);
	EXPECT_EQ(id, (std::int64_t{1387263000} << 23) | (1341 << 10) | 905);
	EXPECT_EQ(id, 11637205501278089);
	Parts p{};
	ASSERT_EQ(shardid::decode(shardid::kDefaultLayout, id, &p), Status::ok);
	EXPECT_EQ(p.unix_ms, kDefaultEpoch + 1387263000);
	EXPECT_EQ(p.shard, 1341);
	EXPECT_EQ(p.seq, 905);
}

TEST(Compose, VietnameseExampleIsOffByOne)
{
	std::int64_t id = 0;
	ASSERT_EQ(
		shardid::compose(shardid::kDefaultLayout, kDefaultEpoch + 264384000000, 1001, 809, &id),
		Status::ok);
	EXPECT_EQ(id, 2217813737473025833);
	// the write-up printed ...832, which is sequence 808
	Parts p{};
	ASSERT_EQ(shardid::decode(shardid::kDefaultLayout, 2217813737473025832, &p), Status::ok);
	EXPECT_EQ(p.unix_ms - kDefaultEpoch, 264384000000);
	EXPECT_EQ(p.shard, 1001);
	EXPECT_EQ(p.seq, 808);
}

TEST(Compose, Chinese2046Examples)
{
	const Layout l = layout_of(kChinaEpoch, 13, 10);
	const std::int64_t nov_2046 = 2424643200000;  // 2046-11-01 00:00:00 UTC
	const std::int64_t dec_2046 = 2427235200000;  // 2046-12-01 00:00:00 UTC
	std::int64_t id = 0;
	ASSERT_EQ(shardid::compose(l, nov_2046, 5, 112345 % 1024, &id), Status::ok);
	EXPECT_EQ(id, 9221321628057605849);
	id = 42;
	EXPECT_EQ(shardid::compose(l, dec_2046, 5, 112345 % 1024, &id), Status::time_past_end);
	EXPECT_EQ(id, 42);
	EXPECT_EQ(shardid::time_to_id(l, dec_2046, &id), Status::time_past_end);
	EXPECT_EQ(id, 42);
	EXPECT_EQ(l.last_ms(), 2424887627775);  // 2046-11-03 19:53:47.775 UTC
}

TEST(Compose, LayoutEdges)
{
	const Layout &l = shardid::kDefaultLayout;
	std::int64_t id = -1;
	ASSERT_EQ(shardid::compose(l, kDefaultEpoch, 0, 0, &id), Status::ok);
	EXPECT_EQ(id, 0);
	ASSERT_EQ(shardid::compose(l, kDefaultLast, 8191, 1023, &id), Status::ok);
	EXPECT_EQ(id, kInt64Max);
	ASSERT_EQ(shardid::compose(l, kDefaultEpoch, 8191, 0, &id), Status::ok);
	EXPECT_EQ(id, 8191 << 10);
	ASSERT_EQ(shardid::compose(l, kDefaultEpoch, 0, 1023, &id), Status::ok);
	EXPECT_EQ(id, 1023);
	ASSERT_EQ(shardid::compose(l, kDefaultEpoch + 1, 0, 0, &id), Status::ok);
	EXPECT_EQ(id, std::int64_t{1} << 23);
	ASSERT_EQ(shardid::compose(l, kDefaultLast, 0, 0, &id), Status::ok);
	EXPECT_EQ(id, std::int64_t{1099511627775} << 23);
}

TEST(Compose, RefusesOutOfRange)
{
	const Layout &l = shardid::kDefaultLayout;
	std::int64_t id = 42;
	EXPECT_EQ(shardid::compose(l, kDefaultEpoch, -1, 0, &id), Status::shard_out_of_range);
	EXPECT_EQ(shardid::compose(l, kDefaultEpoch, 8192, 0, &id), Status::shard_out_of_range);
	EXPECT_EQ(shardid::compose(l, kDefaultEpoch, 0, -1, &id), Status::seq_out_of_range);
	EXPECT_EQ(shardid::compose(l, kDefaultEpoch, 0, 1024, &id), Status::seq_out_of_range);
	EXPECT_EQ(shardid::compose(l, kDefaultEpoch - 1, 0, 0, &id), Status::time_before_epoch);
	EXPECT_EQ(shardid::compose(l, kDefaultLast + 1, 0, 0, &id), Status::time_past_end);
	EXPECT_EQ(shardid::compose(l, std::numeric_limits<std::int64_t>::min(), 0, 0, &id),
			  Status::time_before_epoch);
	EXPECT_EQ(shardid::compose(l, shardid::kMaxUnixMs, 0, 0, &id), Status::time_past_end);
	// shard first, then seq, then time
	EXPECT_EQ(shardid::compose(l, kDefaultEpoch - 1, 8192, 1024, &id), Status::shard_out_of_range);
	EXPECT_EQ(shardid::compose(l, kDefaultEpoch - 1, 0, 1024, &id), Status::seq_out_of_range);
	EXPECT_EQ(id, 42);

	const Layout no_shard = layout_of(kDefaultEpoch, 0, 10);
	EXPECT_EQ(shardid::compose(no_shard, kDefaultEpoch, 1, 0, &id), Status::shard_out_of_range);
	ASSERT_EQ(shardid::compose(no_shard, kDefaultEpoch + 1, 0, 7, &id), Status::ok);
	EXPECT_EQ(id, (std::int64_t{1} << 10) | 7);
	const Layout no_seq = layout_of(kDefaultEpoch, 13, 0);
	EXPECT_EQ(shardid::compose(no_seq, kDefaultEpoch, 0, 1, &id), Status::seq_out_of_range);
}

TEST(Decode, Edges)
{
	const Layout &l = shardid::kDefaultLayout;
	Parts p{7, 7, 7};
	ASSERT_EQ(shardid::decode(l, 0, &p), Status::ok);
	EXPECT_EQ(p.unix_ms, kDefaultEpoch);
	EXPECT_EQ(p.shard, 0);
	EXPECT_EQ(p.seq, 0);
	ASSERT_EQ(shardid::decode(l, kInt64Max, &p), Status::ok);
	EXPECT_EQ(p.unix_ms, kDefaultLast);
	EXPECT_EQ(p.shard, 8191);
	EXPECT_EQ(p.seq, 1023);
	ASSERT_EQ(shardid::decode(l, 1024, &p), Status::ok);
	EXPECT_EQ(p.unix_ms, kDefaultEpoch);
	EXPECT_EQ(p.shard, 1);
	EXPECT_EQ(p.seq, 0);

	p = Parts{7, 7, 7};
	EXPECT_EQ(shardid::decode(l, -1, &p), Status::negative_id);
	EXPECT_EQ(shardid::decode(l, std::numeric_limits<std::int64_t>::min(), &p),
			  Status::negative_id);
	EXPECT_EQ(p.unix_ms, 7);
	EXPECT_EQ(p.shard, 7);
	EXPECT_EQ(p.seq, 7);
}

TEST(Decode, RealInstagramMediaId)
{
	// media 908540701891980503 was posted 2015-01-29 10:15:13.321 UTC
	Parts p{};
	ASSERT_EQ(shardid::decode(shardid::kDefaultLayout, 908540701891980503, &p), Status::ok);
	EXPECT_EQ(p.unix_ms, 1422526513321);
}

// Every combination of edge values round-trips, for several layouts.
TEST(RoundTrip, EdgesOfSeveralLayouts)
{
	const Layout layouts[] = {
		shardid::kDefaultLayout,
		layout_of(kChinaEpoch, 13, 10),
		layout_of(0, 0, 10),
		layout_of(0, 10, 0),
		layout_of(kDefaultEpoch, 14, 14),
		layout_of(kDefaultEpoch, 28, 0),
		layout_of(kDefaultEpoch, 0, 28),
		layout_of(shardid::kMaxEpochMs, 12, 12),
	};
	for (const Layout &l : layouts) {
		const std::int64_t times[] = {l.epoch_ms, l.epoch_ms + 1, l.last_ms() - 1, l.last_ms()};
		const std::int64_t shards[] = {0, l.max_shard() / 2, l.max_shard()};
		const std::int64_t seqs[] = {0, l.max_seq() / 2, l.max_seq()};
		for (std::int64_t t : times)
			for (std::int64_t sh : shards)
				for (std::int64_t sq : seqs) {
					std::int64_t id = -1;
					ASSERT_EQ(shardid::compose(l, t, sh, sq, &id), Status::ok);
					EXPECT_GE(id, 0);
					Parts p{};
					ASSERT_EQ(shardid::decode(l, id, &p), Status::ok);
					EXPECT_EQ(p.unix_ms, t);
					EXPECT_EQ(p.shard, sh);
					EXPECT_EQ(p.seq, sq);
				}
		// the largest ID of the layout is all ones
		std::int64_t id = 0;
		ASSERT_EQ(shardid::compose(l, l.last_ms(), l.max_shard(), l.max_seq(), &id), Status::ok);
		EXPECT_EQ(id, kInt64Max);
	}
}

TEST(RoundTrip, RandomIds)
{
	std::mt19937_64 rng(20110824);
	const Layout layouts[] = {shardid::kDefaultLayout, layout_of(kChinaEpoch, 6, 20),
							  layout_of(0, 0, 10)};
	for (const Layout &l : layouts)
		for (int i = 0; i < 20000; i++) {
			const std::int64_t id = static_cast<std::int64_t>(rng() >> 1);
			Parts p{};
			ASSERT_EQ(shardid::decode(l, id, &p), Status::ok);
			std::int64_t again = -1;
			ASSERT_EQ(shardid::compose(l, p.unix_ms, p.shard, p.seq, &again), Status::ok);
			ASSERT_EQ(again, id);
		}
}

TEST(TimeToId, IsComposeWithZeroShardAndSeq)
{
	const Layout &l = shardid::kDefaultLayout;
	std::int64_t id = -1;
	ASSERT_EQ(shardid::time_to_id(l, kDefaultEpoch, &id), Status::ok);
	EXPECT_EQ(id, 0);
	ASSERT_EQ(shardid::time_to_id(l, kDefaultEpoch + 1387263000, &id), Status::ok);
	EXPECT_EQ(id, std::int64_t{1387263000} << 23);
	ASSERT_EQ(shardid::time_to_id(l, kDefaultLast, &id), Status::ok);
	EXPECT_EQ(id, kInt64Max - ((std::int64_t{1} << 23) - 1));
	id = 42;
	EXPECT_EQ(shardid::time_to_id(l, kDefaultEpoch - 1, &id), Status::time_before_epoch);
	EXPECT_EQ(shardid::time_to_id(l, kDefaultLast + 1, &id), Status::time_past_end);
	EXPECT_EQ(id, 42);
}

// time_to_id(t) <= every ID of millisecond t < time_to_id(t + 1).
TEST(TimeToId, TightLowerBound)
{
	std::mt19937_64 rng(1387263000);
	const Layout &l = shardid::kDefaultLayout;
	for (int i = 0; i < 20000; i++) {
		const std::int64_t id = static_cast<std::int64_t>(rng() >> 1);
		Parts p{};
		ASSERT_EQ(shardid::decode(l, id, &p), Status::ok);
		std::int64_t lo = -1;
		ASSERT_EQ(shardid::time_to_id(l, p.unix_ms, &lo), Status::ok);
		EXPECT_LE(lo, id);
		EXPECT_GT(lo, id - (std::int64_t{1} << 23));
		if (p.unix_ms < l.last_ms()) {
			std::int64_t hi = -1;
			ASSERT_EQ(shardid::time_to_id(l, p.unix_ms + 1, &hi), Status::ok);
			EXPECT_LT(id, hi);
			EXPECT_EQ(hi - lo, std::int64_t{1} << 23);
		}
	}
}

}  // namespace
