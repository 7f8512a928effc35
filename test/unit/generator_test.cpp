// generator_test.cpp — unit tests of the generator step next_step with a
// fake clock: bursts, a clock stepping back, the drift cap and the lead
// ceiling beyond it, the layout's edges, state_ahead, and the move of a
// generator on a new timeline (failover_state).
#include <gtest/gtest.h>

#include <algorithm>
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
constexpr std::int64_t kNow = 1700000000000;  // 2023-11-14 22:13:20 UTC
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
	std::int64_t ceiling = 0;  // the caller's lead ceiling for this generator

	// The state's lead over the fake clock, in milliseconds.
	std::int64_t lead() const { return (state >> layout.seq_bits) - (now - layout.epoch_ms); }

	Step step()
	{
		const std::int64_t before = state;
		Step s = shardid::next_step(layout, state, now, shard, drift, &ceiling);
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

// One step by a caller that remembers nothing of the generator.
Step
fresh_step(const Layout &layout, std::int64_t state, std::int64_t now, std::int64_t shard,
		   std::int64_t drift)
{
	std::int64_t ceiling = 0;
	return shardid::next_step(layout, state, now, shard, drift, &ceiling);
}

TEST(NextStep, FirstCallTakesTheClock)
{
	Step s = fresh_step(kLayout, 0, kNow, 5, kDrift);
	ASSERT_EQ(s.kind, Step::Kind::issue);
	EXPECT_EQ(s.state, state_at(kNow, 0));
	std::int64_t expected = 0;
	ASSERT_EQ(shardid::compose(kLayout, kNow, 5, 0, &expected), Status::ok);
	EXPECT_EQ(s.id, expected);
	EXPECT_EQ(s.wait_ms, 0);
}

TEST(NextStep, NegativeStateCountsAsZero)
{
	Step s = fresh_step(kLayout, -12345, kNow, 0, kDrift);
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

// A clock stepped back an hour keeps counting from the last state: no wait
// for the hour, IDs at the clock's pace (1024 per millisecond).
TEST(NextStep, ClockBackOneHourKeepsCounting)
{
	FakeGenerator g;
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(g.step().kind, Step::Kind::issue);
	const std::int64_t before = g.state;
	g.now = kNow - kHour;
	// the millisecond in use is finished without waiting
	for (int i = 1; i <= 1021; i++) {
		Step s = g.step();
		ASSERT_EQ(s.kind, Step::Kind::issue) << i;
		EXPECT_EQ(s.state, before + i);
	}
	EXPECT_EQ(g.ceiling, kHour);
	// the next one waits for the clock's next millisecond, not for the hour
	Step s = g.step();
	ASSERT_EQ(s.kind, Step::Kind::wait);
	EXPECT_EQ(s.wait_ms, 1);
	// with the clock running, 3000 calls at 1000 per ms never wait
	for (int i = 1; i <= 3000; i++) {
		if (i % 1000 == 1)
			g.now += 1;
		s = g.step();
		ASSERT_EQ(s.kind, Step::Kind::issue) << i;
		EXPECT_EQ(s.state, before + 1021 + i);
	}
	// the clock advancing (still behind) does not lower anything
	g.now = kNow - kHour + 1000;
	s = g.step();
	ASSERT_EQ(s.kind, Step::Kind::issue);
	EXPECT_EQ(s.state, before + 4022);
	// when the clock passes the state again, the state follows it
	g.now = kNow + 10;
	s = g.step();
	ASSERT_EQ(s.kind, Step::Kind::issue);
	EXPECT_EQ(s.state, state_at(kNow + 10, 0));
	EXPECT_EQ(g.ceiling, 0);
}

// Issue 10: from a 3 s lead, bursts at twice the generator's capacity no
// longer push the lead further (they reached 7.4 s, then 11 s): callers
// wait, and the lead stays within the lead the generator had.
TEST(NextStep, LeadBeyondCapDoesNotGrow)
{
	FakeGenerator g;
	g.state = state_at(kNow + 3000, 0);
	const std::int64_t start_lead = g.lead();
	ASSERT_EQ(start_lead, 3000);
	for (int burst = 0; burst < 2; burst++) {
		std::int64_t issued = 0, waits = 0, max_lead = 0;
		for (int call = 0; call < 4000000; call++) {
			if (call % 2048 == 0)
				g.now += 1;  // 2048 calls per millisecond of clock
			Step s = g.step();
			if (s.kind == Step::Kind::issue)
				issued++;
			else {
				ASSERT_EQ(s.kind, Step::Kind::wait);
				waits++;
			}
			max_lead = std::max(max_lead, g.lead());
		}
		EXPECT_LE(max_lead, start_lead) << "burst " << burst;
		EXPECT_GT(waits, 0) << "burst " << burst;
		// the generator still issues at its full rate: 1024 per ms of clock
		EXPECT_GE(issued, 4000000 / 2048 * 1024 - 1024) << "burst " << burst;
	}
	// a pause lets the clock catch up: back within the cap, no ceiling
	g.now += 1500;
	EXPECT_EQ(g.step().kind, Step::Kind::issue);
	EXPECT_LE(g.lead(), kDrift);
	EXPECT_EQ(g.ceiling, 0);
}

// Lowering the cap below a generator's lead: the lead does not grow past
// what it was when the cap was lowered.
TEST(NextStep, LoweredCapHoldsTheLead)
{
	FakeGenerator g;
	g.state = state_at(kNow + 1500, 1000);
	g.drift = 0;
	std::int64_t issued = 0;
	Step s{};
	while ((s = g.step()).kind == Step::Kind::issue)
		issued++;
	EXPECT_EQ(s.kind, Step::Kind::wait);
	EXPECT_EQ(issued, 23);  // the rest of the millisecond it was in
	EXPECT_EQ(g.lead(), 1500);
	EXPECT_EQ(s.wait_ms, 1);
}

// A caller that forgets its ceiling (another backend, a new session) starts
// again from the lead it sees, which is never more than the ceiling was.
TEST(NextStep, ForgottenCeilingRestartsFromTheSeenLead)
{
	FakeGenerator a;
	a.state = state_at(kNow + 5000, 1023);
	a.now = kNow + 10;  // the clock moved on: lead 4990, ceiling not yet known
	Step s = a.step();
	EXPECT_EQ(s.kind, Step::Kind::wait);
	EXPECT_EQ(a.ceiling, 4990);
	FakeGenerator b = a;
	b.ceiling = 0;
	EXPECT_EQ(b.step().kind, Step::Kind::wait);
	EXPECT_EQ(b.ceiling, 4990);
	// with an older, larger ceiling a caller may use the lead the clock freed
	a.ceiling = 5000;
	s = a.step();
	ASSERT_EQ(s.kind, Step::Kind::issue);
	EXPECT_EQ(a.lead(), 4991);
}

// A clock step back while beyond the cap raises the ceiling to the new lead.
TEST(NextStep, SecondClockStepRaisesTheCeiling)
{
	FakeGenerator g;
	g.state = state_at(kNow + 3000, 0);
	EXPECT_EQ(g.step().kind, Step::Kind::issue);
	EXPECT_EQ(g.ceiling, 3000);
	g.now -= kHour;
	EXPECT_EQ(g.step().kind, Step::Kind::issue);
	EXPECT_EQ(g.ceiling, kHour + 3000);
}

// The cap: a state may reach the last counter of now + max_drift, not beyond.
TEST(NextStep, DriftCapWaitsExactlyWhenCrossing)
{
	const std::int64_t cap = state_at(kNow + kDrift, 1023);
	Step s = fresh_step(kLayout, cap - 1, kNow, 5, kDrift);
	ASSERT_EQ(s.kind, Step::Kind::issue);
	EXPECT_EQ(s.state, cap);

	s = fresh_step(kLayout, cap, kNow, 5, kDrift);
	ASSERT_EQ(s.kind, Step::Kind::wait);
	EXPECT_EQ(s.state, cap);
	EXPECT_EQ(s.id, 0);
	EXPECT_EQ(s.wait_ms, 1);

	// one millisecond later the step goes through
	s = fresh_step(kLayout, cap, kNow + 1, 5, kDrift);
	ASSERT_EQ(s.kind, Step::Kind::issue);
	EXPECT_EQ(s.state, cap + 1);
}

// A burst on a stopped clock issues exactly (max_drift + 1) * 1024 IDs.
TEST(NextStep, BurstStopsAtTheCap)
{
	for (std::int64_t drift :
		 {std::int64_t{0}, std::int64_t{1}, std::int64_t{3}, std::int64_t{50}}) {
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

// A state already past the cap (clock stepped back, or the cap lowered)
// keeps counting within its millisecond, and at the clock's pace after.
TEST(NextStep, StateBeyondCapKeepsCounting)
{
	const std::int64_t far = state_at(kNow + 10 * kDrift, 17);
	Step s = fresh_step(kLayout, far, kNow, 5, kDrift);
	ASSERT_EQ(s.kind, Step::Kind::issue);
	EXPECT_EQ(s.state, far + 1);
	s = fresh_step(kLayout, far, kNow, 5, 0);
	ASSERT_EQ(s.kind, Step::Kind::issue);
	EXPECT_EQ(s.state, far + 1);
	// the last counter of its millisecond: the next waits for the clock
	const std::int64_t full = state_at(kNow + 10 * kDrift, 1023);
	s = fresh_step(kLayout, full, kNow, 5, kDrift);
	ASSERT_EQ(s.kind, Step::Kind::wait);
	EXPECT_EQ(s.wait_ms, 1);
	std::int64_t ceiling = 10 * kDrift;
	s = shardid::next_step(kLayout, full, kNow + 1, 5, kDrift, &ceiling);
	ASSERT_EQ(s.kind, Step::Kind::issue);
	EXPECT_EQ(s.state, full + 1);
}

TEST(NextStep, NegativeDriftActsAsZero)
{
	Step s = fresh_step(kLayout, state_at(kNow, 1022), kNow, 5, -100);
	ASSERT_EQ(s.kind, Step::Kind::issue);
	EXPECT_EQ(s.state, state_at(kNow, 1023));
	s = fresh_step(kLayout, state_at(kNow, 1023), kNow, 5, -100);
	EXPECT_EQ(s.kind, Step::Kind::wait);
	EXPECT_GE(s.wait_ms, 1);
}

TEST(NextStep, BeforeEpoch)
{
	const std::int64_t st = state_at(kNow, 3);
	Step s = fresh_step(kLayout, st, kEpoch - 1, 5, kDrift);
	EXPECT_EQ(s.kind, Step::Kind::before_epoch);
	EXPECT_EQ(s.state, st);
	EXPECT_EQ(s.id, 0);
	s = fresh_step(kLayout, 0, 0, 5, kDrift);
	EXPECT_EQ(s.kind, Step::Kind::before_epoch);
	s = fresh_step(kLayout, 0, std::numeric_limits<std::int64_t>::min(), 5, kDrift);
	EXPECT_EQ(s.kind, Step::Kind::before_epoch);
	// the epoch itself is fine (a state of 0 or less counts as issued)
	s = fresh_step(kLayout, -1, kEpoch, 0, kDrift);
	ASSERT_EQ(s.kind, Step::Kind::issue);
	EXPECT_EQ(s.state, 1);
	EXPECT_EQ(s.id, 1);
	s = fresh_step(kLayout, 0, kEpoch + 1, 0, kDrift);
	ASSERT_EQ(s.kind, Step::Kind::issue);
	EXPECT_EQ(s.state, 1 << 10);
	EXPECT_EQ(s.id, 1 << 23);
}

TEST(NextStep, ClockPastLayoutEndIsExhausted)
{
	Step s = fresh_step(kLayout, state_at(kNow, 0), kLast + 1, 5, kDrift);
	EXPECT_EQ(s.kind, Step::Kind::exhausted);
	EXPECT_EQ(s.state, state_at(kNow, 0));
	s = fresh_step(kLayout, 0, std::numeric_limits<std::int64_t>::max(), 5, kDrift);
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
	Step s = fresh_step(kLayout, std::numeric_limits<std::int64_t>::max(), kNow, 5, kDrift);
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

constexpr std::int64_t kSkew = 60 * 1000;

// A generator whose state followed the clock is moved to the millisecond
// now + skew + drift + 1, counter 0: past every state an old primary whose
// clock was at most kSkew ahead could have issued within kDrift of it.
TEST(FailoverState, ClockTermWhenTheStateFollowedTheClock)
{
	const std::int64_t state = state_at(kNow - 30 * 1000, 17);
	const std::int64_t moved = shardid::failover_state(kLayout, state, kNow, kDrift, kSkew);
	EXPECT_EQ(moved, state_at(kNow + kSkew + kDrift + 1, 0));
	// the last state the old primary could reach, 60 s ahead and a full burst
	EXPECT_GT(moved, state_at(kNow + kSkew + kDrift, 1023));
}

// A state ahead of every clock term (the old primary's clock had stepped
// back, or an earlier failover moved it) moves skew + drift + 1 ms past
// it, counter kept.
TEST(FailoverState, StateTermWhenTheStateRanAhead)
{
	const std::int64_t state = state_at(kNow + kHour, 300);
	EXPECT_EQ(shardid::failover_state(kLayout, state, kNow, kDrift, kSkew),
			  state_at(kNow + kHour + kSkew + kDrift + 1, 300));
}

// The next step after the move issues right above it, without waiting,
// and the lead it leaves does not grow.
TEST(FailoverState, NextStepIssuesAboveTheMove)
{
	FakeGenerator g;
	g.state = state_at(kNow - 30 * 1000, 0);
	g.state = shardid::failover_state(g.layout, g.state, g.now, g.drift, kSkew);
	const std::int64_t moved = g.state;
	for (int i = 0; i < 1023; i++)
		ASSERT_EQ(g.step().kind, Step::Kind::issue);
	EXPECT_EQ(g.state, moved + 1023);
	EXPECT_EQ(g.lead(), kSkew + kDrift + 1);
	// the next millisecond would raise the lead: wait for the clock
	EXPECT_EQ(g.step().kind, Step::Kind::wait);
	g.now += 1;
	EXPECT_EQ(g.step().kind, Step::Kind::issue);
}

// A never-called sequence (state 0) and negative settings.
TEST(FailoverState, ZeroStateAndNegativeSettings)
{
	EXPECT_EQ(shardid::failover_state(kLayout, 0, kNow, 0, 0), state_at(kNow + 1, 0));
	EXPECT_EQ(shardid::failover_state(kLayout, -5, kNow, -1, -1), state_at(kNow + 1, 0));
	EXPECT_EQ(shardid::failover_state(kLayout, 0, kNow, 0, kSkew), state_at(kNow + kSkew + 1, 0));
	// a clock before the epoch counts as the epoch
	EXPECT_EQ(shardid::failover_state(kLayout, 0, kEpoch - kHour, 0, 0), 1 << 10);
}

// Near the layout's end the move saturates at max_state: the next step
// reports exhaustion, never a wrapped state.
TEST(FailoverState, SaturatesAtTheLayoutsEnd)
{
	const std::int64_t max = shardid::max_state(kLayout);
	EXPECT_EQ(shardid::failover_state(kLayout, 0, kLast - 10, kDrift, kSkew), max);
	EXPECT_EQ(shardid::failover_state(kLayout, max - 5, kNow, kDrift, kSkew), max);
	EXPECT_EQ(shardid::failover_state(kLayout, max, kNow, kDrift, kSkew), max);
	EXPECT_EQ(shardid::failover_state(kLayout, 0, kNow, std::int64_t{1} << 62, kSkew), max);
	std::int64_t ceiling = 0;
	EXPECT_EQ(shardid::next_step(kLayout, max, kNow, 5, kDrift, &ceiling).kind,
			  Step::Kind::exhausted);
	// a layout with every bit for time but one shard bit: no overflow either
	const Layout wide{kEpoch, 1, 0};
	EXPECT_EQ(shardid::failover_state(wide, 0, kNow, wide.max_offset_ms(), wide.max_offset_ms()),
			  shardid::max_state(wide));
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

TEST(DecodeState, TimeAndCounter)
{
	std::int64_t ms = -1;
	std::int64_t counter = -1;
	ASSERT_TRUE(shardid::decode_state(kLayout, state_at(kNow + 7, 905), &ms, &counter));
	EXPECT_EQ(ms, kNow + 7);
	EXPECT_EQ(counter, 905);
	ASSERT_TRUE(shardid::decode_state(kLayout, 0, &ms, &counter));
	EXPECT_EQ(ms, kEpoch);
	EXPECT_EQ(counter, 0);
	ASSERT_TRUE(shardid::decode_state(kLayout, shardid::max_state(kLayout), &ms, &counter));
	EXPECT_EQ(ms, kLast);
	EXPECT_EQ(counter, 1023);
	// agrees with decode() of the ID the state stands for
	const Layout small{kEpoch, 3, 4};
	Parts p{};
	const std::int64_t state = (std::int64_t{123456} << 4) | 9;
	ASSERT_EQ(shardid::decode(small, shardid::state_to_id(small, state, 6), &p), Status::ok);
	ASSERT_TRUE(shardid::decode_state(small, state, &ms, &counter));
	EXPECT_EQ(ms, p.unix_ms);
	EXPECT_EQ(counter, p.seq);
}

TEST(DecodeState, OutsideTheLayoutIsRefused)
{
	std::int64_t ms = -1;
	std::int64_t counter = -1;
	EXPECT_FALSE(shardid::decode_state(kLayout, -1, &ms, &counter));
	EXPECT_FALSE(shardid::decode_state(kLayout, shardid::max_state(kLayout) + 1, &ms, &counter));
	EXPECT_FALSE(
		shardid::decode_state(kLayout, std::numeric_limits<std::int64_t>::max(), &ms, &counter));
	EXPECT_EQ(ms, -1);
	EXPECT_EQ(counter, -1);
}

}  // namespace
