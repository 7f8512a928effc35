// generator_test.cpp — unit tests of the generator step next_step with a
// fake clock: bursts, a clock stepping back, the drift cap, the layout's
// edges, and state_ahead.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "generator.hpp"
#include "layout.hpp"

namespace {

using shardid::Layout;
using shardid::Parts;
using shardid::Status;
using shardid::Step;

constexpr std::int64_t kEpoch = 1314220021721;
constexpr std::int64_t kLast = 2413731649496;
constexpr std::int64_t kNow = 1700000000000;	// 2023-11-14 22:13:20 UTC
constexpr std::int64_t kDrift = 2000;
constexpr std::int64_t kHour = 3600 * 1000;
const Layout &kLayout = shardid::kDefaultLayout;

// A generator driven by a fake clock, checking every issued ID.
struct FakeGenerator {
	Layout layout = shardid::kDefaultLayout;
	std::int64_t state = 0;
	std::int64_t now = kNow;
	std::int64_t shard = 5;
	std::int64_t drift = kDrift;
	std::int64_t last_id = -1;

	Step step()
	{
		const std::int64_t before = state;
		Step s = shardid::next_step(layout, state, now, shard, drift);
		if (s.kind == Step::Kind::issue) {
			EXPECT_GT(s.state, before);
			EXPECT_GT(s.id, last_id);
			EXPECT_EQ(s.id, shardid::state_to_id(layout, s.state, shard));
			Parts p{};
			EXPECT_EQ(shardid::decode(layout, s.id, &p), Status::ok);
			EXPECT_EQ(p.unix_ms, layout.epoch_ms + (s.state >> layout.seq_bits));
			EXPECT_EQ(p.shard, shard);
			EXPECT_EQ(p.seq, s.state & layout.max_seq());
			state = s.state;
			last_id = s.id;
		} else {
			EXPECT_EQ(s.state, before);
		}
		return s;
	}
};

std::int64_t
state_at(std::int64_t unix_ms, std::int64_t counter)
{
	return ((unix_ms - kEpoch) << 10) | counter;
}

TEST(NextStep, FirstCallTakesTheClock)
{
	Step s = shardid::next_step(kLayout, 0, kNow, 5, kDrift);
	ASSERT_EQ(s.kind, Step::Kind::issue);
	EXPECT_EQ(s.state, state_at(kNow, 0));
	std::int64_t expected = 0;
	ASSERT_EQ(shardid::compose(kLayout, kNow, 5, 0, &expected), Status::ok);
	EXPECT_EQ(s.id, expected);
	EXPECT_EQ(s.wait_ms, 0);
}

TEST(NextStep, NegativeStateCountsAsZero)
{
	Step s = shardid::next_step(kLayout, -12345, kNow, 0, kDrift);
	ASSERT_EQ(s.kind, Step::Kind::issue);
	EXPECT_EQ(s.state, state_at(kNow, 0));
}

TEST(NextStep, SameMillisecondCounts)
{
	FakeGenerator g;
	for (int i = 0; i < 10; i++) {
		Step s = g.step();
		ASSERT_EQ(s.kind, Step::Kind::issue);
		EXPECT_EQ(s.state, state_at(kNow, i));
	}
}

TEST(NextStep, LaterMillisecondRestartsCounter)
{
	FakeGenerator g;
	g.state = state_at(kNow, 700);
	g.now = kNow + 1;
	Step s = g.step();
	ASSERT_EQ(s.kind, Step::Kind::issue);
	EXPECT_EQ(s.state, state_at(kNow + 1, 0));
	g.now = kNow + 50;
	s = g.step();
	ASSERT_EQ(s.kind, Step::Kind::issue);
	EXPECT_EQ(s.state, state_at(kNow + 50, 0));
}

// More than 1024 IDs in one millisecond borrow the next ones.
TEST(NextStep, BurstBorrowsNextMilliseconds)
{
	FakeGenerator g;
	for (int i = 0; i < 5000; i++) {
		Step s = g.step();
		ASSERT_EQ(s.kind, Step::Kind::issue) << i;
		EXPECT_EQ(s.state, state_at(kNow, 0) + i);
		Parts p{};
		ASSERT_EQ(shardid::decode(kLayout, s.id, &p), Status::ok);
		EXPECT_EQ(p.unix_ms, kNow + i / 1024);
		EXPECT_EQ(p.seq, i % 1024);
	}
	// the clock catching up to the borrowed millisecond changes nothing
	g.now = kNow + 4;
	Step s = g.step();
	ASSERT_EQ(s.kind, Step::Kind::issue);
	EXPECT_EQ(s.state, state_at(kNow, 0) + 5000);
	// the clock passing it takes over again
	g.now = kNow + 5;
	s = g.step();
	ASSERT_EQ(s.kind, Step::Kind::issue);
	EXPECT_EQ(s.state, state_at(kNow + 5, 0));
}

// A clock stepped back an hour keeps counting from the last state, without waiting.
TEST(NextStep, ClockBackOneHourKeepsCounting)
{
	FakeGenerator g;
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(g.step().kind, Step::Kind::issue);
	const std::int64_t before = g.state;
	g.now = kNow - kHour;
	for (int i = 1; i <= 3000; i++) {
		Step s = g.step();
		ASSERT_EQ(s.kind, Step::Kind::issue) << i;
		EXPECT_EQ(s.state, before + i);
	}
	// the clock advancing (still behind) does not lower anything
	g.now = kNow - kHour + 1000;
	Step s = g.step();
	ASSERT_EQ(s.kind, Step::Kind::issue);
	EXPECT_EQ(s.state, before + 3001);
	// when the clock passes the state again, the state follows it
	g.now = kNow + 10;
	s = g.step();
	ASSERT_EQ(s.kind, Step::Kind::issue);
	EXPECT_EQ(s.state, state_at(kNow + 10, 0));
}

// The cap: a state may reach the last counter of now + max_drift, not beyond.
TEST(NextStep, DriftCapWaitsExactlyWhenCrossing)
{
	const std::int64_t cap = state_at(kNow + kDrift, 1023);
	Step s = shardid::next_step(kLayout, cap - 1, kNow, 5, kDrift);
	ASSERT_EQ(s.kind, Step::Kind::issue);
	EXPECT_EQ(s.state, cap);

	s = shardid::next_step(kLayout, cap, kNow, 5, kDrift);
	ASSERT_EQ(s.kind, Step::Kind::wait);
	EXPECT_EQ(s.state, cap);
	EXPECT_EQ(s.id, 0);
	EXPECT_EQ(s.wait_ms, 1);

	// one millisecond later the step goes through
	s = shardid::next_step(kLayout, cap, kNow + 1, 5, kDrift);
	ASSERT_EQ(s.kind, Step::Kind::issue);
	EXPECT_EQ(s.state, cap + 1);
}

// A burst on a stopped clock issues exactly (max_drift + 1) * 1024 IDs.
TEST(NextStep, BurstStopsAtTheCap)
{
	for (std::int64_t drift : {std::int64_t{0}, std::int64_t{1}, std::int64_t{3}, std::int64_t{50}}) {
		FakeGenerator g;
		g.drift = drift;
		std::int64_t issued = 0;
		Step s{};
		while ((s = g.step()).kind == Step::Kind::issue)
			issued++;
		EXPECT_EQ(s.kind, Step::Kind::wait);
		EXPECT_EQ(issued, (drift + 1) * 1024) << drift;
		EXPECT_EQ(g.state, state_at(kNow + drift, 1023));
		EXPECT_GE(s.wait_ms, 1);
		// each millisecond of clock then frees 1024 more
		g.now += 1;
		for (int i = 0; i < 1024; i++)
			ASSERT_EQ(g.step().kind, Step::Kind::issue) << drift << " " << i;
		EXPECT_EQ(g.step().kind, Step::Kind::wait);
	}
}

// A state already past the cap (clock stepped back, or the cap lowered) keeps counting.
TEST(NextStep, StateBeyondCapKeepsCounting)
{
	const std::int64_t far = state_at(kNow + 10 * kDrift, 17);
	Step s = shardid::next_step(kLayout, far, kNow, 5, kDrift);
	ASSERT_EQ(s.kind, Step::Kind::issue);
	EXPECT_EQ(s.state, far + 1);
	s = shardid::next_step(kLayout, far, kNow, 5, 0);
	ASSERT_EQ(s.kind, Step::Kind::issue);
	EXPECT_EQ(s.state, far + 1);
}

TEST(NextStep, NegativeDriftActsAsZero)
{
	Step s = shardid::next_step(kLayout, state_at(kNow, 1022), kNow, 5, -100);
	ASSERT_EQ(s.kind, Step::Kind::issue);
	EXPECT_EQ(s.state, state_at(kNow, 1023));
	s = shardid::next_step(kLayout, state_at(kNow, 1023), kNow, 5, -100);
	EXPECT_EQ(s.kind, Step::Kind::wait);
	EXPECT_GE(s.wait_ms, 1);
}

TEST(NextStep, BeforeEpoch)
{
	const std::int64_t st = state_at(kNow, 3);
	Step s = shardid::next_step(kLayout, st, kEpoch - 1, 5, kDrift);
	EXPECT_EQ(s.kind, Step::Kind::before_epoch);
	EXPECT_EQ(s.state, st);
	EXPECT_EQ(s.id, 0);
	s = shardid::next_step(kLayout, 0, 0, 5, kDrift);
	EXPECT_EQ(s.kind, Step::Kind::before_epoch);
	s = shardid::next_step(kLayout, 0, std::numeric_limits<std::int64_t>::min(), 5, kDrift);
	EXPECT_EQ(s.kind, Step::Kind::before_epoch);
	// the epoch itself is fine (a state of 0 or less counts as issued)
	s = shardid::next_step(kLayout, -1, kEpoch, 0, kDrift);
	ASSERT_EQ(s.kind, Step::Kind::issue);
	EXPECT_EQ(s.state, 1);
	EXPECT_EQ(s.id, 1);
	s = shardid::next_step(kLayout, 0, kEpoch + 1, 0, kDrift);
	ASSERT_EQ(s.kind, Step::Kind::issue);
	EXPECT_EQ(s.state, 1 << 10);
	EXPECT_EQ(s.id, 1 << 23);
}

TEST(NextStep, ClockPastLayoutEndIsExhausted)
{
	Step s = shardid::next_step(kLayout, state_at(kNow, 0), kLast + 1, 5, kDrift);
	EXPECT_EQ(s.kind, Step::Kind::exhausted);
	EXPECT_EQ(s.state, state_at(kNow, 0));
	s = shardid::next_step(kLayout, 0, std::numeric_limits<std::int64_t>::max(), 5, kDrift);
	EXPECT_EQ(s.kind, Step::Kind::exhausted);
}

// The last millisecond of the layout issues its 1024 IDs, then nothing more.
TEST(NextStep, ExhaustionAtLayoutEnd)
{
	FakeGenerator g;
	g.shard = 8191;
	g.now = kLast;
	g.state = state_at(kLast, 0) - 1;
	for (int i = 0; i < 1024; i++) {
		Step s = g.step();
		ASSERT_EQ(s.kind, Step::Kind::issue) << i;
		EXPECT_EQ(s.state, state_at(kLast, i));
	}
	EXPECT_EQ(g.state, shardid::max_state(kLayout));
	EXPECT_EQ(g.last_id, std::numeric_limits<std::int64_t>::max());
	for (std::int64_t now : {kLast - kHour, kLast, kLast + 1}) {
		g.now = now;
		EXPECT_EQ(g.step().kind, Step::Kind::exhausted) << now;
	}
}

// Borrowing runs into the end too: never a wrapped or negative ID.
TEST(NextStep, BurstNearEndIsExhaustedNotWrapped)
{
	FakeGenerator g;
	g.now = kLast - 1;
	g.state = state_at(kLast - 1, 0);
	std::int64_t issued = 0;
	Step s{};
	while ((s = g.step()).kind == Step::Kind::issue) {
		ASSERT_GT(s.id, 0);
		issued++;
	}
	EXPECT_EQ(s.kind, Step::Kind::exhausted);
	EXPECT_EQ(issued, 1023 + 1024);
	EXPECT_EQ(g.state, shardid::max_state(kLayout));
}

TEST(NextStep, StatePastMaxIsExhausted)
{
	Step s = shardid::next_step(kLayout, std::numeric_limits<std::int64_t>::max(), kNow, 5, kDrift);
	EXPECT_EQ(s.kind, Step::Kind::exhausted);
}

// A layout with no seq bits: one ID per millisecond, bursts borrow a millisecond each.
TEST(NextStep, NoSeqBits)
{
	Layout l{};
	ASSERT_EQ(shardid::make_layout(kEpoch, 13, 0, &l), Status::ok);
	FakeGenerator g;
	g.layout = l;
	g.drift = 3;
	for (int i = 0; i < 4; i++) {
		Step s = g.step();
		ASSERT_EQ(s.kind, Step::Kind::issue);
		EXPECT_EQ(s.state, kNow - kEpoch + i);
		EXPECT_EQ(s.id, ((kNow - kEpoch + i) << 13) | 5);
	}
	EXPECT_EQ(g.step().kind, Step::Kind::wait);
}

TEST(StateAhead, AddsMillisecondsAndSaturates)
{
	const std::int64_t max = shardid::max_state(kLayout);
	EXPECT_EQ(max, std::numeric_limits<std::int64_t>::max() >> 13);
	EXPECT_EQ(shardid::state_ahead(kLayout, 0, 32), 32 << 10);
	EXPECT_EQ(shardid::state_ahead(kLayout, state_at(kNow, 5), 32), state_at(kNow + 32, 5));
	EXPECT_EQ(shardid::state_ahead(kLayout, state_at(kNow, 5), 0), state_at(kNow, 5));
	EXPECT_EQ(shardid::state_ahead(kLayout, max - (32 << 10) - 1, 32), max - 1);
	EXPECT_EQ(shardid::state_ahead(kLayout, max - (32 << 10), 32), max);
	EXPECT_EQ(shardid::state_ahead(kLayout, max - 100, 32), max);
	EXPECT_EQ(shardid::state_ahead(kLayout, max - 1, 32), max);
	EXPECT_EQ(shardid::state_ahead(kLayout, max, 32), max);
	// a huge step cannot overflow
	EXPECT_EQ(shardid::state_ahead(kLayout, state_at(kNow, 0), std::int64_t{1} << 40), max);
}

TEST(StateToId, MatchesCompose)
{
	std::int64_t id = 0;
	ASSERT_EQ(shardid::compose(kLayout, kNow + 7, 1341, 905, &id), Status::ok);
	EXPECT_EQ(shardid::state_to_id(kLayout, state_at(kNow + 7, 905), 1341), id);
	EXPECT_EQ(shardid::state_to_id(kLayout, shardid::max_state(kLayout), 8191),
			  std::numeric_limits<std::int64_t>::max());
	EXPECT_EQ(shardid::state_to_id(kLayout, 0, 0), 0);
}

}  // namespace
