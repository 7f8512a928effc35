// rebalance_test.cpp — unit tests of the rebalance planner plan_moves: the
// plans of the pg_regress examples, ties and node name order, a new node,
// pins, max_moves, the by_size tolerance and the 3c <= 2D bound at their
// edges, zero sizes, fewer than two nodes, each refusal and its order;
// closed nodes and drain_only: the drain order and its ties, pins, NULL
// sizes, max_moves, drain_plan()'s plans written out by hand, the balancing
// among open nodes that follows, no open node; and random inputs checked
// against a naive model of the same rules and against the properties
// every plan must have.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "rebalance.hpp"

namespace {

using shardid::Move;
using shardid::NodeName;
using shardid::PlanError;
using shardid::PlanInput;
using shardid::Strategy;
using Kind = PlanError::Kind;

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kNoLimit = -1;

// One call's input as SQL would give it, NULLs as nullopt.
struct Case {
	Strategy strategy = Strategy::by_size;
	std::int64_t max_moves = kNoLimit;
	std::vector<std::optional<std::string>> nodes;
	std::vector<std::optional<std::int32_t>> shards;
	std::vector<std::optional<std::string>> shard_nodes;
	std::vector<std::optional<std::int64_t>> bytes;
	std::vector<std::optional<std::int32_t>> pinned;
	std::vector<bool> closed;  // parallel to nodes; empty: node_closed nullptr
	bool drain_only = false;
};

// A move as _rebalance_moves() returns it; bytes nullopt for NULL.
struct Row {
	std::int32_t step;
	std::int32_t shard;
	std::string source;
	std::string target;
	std::optional<std::int64_t> bytes;

	bool operator==(const Row &o) const
	{
		return std::tie(step, shard, source, target, bytes) ==
			   std::tie(o.step, o.shard, o.source, o.target, o.bytes);
	}
};

std::ostream &
operator<<(std::ostream &os, const Row &r)
{
	os << "(" << r.step << ", " << r.shard << ", " << r.source << " -> " << r.target << ", ";
	if (r.bytes)
		os << *r.bytes;
	else
		os << "NULL";
	return os << ")";
}

struct Result {
	PlanError error;
	std::vector<Row> moves;
	std::vector<Move> raw;
};

NodeName
name_of(const std::optional<std::string> &s)
{
	return s ? NodeName{s->data(), s->size()} : NodeName{nullptr, 0};
}

// Runs plan_moves on a Case, with a workspace of exactly the size asked
// for, surrounded by guard bytes that must stay untouched.
Result
plan(const Case &c)
{
	std::vector<NodeName> nodes, shard_nodes;
	for (const auto &n : c.nodes)
		nodes.push_back(name_of(n));
	for (const auto &n : c.shard_nodes)
		shard_nodes.push_back(name_of(n));
	std::vector<std::int32_t> shards;
	std::unique_ptr<bool[]> shard_null(new bool[c.shards.size() + 1]);
	for (std::size_t i = 0; i < c.shards.size(); ++i) {
		shards.push_back(c.shards[i].value_or(0));
		shard_null[i] = !c.shards[i];
	}
	std::vector<std::int64_t> bytes;
	std::unique_ptr<bool[]> bytes_null(new bool[c.bytes.size() + 1]);
	for (std::size_t i = 0; i < c.bytes.size(); ++i) {
		bytes.push_back(c.bytes[i].value_or(0));
		bytes_null[i] = !c.bytes[i];
	}
	std::vector<std::int32_t> pinned;
	bool pinned_has_null = false;
	for (const auto &p : c.pinned) {
		if (p)
			pinned.push_back(*p);
		else
			pinned_has_null = true;
	}

	PlanInput in{c.strategy,         c.max_moves,      nodes.data(),     nodes.size(),
				 shards.data(),      shard_null.get(), shards.size(),    shard_nodes.data(),
				 shard_nodes.size(), bytes.data(),     bytes_null.get(), bytes.size(),
				 pinned.data(),      pinned.size(),    pinned_has_null};
	std::unique_ptr<bool[]> closed(new bool[c.nodes.size() + 1]);
	for (std::size_t i = 0; i < c.nodes.size(); ++i)
		closed[i] = i < c.closed.size() && c.closed[i];
	if (!c.closed.empty())
		in.node_closed = closed.get();
	in.drain_only = c.drain_only;
	const std::size_t size = shardid::plan_workspace_size(nodes.size(), shards.size());
	constexpr std::size_t kGuard = 64;
	constexpr unsigned char kFill = 0xA5;
	std::vector<std::max_align_t> space((size + 2 * kGuard) / sizeof(std::max_align_t) + 1);
	unsigned char *raw = reinterpret_cast<unsigned char *>(space.data());
	std::fill(raw, raw + size + 2 * kGuard, kFill);

	Result r;
	r.raw.resize(shards.size() + 1);
	std::size_t n = 12345;
	r.error = shardid::plan_moves(in, raw + kGuard, r.raw.data(), &n);
	for (std::size_t i = 0; i < kGuard; ++i) {
		EXPECT_EQ(raw[i], kFill) << "workspace underrun";
		EXPECT_EQ(raw[kGuard + size + i], kFill) << "workspace overrun";
	}
	if (r.error.kind != Kind::none) {
		EXPECT_EQ(n, 0u);
		r.raw.clear();
		return r;
	}
	EXPECT_LE(n, shards.size());
	r.raw.resize(n);
	for (const Move &m : r.raw) {
		std::optional<std::int64_t> b;
		if (!m.bytes_null)
			b = m.bytes;
		r.moves.push_back(Row{m.step, m.shard, *c.nodes.at(m.source), *c.nodes.at(m.target), b});
	}
	return r;
}

// The moves of a Case that must be accepted.
std::vector<Row>
moves(const Case &c)
{
	Result r = plan(c);
	EXPECT_EQ(r.error.kind, Kind::none);
	return r.moves;
}

Case
sized(std::vector<std::optional<std::string>> nodes,
	  std::vector<std::optional<std::int32_t>> shards, std::vector<std::optional<std::string>> on,
	  std::vector<std::optional<std::int64_t>> bytes, Strategy strategy = Strategy::by_size)
{
	Case c;
	c.strategy = strategy;
	c.nodes = std::move(nodes);
	c.shards = std::move(shards);
	c.shard_nodes = std::move(on);
	c.bytes = std::move(bytes);
	return c;
}

Case
counted(std::vector<std::optional<std::string>> nodes,
		std::vector<std::optional<std::int32_t>> shards, std::vector<std::optional<std::string>> on,
		std::vector<std::optional<std::int64_t>> bytes)
{
	return sized(std::move(nodes), std::move(shards), std::move(on), std::move(bytes),
				 Strategy::by_count);
}

// The first example of sql/nodes_rebalance.sql: a holds 400 + 300 + 200 +
// 100, b 100, c nothing.
Case
abc()
{
	return sized({"a", "b", "c"}, {1, 2, 3, 4, 5}, {"a", "a", "a", "a", "b"},
				 {400, 300, 200, 100, 100});
}

// --- the plans of sql/nodes_rebalance.sql ----------------------------------

TEST(PlanMoves, BySizeMovesTheShardNearestHalfTheGap)
{
	// a - c = 1000: 400 is nearest 500; then a - b = 500: 300 and 200 are as
	// near 250, the smaller goes; then a = c = 400, b = 300 and 100 would
	// not narrow a - b by its own size
	EXPECT_EQ(moves(abc()), (std::vector<Row>{{1, 1, "a", "c", 400}, {2, 3, "a", "b", 200}}));
}

TEST(PlanMoves, ByCountMovesTheHighestNumberedShard)
{
	Case c = abc();
	c.strategy = Strategy::by_count;
	EXPECT_EQ(moves(c), (std::vector<Row>{{1, 4, "a", "c", 100}, {2, 3, "a", "b", 200}}));
}

TEST(PlanMoves, ByCountNeedsNoSizes)
{
	Case c = counted(
		{"a", "b", "c"}, {1, 2, 3, 4, 5, 6}, {"a", "a", "a", "b", "b", "b"},
		{std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt});
	EXPECT_EQ(moves(c),
			  (std::vector<Row>{{1, 3, "a", "c", std::nullopt}, {2, 6, "b", "c", std::nullopt}}));
	// negative sizes too: by_count only reports them
	c.bytes = {-1, -2, -3, -4, -5, -6};
	EXPECT_EQ(moves(c), (std::vector<Row>{{1, 3, "a", "c", -3}, {2, 6, "b", "c", -6}}));
}

TEST(PlanMoves, TiesGoByNodeNameThenShardNumber)
{
	// a and b hold 200 each: a (by name) gives; its shards 1 and 2 are as
	// big, 2 goes; then b = 200, a = c = 100 and 100 would only swap them
	for (Strategy s : {Strategy::by_size, Strategy::by_count}) {
		Case c =
			sized({"c", "b", "a"}, {1, 2, 3, 4}, {"a", "a", "b", "b"}, {100, 100, 100, 100}, s);
		EXPECT_EQ(moves(c), (std::vector<Row>{{1, 2, "a", "c", 100}}));
	}
}

TEST(PlanMoves, NodeNamesInByteOrder)
{
	// "B" (0x42) before "a" (0x61) as the source of equal loads; "z" (0x7a)
	// before "é" (0xc3 0xa9) as the target of equal loads
	Case c = counted({"a", "é", "z", "B"}, {1, 2, 3, 4}, {"a", "a", "B", "B"}, {1, 1, 1, 1});
	EXPECT_EQ(moves(c), (std::vector<Row>{{1, 4, "B", "z", 1}, {2, 2, "a", "é", 1}}));
	// a prefix sorts first: "ab" gives before "abc"
	c = counted({"abc", "ab", "x"}, {1, 2, 3, 4}, {"abc", "abc", "ab", "ab"}, {1, 1, 1, 1});
	EXPECT_EQ(moves(c), (std::vector<Row>{{1, 4, "ab", "x", 1}}));
}

TEST(PlanMoves, ANewEmptyNodeReceivesFromEach)
{
	for (Strategy s : {Strategy::by_size, Strategy::by_count}) {
		Case c = sized({"a", "b", "new"}, {0, 1, 2, 3, 4, 5}, {"a", "a", "a", "b", "b", "b"},
					   {10, 10, 10, 10, 10, 10}, s);
		EXPECT_EQ(moves(c), (std::vector<Row>{{1, 2, "a", "new", 10}, {2, 5, "b", "new", 10}}));
	}
}

TEST(PlanMoves, NothingToDo)
{
	EXPECT_TRUE(
		moves(sized({"a", "b"}, {1, 2, 3, 4}, {"a", "a", "b", "b"}, {100, 100, 100, 100})).empty());
	EXPECT_TRUE(
		moves(counted({"a", "b", "c"}, {1, 2, 3, 4}, {"a", "a", "b", "c"}, {100, 5, 100, 100}))
			.empty());
	EXPECT_TRUE(moves(sized({"a", "b"}, {}, {}, {})).empty());
}

// --- fewer than two nodes ---------------------------------------------------

TEST(PlanMoves, FewerThanTwoNodesPlanNothing)
{
	EXPECT_TRUE(moves(sized({"a"}, {1, 2}, {"a", "a"}, {100, 100})).empty());
	EXPECT_TRUE(moves(sized({}, {}, {}, {})).empty());
	// NULLs and repeats do not count as nodes
	EXPECT_TRUE(
		moves(counted({"a", std::nullopt, "a"}, {1, 2, 3}, {"a", "a", "a"}, {1, 1, 1})).empty());
}

TEST(PlanMoves, FewerThanTwoNodesStillCheckTheInput)
{
	Result r = plan(sized({"a"}, {1, 2}, {"a", "x"}, {1, 1}));
	EXPECT_EQ(r.error.kind, Kind::node_not_given);
	EXPECT_EQ(r.error.shard, 2);
	r = plan(sized({}, {5}, {"a"}, {1}));
	EXPECT_EQ(r.error.kind, Kind::node_not_given);
	EXPECT_EQ(r.error.shard, 5);
	r = plan(sized({"a"}, {1, 2}, {"a", "a"}, {1, std::nullopt}));
	EXPECT_EQ(r.error.kind, Kind::size_missing);
	// a load over 2^63 - 1 on the only node is never summed
	EXPECT_EQ(plan(sized({"a"}, {1, 2}, {"a", "a"}, {kInt64Max, kInt64Max})).error.kind,
			  Kind::none);
}

TEST(PlanMoves, MovesNameTheFirstOfARepeatedNode)
{
	Result r = plan(counted({"b", "a", "b", "a"}, {1, 2}, {"a", "a"}, {1, 1}));
	ASSERT_EQ(r.raw.size(), 1u);
	EXPECT_EQ(r.raw[0].source, 1u);
	EXPECT_EQ(r.raw[0].target, 0u);
	EXPECT_EQ(r.raw[0].shard, 2);
	EXPECT_EQ(r.raw[0].shard_index, 1u);
}

// --- the tolerance and the bound on a move ----------------------------------

TEST(PlanMoves, BySizeToleratesATenthOfTheAverageLoad)
{
	// 2050 / 2 / 10 = 102: a - b = 50 is within it; a - b = 150 is not,
	// and 20 narrows it by 40
	EXPECT_TRUE(
		moves(sized({"a", "b"}, {1, 2, 3, 4}, {"a", "a", "a", "b"}, {1000, 30, 20, 1000})).empty());
	EXPECT_EQ(moves(sized({"a", "b"}, {1, 2, 3, 4}, {"a", "a", "a", "b"}, {1000, 130, 20, 1000})),
			  (std::vector<Row>{{1, 3, "a", "b", 20}}));
}

TEST(PlanMoves, ToleranceEdge)
{
	// total 2105: tolerance 2105 / 20 = 105 = a - b: balanced enough
	EXPECT_TRUE(moves(sized({"a", "b"}, {1, 2, 3}, {"a", "a", "b"}, {1100, 5, 1000})).empty());
	// total 2106: tolerance 105 < a - b = 106
	EXPECT_EQ(moves(sized({"a", "b"}, {1, 2, 3}, {"a", "a", "b"}, {1100, 6, 1000})),
			  (std::vector<Row>{{1, 2, "a", "b", 6}}));
}

TEST(PlanMoves, ToleranceOfLoadsWhoseSumOverflows)
{
	// each node's load fits in 64 bits, their sum does not: a = 2^63 - 1,
	// b = 2^62, c = 0, tolerance (2^63 - 1 + 2^62) / 30. a - c = 2^63 - 1,
	// and shard 2 of 2^62 is nearest its half (3c and 2D do not fit in
	// 63 bits); then the loads are 2^62 - 1, 2^62, 2^62
	const std::int64_t q = std::int64_t{1} << 62;
	Result r =
		plan(sized({"a", "b", "c"}, {1, 2, 3, 4}, {"a", "a", "b", "a"}, {q - 1001, q, q, 1000}));
	EXPECT_EQ(r.error.kind, Kind::none);
	EXPECT_EQ(r.moves, (std::vector<Row>{{1, 2, "a", "c", q}}));
	// a shard of 2^63 - 1 against a gap of 2^62 - 1: too big
	r = plan(sized({"a", "b"}, {1, 2}, {"a", "b"}, {kInt64Max, q}));
	EXPECT_EQ(r.error.kind, Kind::none);
	EXPECT_TRUE(r.moves.empty());
}

TEST(PlanMoves, ByCountStopsOneApart)
{
	EXPECT_EQ(moves(counted({"a", "b"}, {1, 2}, {"a", "a"}, {1, 1})),
			  (std::vector<Row>{{1, 2, "a", "b", 1}}));
	EXPECT_TRUE(moves(counted({"a", "b"}, {1}, {"a"}, {1})).empty());
	EXPECT_TRUE(
		moves(counted({"a", "b", "c"}, {1, 2, 3, 4, 5}, {"a", "a", "b", "b", "c"}, {1, 1, 1, 1, 1}))
			.empty());
}

TEST(PlanMoves, ABigShardIsNotMovedForASmallGain)
{
	// a - b = 300: moving 250 would leave b - a = 200
	EXPECT_TRUE(moves(sized({"a", "b"}, {1, 2, 3}, {"a", "a", "b"}, {1000, 250, 950})).empty());
	// 3c = 2D exactly (c = 200, D = 300) is allowed; 3c = 2D + 1 is not
	EXPECT_EQ(moves(sized({"a", "b"}, {1, 2, 3}, {"a", "a", "b"}, {900, 200, 800})),
			  (std::vector<Row>{{1, 2, "a", "b", 200}}));
	EXPECT_TRUE(moves(sized({"a", "b"}, {1, 2, 3}, {"a", "a", "b"}, {900, 201, 800})).empty());
}

TEST(PlanMoves, NearestHalfTheGapThenSmallerThenHigherNumber)
{
	// a = 2450, b = 450, D = 2000: 1000 is exactly half
	Case c =
		sized({"a", "b"}, {1, 2, 3, 4, 5}, {"a", "a", "a", "a", "b"}, {550, 450, 450, 1000, 450});
	EXPECT_EQ(moves(c).at(0), (Row{1, 4, "a", "b", 1000}));
	// a = 1450, b = 450, D = 1000: 450 and 550 are as near 500, the
	// smaller goes; of the two 450s, the higher number
	c = sized({"a", "b"}, {1, 2, 3, 9}, {"a", "a", "a", "b"}, {550, 450, 450, 450});
	EXPECT_EQ(moves(c).at(0), (Row{1, 3, "a", "b", 450}));
	// D = 499, half 249.5: 300 and 199 are 50.5 off: the smaller
	c = sized({"a", "b"}, {1, 2, 3, 4}, {"a", "a", "b", "a"}, {300, 199, 7, 7});
	EXPECT_EQ(moves(c).at(0), (Row{1, 2, "a", "b", 199}));
	// D = 500, half 250: 260 is 10 off, 130 is 120 off
	c = sized({"a", "b"}, {1, 2, 3}, {"a", "a", "a"}, {260, 130, 110});
	EXPECT_EQ(moves(c).at(0), (Row{1, 1, "a", "b", 260}));
	// D = 400, half 200: 140 is 60 off, 261 is 61 off
	c = sized({"a", "b"}, {1, 2, 3}, {"a", "a", "b"}, {261, 140, 1});
	EXPECT_EQ(moves(c).at(0), (Row{1, 2, "a", "b", 140}));
}

// --- zero sizes, pins, max_moves --------------------------------------------

TEST(PlanMoves, ZeroSizeShardsNeverMoveBySize)
{
	EXPECT_TRUE(moves(sized({"a", "b"}, {1, 2, 3, 4}, {"a", "a", "a", "b"}, {0, 0, 0, 0})).empty());
	// a - b = 500: 500 is too big (3 * 500 > 1000), the empty ones weigh
	// nothing
	Case c = sized({"a", "b"}, {1, 2, 3}, {"a", "a", "a"}, {0, 0, 500});
	EXPECT_TRUE(moves(c).empty());
	// by_count they weigh 1 like any other: the highest numbered goes
	c.strategy = Strategy::by_count;
	EXPECT_EQ(moves(c), (std::vector<Row>{{1, 3, "a", "b", 500}}));
	c.shards = {7, 8, 2};
	EXPECT_EQ(moves(c), (std::vector<Row>{{1, 8, "a", "b", 0}}));
}

TEST(PlanMoves, PinnedShardsCountButNeverMove)
{
	// shard 1 moving to c counts on c: only a -> b is left
	Case c = sized({"a", "b", "c"}, {1, 2, 3, 4, 5}, {"c", "a", "a", "a", "b"},
				   {400, 300, 200, 100, 100});
	c.pinned = {1};
	EXPECT_EQ(moves(c), (std::vector<Row>{{1, 3, "a", "b", 200}}));
	// shard 1 kept on a: its 400 stay there, the others move
	c = abc();
	c.pinned = {1};
	EXPECT_EQ(moves(c), (std::vector<Row>{
							{1, 2, "a", "c", 300}, {2, 3, "a", "b", 200}, {3, 4, "a", "b", 100}}));
	// pins of shards not given change nothing
	c.pinned = {1, 99, -4};
	EXPECT_EQ(moves(c).size(), 3u);
	// every shard pinned: nothing
	c = counted({"a", "b"}, {1, 2, 3}, {"a", "a", "a"}, {1, 1, 1});
	c.pinned = {3, 1, 2};
	EXPECT_TRUE(moves(c).empty());
	// a NULL pin pins everything, as SQL's "shard <> ALL (pinned)" does
	c.pinned = {std::nullopt};
	EXPECT_TRUE(moves(c).empty());
	c.pinned = {};
	EXPECT_EQ(moves(c), (std::vector<Row>{{1, 3, "a", "b", 1}}));
}

TEST(PlanMoves, FrozenShardsOnAFullNodeLeaveTheRestToMove)
{
	// a's two big shards are frozen (pinned): only its small ones can go
	Case c =
		sized({"a", "b"}, {1, 2, 3, 4, 5}, {"a", "a", "a", "a", "b"}, {1000, 1000, 300, 200, 0});
	c.pinned = {1, 2};
	// a = 2500, b = 0, tolerance 125: 300 then 200
	EXPECT_EQ(moves(c), (std::vector<Row>{{1, 3, "a", "b", 300}, {2, 4, "a", "b", 200}}));
}

TEST(PlanMoves, MaxMovesIsThePlansStart)
{
	Case c = abc();
	c.max_moves = 1;
	EXPECT_EQ(moves(c), (std::vector<Row>{{1, 1, "a", "c", 400}}));
	c.max_moves = 2;
	EXPECT_EQ(moves(c).size(), 2u);
	c.max_moves = 1000;
	EXPECT_EQ(moves(c).size(), 2u);
	c = counted({"a", "b", "new"}, {0, 1, 2, 3, 4, 5}, {"a", "a", "a", "b", "b", "b"},
				{10, 10, 10, 10, 10, 10});
	c.max_moves = 0;
	EXPECT_TRUE(moves(c).empty());
}

TEST(PlanMoves, NoShardMovesTwice)
{
	// by_count, 7 shards on a and two empty nodes: a gives in turn to b
	// and c (equal loads: by name) until one apart
	Case c = counted({"a", "b", "c"}, {1, 2, 3, 4, 5, 6, 7}, {"a", "a", "a", "a", "a", "a", "a"},
					 {1, 1, 1, 1, 1, 1, 1});
	EXPECT_EQ(
		moves(c),
		(std::vector<Row>{
			{1, 7, "a", "b", 1}, {2, 6, "a", "c", 1}, {3, 5, "a", "b", 1}, {4, 4, "a", "c", 1}}));
	// a = 700, b = 0, c = 400: 600 is too big for any gap, 100 goes to b;
	// then b - ... nothing: what b received does not move on
	c = sized({"a", "b", "c"}, {1, 2, 3}, {"a", "a", "c"}, {600, 100, 400});
	EXPECT_EQ(moves(c), (std::vector<Row>{{1, 2, "a", "b", 100}}));
	c = sized({"a", "b", "c"}, {1, 2, 3}, {"a", "a", "c"}, {400, 50, 250});
	// a - b = 450: 3 * 400 > 900, 50 goes; then 400 is too big for any gap
	EXPECT_EQ(moves(c), (std::vector<Row>{{1, 2, "a", "b", 50}}));
	c = sized({"a", "b"}, {1, 2, 3}, {"a", "a", "a"}, {500, 400, 100});
	// a = 1000, b = 0: 500 to b; now b = a = 500: nothing; the 500 never
	// comes back
	EXPECT_EQ(moves(c), (std::vector<Row>{{1, 1, "a", "b", 500}}));
}

// --- refusals, in the order they are checked --------------------------------

TEST(PlanMoves, RefusesArraysOfDifferentLengths)
{
	Result r = plan(sized({"a", "b"}, {1, 2}, {"a"}, {1, 1}));
	EXPECT_EQ(r.error.kind, Kind::lengths_differ);
	EXPECT_EQ(r.error.counts[0], 2u);
	EXPECT_EQ(r.error.counts[1], 1u);
	EXPECT_EQ(r.error.counts[2], 2u);
	r = plan(sized({"a", "b"}, {1, 1}, {"a", "x"}, {1, 1, 1}));
	EXPECT_EQ(r.error.kind, Kind::lengths_differ);
	EXPECT_EQ(r.error.counts[2], 3u);
}

TEST(PlanMoves, RefusesAShardGivenTwice)
{
	Result r = plan(sized({"a", "b"}, {1, 1}, {"a", "b"}, {1, 1}));
	EXPECT_EQ(r.error.kind, Kind::shard_repeated);
	EXPECT_EQ(r.error.shard, 1);
	EXPECT_FALSE(r.error.shard_is_null);
	// the smallest repeated, before a NULL
	r = plan(sized({"a"}, {9, 3, std::nullopt, 2, 9, 3, 2}, {"a", "a", "a", "a", "a", "a", "a"},
				   {1, 1, 1, 1, 1, 1, 1}));
	EXPECT_EQ(r.error.kind, Kind::shard_repeated);
	EXPECT_EQ(r.error.shard, 2);
	EXPECT_FALSE(r.error.shard_is_null);
	// a NULL shard when none is repeated
	r = plan(sized({"a"}, {5, std::nullopt}, {"x", "a"}, {1, 1}));
	EXPECT_EQ(r.error.kind, Kind::shard_repeated);
	EXPECT_TRUE(r.error.shard_is_null);
	// checked before the nodes and sizes
	r = plan(sized({"a"}, {4, 4}, {"x", "x"}, {-1, std::nullopt}));
	EXPECT_EQ(r.error.kind, Kind::shard_repeated);
	EXPECT_EQ(r.error.shard, 4);
}

TEST(PlanMoves, RefusesAShardOnANodeNotGiven)
{
	Result r = plan(sized({"a", "b"}, {1, 2}, {"a", "x"}, {1, 1}));
	EXPECT_EQ(r.error.kind, Kind::node_not_given);
	EXPECT_EQ(r.error.shard, 2);
	// the smallest such shard; a NULL node is not given either
	r = plan(sized({"a", "b"}, {8, 3, 5}, {"x", std::nullopt, "a"}, {1, 1, 1}));
	EXPECT_EQ(r.error.kind, Kind::node_not_given);
	EXPECT_EQ(r.error.shard, 3);
	// names are bytes: no case folding, no trimming
	r = plan(sized({"a", "b"}, {1, 2}, {"a", "B"}, {1, 1}));
	EXPECT_EQ(r.error.kind, Kind::node_not_given);
	r = plan(sized({"a", "b"}, {1, 2}, {"a", "b "}, {1, 1}));
	EXPECT_EQ(r.error.kind, Kind::node_not_given);
	// checked before the sizes
	r = plan(sized({"a", "b"}, {1, 2}, {"a", "x"}, {std::nullopt, 1}));
	EXPECT_EQ(r.error.kind, Kind::node_not_given);
	EXPECT_EQ(r.error.shard, 2);
}

TEST(PlanMoves, BySizeRefusesAShardWithoutSize)
{
	Result r = plan(sized({"a", "b"}, {1, 2}, {"a", "b"}, {1, std::nullopt}));
	EXPECT_EQ(r.error.kind, Kind::size_missing);
	EXPECT_EQ(r.error.shard, 2);
	r = plan(sized({"a", "b"}, {1, 2}, {"a", "b"}, {1, -1}));
	EXPECT_EQ(r.error.kind, Kind::size_missing);
	EXPECT_EQ(r.error.shard, 2);
	r = plan(sized({"a", "b"}, {9, 4, 6}, {"a", "b", "a"}, {-1, std::nullopt, 0}));
	EXPECT_EQ(r.error.kind, Kind::size_missing);
	EXPECT_EQ(r.error.shard, 4);
	// zero is a size
	EXPECT_EQ(plan(sized({"a", "b"}, {1}, {"a"}, {0})).error.kind, Kind::none);
}

TEST(PlanMoves, RefusesANodeLoadOver64Bits)
{
	const std::int64_t half = kInt64Max / 2 + 1;
	Result r = plan(sized({"a", "b"}, {1, 2}, {"a", "a"}, {half, half}));
	EXPECT_EQ(r.error.kind, Kind::load_too_large);
	// by_count never sums sizes
	r = plan(counted({"a", "b"}, {1, 2}, {"a", "a"}, {kInt64Max, kInt64Max}));
	EXPECT_EQ(r.error.kind, Kind::none);
	EXPECT_EQ(r.moves, (std::vector<Row>{{1, 2, "a", "b", kInt64Max}}));
}

TEST(PlanMoves, NoShardsNeedNoArrays)
{
	const NodeName nodes[] = {{"a", 1}, {"b", 1}};
	const PlanInput in{Strategy::by_size, kNoLimit, nodes, 2,       nullptr, nullptr, 0, nullptr, 0,
					   nullptr,           nullptr,  0,     nullptr, 0,       false};
	std::vector<std::max_align_t> space(
		shardid::plan_workspace_size(2, 0) / sizeof(std::max_align_t) + 1);
	std::size_t n = 7;
	EXPECT_EQ(shardid::plan_moves(in, space.data(), nullptr, &n).kind, Kind::none);
	EXPECT_EQ(n, 0u);
}

// --- closed nodes and drain_only -------------------------------------------

// drain_plan()'s example, worked by hand: c drained; a = 500, b = 300,
// d = 0; c's shard 9 frozen (pinned), 7 of no known size.
Case
drain_c()
{
	Case c = sized({"a", "b", "c", "d"}, {1, 2, 3, 4, 5, 6, 7, 8, 9},
				   {"a", "b", "c", "c", "c", "c", "c", "d", "c"},
				   {500, 300, 400, 250, 250, 100, std::nullopt, 0, 50});
	c.pinned = {9};
	c.closed = {false, false, true, false};
	c.drain_only = true;
	return c;
}

TEST(PlanMoves, DrainOnlyIsDrainPlansLoop)
{
	// largest first, equal sizes by higher number, NULL last; each to the
	// then emptiest: 400 to d (0); 250 (5) to b (300); 250 (4) to d (400 <
	// 500 < 550); 100 to a (500 < 550 < 650); the NULL weighs nothing and
	// goes to b (550 < 600 < 650). The frozen 9 stays.
	EXPECT_EQ(moves(drain_c()), (std::vector<Row>{{1, 3, "c", "d", 400},
												  {2, 5, "c", "b", 250},
												  {3, 4, "c", "d", 250},
												  {4, 6, "c", "a", 100},
												  {5, 7, "c", "b", std::nullopt}}));
	// by_count: highest number first, sizes only reported; a = b = d = 1
	// give a, b, d in turn by name, then a again
	Case c = drain_c();
	c.strategy = Strategy::by_count;
	EXPECT_EQ(moves(c), (std::vector<Row>{{1, 7, "c", "a", std::nullopt},
										  {2, 6, "c", "b", 100},
										  {3, 5, "c", "d", 250},
										  {4, 4, "c", "a", 250},
										  {5, 3, "c", "b", 400}}));
}

TEST(PlanMoves, DrainOnlyTiesGoByNodeNameInByteOrder)
{
	// given out of order; a = b = 2 shards: a first, then b, then a
	Case c = counted({"b", "a", "c"}, {1, 2, 3, 4, 10, 11, 12}, {"a", "a", "b", "b", "c", "c", "c"},
					 {1, 1, 1, 1, 5, 6, 7});
	c.closed = {false, false, true};
	c.drain_only = true;
	EXPECT_EQ(moves(c),
			  (std::vector<Row>{{1, 12, "c", "a", 7}, {2, 11, "c", "b", 6}, {3, 10, "c", "a", 5}}));
	// "Z" (0x5a) before "a" (0x61), "é" (0xc3 0xa9) after "z"
	c = sized({"é", "a", "Z", "x"}, {1, 2, 3, 4}, {"x", "x", "x", "x"}, {10, 10, 10, 10});
	c.closed = {false, false, false, true};
	c.drain_only = true;
	EXPECT_EQ(moves(c), (std::vector<Row>{{1, 4, "x", "Z", 10},
										  {2, 3, "x", "a", 10},
										  {3, 2, "x", "é", 10},
										  {4, 1, "x", "Z", 10}}));
}

TEST(PlanMoves, DrainOnlyLoadsCountPinnedAndNullSizes)
{
	// a holds a pinned 100 (a shard moving there, or frozen): b is emptier
	// for the first; b's NULL weighs nothing
	Case c =
		sized({"a", "b", "c"}, {1, 2, 3, 4}, {"a", "b", "c", "c"}, {100, std::nullopt, 60, 50});
	c.pinned = {1};
	c.closed = {false, false, true};
	c.drain_only = true;
	EXPECT_EQ(moves(c), (std::vector<Row>{{1, 3, "c", "b", 60}, {2, 4, "c", "b", 50}}));
	// without drain_only, by_size still needs every size
	c.drain_only = false;
	Result r = plan(c);
	EXPECT_EQ(r.error.kind, Kind::size_missing);
	EXPECT_EQ(r.error.shard, 2);
	// and a negative one is refused in both
	c = drain_c();
	c.bytes[0] = -1;
	r = plan(c);
	EXPECT_EQ(r.error.kind, Kind::size_missing);
	EXPECT_EQ(r.error.shard, 1);
}

TEST(PlanMoves, DrainLeavesPinnedShards)
{
	Case c = drain_c();
	c.pinned = {9, 3, 6};
	EXPECT_EQ(moves(c),
			  (std::vector<Row>{
				  {1, 5, "c", "d", 250}, {2, 4, "c", "d", 250}, {3, 7, "c", "b", std::nullopt}}));
	// a NULL pin pins every shard: nothing leaves, nothing is refused
	c.pinned = {std::nullopt};
	EXPECT_TRUE(moves(c).empty());
}

TEST(PlanMoves, DrainMaxMovesCountsEveryMove)
{
	Case c = drain_c();
	c.max_moves = 2;
	EXPECT_EQ(moves(c), (std::vector<Row>{{1, 3, "c", "d", 400}, {2, 5, "c", "b", 250}}));
	c.max_moves = 0;
	EXPECT_TRUE(moves(c).empty());
	// a drain then a balancing step: the limit stops either
	c = sized({"a", "b", "c"}, {1, 2, 3, 4, 5}, {"a", "a", "a", "b", "c"},
			  {600, 200, 100, 100, 300});
	c.closed = {false, false, true};
	EXPECT_EQ(moves(c).size(), 2u);
	c.max_moves = 1;
	EXPECT_EQ(moves(c), (std::vector<Row>{{1, 5, "c", "b", 300}}));
}

TEST(PlanMoves, AClosedNodeIsDrainedThenTheOpenOnesBalanced)
{
	// the drain: 300 to b (100 < 900); then a = 900, b = 400 among the open
	// nodes: 200 is nearest half the gap; then a = 700, b = 600: 100 is too
	// big for it
	Case c = sized({"a", "b", "c"}, {1, 2, 3, 4, 5}, {"a", "a", "a", "b", "c"},
				   {600, 200, 100, 100, 300});
	c.closed = {false, false, true};
	EXPECT_EQ(moves(c), (std::vector<Row>{{1, 5, "c", "b", 300}, {2, 2, "a", "b", 200}}));
	c.drain_only = true;
	EXPECT_EQ(moves(c), (std::vector<Row>{{1, 5, "c", "b", 300}}));
	// by_count: 5 to b; then a = 3, b = 2: one apart
	c.drain_only = false;
	c.strategy = Strategy::by_count;
	EXPECT_EQ(moves(c), (std::vector<Row>{{1, 5, "c", "b", 300}}));
}

TEST(PlanMoves, AClosedNodeTakesNoPartInTheBalancing)
{
	// c is closed with 3000 pinned: the tolerance is that of a and b alone,
	// 1850 / 20 = 92 < a - b = 150, and 60 narrows it
	Case c = sized({"a", "b", "c"}, {1, 2, 3, 4}, {"a", "a", "b", "c"}, {940, 60, 850, 3000});
	c.pinned = {4};
	c.closed = {false, false, true};
	EXPECT_EQ(moves(c), (std::vector<Row>{{1, 2, "a", "b", 60}}));
	// open, c counts: 4850 / 30 = 161 >= 150, and c's shard is pinned
	c.closed = {};
	EXPECT_TRUE(moves(c).empty());
	// closed and empty, c is no target: a gives to b, not to c
	c = counted({"a", "b", "c"}, {1, 2, 3}, {"a", "a", "a"}, {1, 1, 1});
	c.closed = {false, false, true};
	EXPECT_EQ(moves(c), (std::vector<Row>{{1, 3, "a", "b", 1}}));
	c.closed = {};
	EXPECT_EQ(moves(c), (std::vector<Row>{{1, 3, "a", "b", 1}, {2, 2, "a", "c", 1}}));
	// drain_only with no node closed plans nothing, balanced or not
	c.drain_only = true;
	EXPECT_TRUE(moves(c).empty());
}

TEST(PlanMoves, SeveralClosedNodesDrainInOneOrder)
{
	// c's 300 and d's 200 and 100 interleave, largest first; a and b open
	Case c = sized({"a", "b", "c", "d"}, {1, 2, 3, 4, 5}, {"a", "c", "d", "d", "c"},
				   {250, 300, 200, 100, 100});
	c.closed = {false, false, true, true};
	c.drain_only = true;
	EXPECT_EQ(moves(c), (std::vector<Row>{{1, 2, "c", "b", 300},
										  {2, 3, "d", "a", 200},
										  {3, 5, "c", "b", 100},
										  {4, 4, "d", "b", 100}}));
	// a name given twice is closed if one of its entries is
	c = counted({"a", "b", "a"}, {1, 2}, {"a", "a"}, {1, 1});
	c.closed = {false, false, true};
	EXPECT_EQ(moves(c), (std::vector<Row>{{1, 2, "a", "b", 1}, {2, 1, "a", "b", 1}}));
}

TEST(PlanMoves, NoOpenNodeToDrainOnto)
{
	// every node closed, shards to move: the smallest, and its node's
	// entry in nodes
	Case c = counted({"b", "a"}, {5, 3, 2}, {"b", "a", "a"}, {1, 1, 1});
	c.pinned = {2};
	c.closed = {true, true};
	Result r = plan(c);
	EXPECT_EQ(r.error.kind, Kind::no_open_node);
	EXPECT_EQ(r.error.shard, 3);
	EXPECT_EQ(r.error.node, 1u);
	c.drain_only = true;
	c.max_moves = 0;
	EXPECT_EQ(plan(c).error.kind, Kind::no_open_node);
	// one node, closed
	c = sized({"a"}, {1}, {"a"}, {10});
	c.closed = {true};
	r = plan(c);
	EXPECT_EQ(r.error.kind, Kind::no_open_node);
	EXPECT_EQ(r.error.shard, 1);
	EXPECT_EQ(r.error.node, 0u);
	// nothing to move: no refusal, no plan
	c.pinned = {1};
	EXPECT_TRUE(moves(c).empty());
	c = sized({"a", "b"}, {}, {}, {});
	c.closed = {true, true};
	EXPECT_TRUE(moves(c).empty());
	// the shards are checked first
	c = sized({"a"}, {1, 2}, {"a", "x"}, {1, 1});
	c.closed = {true};
	EXPECT_EQ(plan(c).error.kind, Kind::node_not_given);
	// one open node takes everything, and there is nothing to balance
	c = sized({"a", "b"}, {1, 2}, {"b", "b"}, {10, 20});
	c.closed = {false, true};
	EXPECT_EQ(moves(c), (std::vector<Row>{{1, 2, "b", "a", 20}, {2, 1, "b", "a", 10}}));
}

TEST(PlanMoves, RefusesADrainOver64Bits)
{
	// a holds 2^63 - 11: b's 11 (first, the larger) does not fit, its 10
	// fits exactly
	Case c = sized({"a", "b"}, {1, 2, 3}, {"a", "b", "b"}, {kInt64Max - 10, 10, 11});
	c.closed = {false, true};
	Result r = plan(c);
	EXPECT_EQ(r.error.kind, Kind::load_too_large);
	EXPECT_EQ(r.error.shard, 3);
	c.pinned = {3};
	EXPECT_EQ(moves(c), (std::vector<Row>{{1, 2, "b", "a", 10}}));
}

// --- random inputs ----------------------------------------------------------

// The rules of rebalance.hpp, written the plain way: the drain as
// drain_plan()'s loop, then every step looks at every shard. nullopt: every
// node is closed and a shard must leave one (no_open_node).
std::optional<std::vector<Row>>
naive_plan(const Case &c)
{
	std::set<std::string> unique, closed;
	for (std::size_t n = 0; n < c.nodes.size(); ++n)
		if (c.nodes[n]) {
			unique.insert(*c.nodes[n]);
			if (n < c.closed.size() && c.closed[n])
				closed.insert(*c.nodes[n]);
		}
	const std::vector<std::string> names(unique.begin(), unique.end());  // byte order
	const std::size_t k = names.size();
	const auto node_index = [&](const std::string &n) {
		return static_cast<std::size_t>(std::lower_bound(names.begin(), names.end(), n) -
										names.begin());
	};
	const auto is_open = [&](std::size_t n) { return closed.count(names[n]) == 0; };
	const auto cost = [&](std::size_t i) {
		return c.strategy == Strategy::by_count ? 1 : c.bytes[i].value_or(0);
	};
	std::set<std::int32_t> pinned;
	bool all_pinned = false;
	for (const auto &p : c.pinned) {
		if (p)
			pinned.insert(*p);
		else
			all_pinned = true;
	}
	const auto movable = [&](std::size_t i) {
		return !all_pinned && pinned.count(*c.shards[i]) == 0;
	};
	std::vector<std::size_t> leaving;
	for (std::size_t i = 0; i < c.shards.size(); ++i)
		if (movable(i) && !is_open(node_index(*c.shard_nodes[i])))
			leaving.push_back(i);
	if (closed.size() == k && !leaving.empty())
		return std::nullopt;
	if (k < 2)
		return std::vector<Row>{};
	std::vector<std::int64_t> load(k, 0);
	for (std::size_t i = 0; i < c.shards.size(); ++i)
		load[node_index(*c.shard_nodes[i])] += cost(i);
	std::vector<bool> moved(c.shards.size(), false);
	std::vector<Row> out;
	const auto room = [&] {
		return c.max_moves < 0 || static_cast<std::int64_t>(out.size()) < c.max_moves;
	};

	// the drain: "ORDER BY bytes DESC NULLS LAST, shard DESC", each to the
	// first of the emptiest open nodes
	std::sort(leaving.begin(), leaving.end(), [&](std::size_t a, std::size_t b) {
		const auto key = [&](std::size_t i) {
			const bool sized = c.strategy == Strategy::by_size && c.bytes[i].has_value();
			return std::make_tuple(!sized, sized ? -*c.bytes[i] : 0, -std::int64_t{*c.shards[i]});
		};
		return key(a) < key(b);
	});
	for (std::size_t i : leaving) {
		if (!room())
			break;
		std::optional<std::size_t> t;
		for (std::size_t n = 0; n < k; ++n)
			if (is_open(n) && (!t || load[n] < load[*t]))
				t = n;
		const std::size_t s = node_index(*c.shard_nodes[i]);
		moved[i] = true;
		load[s] -= cost(i);
		load[*t] += cost(i);
		out.push_back(Row{static_cast<std::int32_t>(out.size() + 1), *c.shards[i], names[s],
						  names[*t], c.bytes[i]});
	}
	if (c.drain_only)
		return out;

	std::vector<std::size_t> order;
	std::int64_t total = 0;
	for (std::size_t n = 0; n < k; ++n)
		if (is_open(n)) {
			order.push_back(n);
			total += load[n];
		}
	if (order.size() < 2)
		return out;
	const std::int64_t tol =
		c.strategy == Strategy::by_count ? 0 : total / static_cast<std::int64_t>(order.size() * 10);
	while (room()) {
		std::vector<std::size_t> sources = order, targets = order;
		std::stable_sort(sources.begin(), sources.end(),
						 [&](std::size_t a, std::size_t b) { return load[a] > load[b]; });
		std::stable_sort(targets.begin(), targets.end(),
						 [&](std::size_t a, std::size_t b) { return load[a] < load[b]; });
		std::optional<std::size_t> best;
		std::size_t bs = 0, bt = 0;
		for (std::size_t s : sources) {
			for (std::size_t t : targets) {
				const std::int64_t d = load[s] - load[t];
				if (d <= tol)
					break;
				for (std::size_t i = 0; i < c.shards.size(); ++i) {
					const std::int64_t ci = cost(i);
					if (moved[i] || !movable(i) || node_index(*c.shard_nodes[i]) != s || ci <= 0 ||
						3 * ci > 2 * d)
						continue;
					if (!best) {
						best = i;
						continue;
					}
					const std::int64_t cb = cost(*best);
					const auto key = [&](std::int64_t cc, std::int32_t shard) {
						return std::make_tuple(std::llabs(2 * cc - d), cc, -std::int64_t{shard});
					};
					if (key(ci, *c.shards[i]) < key(cb, *c.shards[*best]))
						best = i;
				}
				if (best) {
					bs = s;
					bt = t;
					break;
				}
			}
			if (best)
				break;
		}
		if (!best)
			break;
		moved[*best] = true;
		load[bs] -= cost(*best);
		load[bt] += cost(*best);
		out.push_back(Row{static_cast<std::int32_t>(out.size() + 1), *c.shards[*best], names[bs],
						  names[bt], c.bytes[*best]});
	}
	return out;
}

// A random valid input: 1 to 12 nodes (some repeated, some NULL, some
// holding nothing), up to 200 shards with sizes drawn from a few values
// (ties, zeros) or a wide range, random pins and max_moves.
Case
random_case(std::mt19937_64 &rng)
{
	const auto below = [&](std::uint64_t n) { return static_cast<std::int64_t>(rng() % n); };
	Case c;
	c.strategy = below(2) ? Strategy::by_count : Strategy::by_size;
	c.max_moves = below(4) == 0 ? below(10) : kNoLimit;
	const std::int64_t k = 1 + below(12);
	for (std::int64_t n = 0; n < k; ++n)
		c.nodes.push_back(std::string(1 + below(3), static_cast<char>('a' + below(26))));
	if (below(5) == 0)
		c.nodes.push_back(std::nullopt);
	if (below(5) == 0)
		c.nodes.push_back(c.nodes[0]);
	std::vector<std::string> holders;
	for (const auto &n : c.nodes)
		if (n && below(4) != 0)
			holders.push_back(*n);
	if (holders.empty())
		holders.push_back(*c.nodes[0]);
	const std::int64_t n_shards = below(201);
	const bool few_sizes = below(2) == 0;
	std::vector<std::int32_t> numbers(static_cast<std::size_t>(n_shards) * 3);
	for (std::size_t i = 0; i < numbers.size(); ++i)
		numbers[i] = static_cast<std::int32_t>(i) - 5;
	std::shuffle(numbers.begin(), numbers.end(), rng);
	for (std::int64_t i = 0; i < n_shards; ++i) {
		c.shards.push_back(numbers[static_cast<std::size_t>(i)]);
		// skewed: the first holders get more
		const std::size_t h =
			static_cast<std::size_t>(below(static_cast<std::uint64_t>(holders.size())));
		c.shard_nodes.push_back(holders[static_cast<std::size_t>(below(h + 1))]);
		c.bytes.push_back(few_sizes ? below(4) * 100 : below(1000000));
	}
	for (std::int64_t i = 0; i < n_shards; ++i)
		if (below(10) == 0)
			c.pinned.push_back(*c.shards[static_cast<std::size_t>(i)]);
	if (below(50) == 0)
		c.pinned.push_back(std::nullopt);
	return c;
}

// What every plan must hold, whatever the input: each move takes an
// unpinned shard from the node it is on to another, narrows a gap over the
// tolerance by at least its cost (0 < c, 3c <= 2D), moves no shard twice;
// no node ends fuller than the fullest or emptier than the emptiest was;
// and unless max_moves stopped it, no further step is possible.
void
check_properties(const Case &c, const std::vector<Row> &plan)
{
	std::map<std::string, std::int64_t> load;
	for (const auto &n : c.nodes)
		if (n)
			load[*n] = 0;
	if (load.size() < 2) {
		EXPECT_TRUE(plan.empty());
		return;
	}
	std::map<std::int32_t, std::size_t> index;
	std::map<std::int32_t, std::string> where;
	std::int64_t total = 0;
	const auto cost = [&](std::size_t i) {
		return c.strategy == Strategy::by_count ? 1 : *c.bytes[i];
	};
	for (std::size_t i = 0; i < c.shards.size(); ++i) {
		index[*c.shards[i]] = i;
		where[*c.shards[i]] = *c.shard_nodes[i];
		load[*c.shard_nodes[i]] += cost(i);
		total += cost(i);
	}
	const std::int64_t tol =
		c.strategy == Strategy::by_count ? 0 : total / static_cast<std::int64_t>(load.size() * 10);
	std::set<std::int32_t> pinned, moved;
	bool all_pinned = false;
	for (const auto &p : c.pinned) {
		if (p)
			pinned.insert(*p);
		else
			all_pinned = true;
	}
	const auto range = [&] {
		std::int64_t lo = kInt64Max, hi = 0;
		for (const auto &[n, l] : load) {
			lo = std::min(lo, l);
			hi = std::max(hi, l);
		}
		return std::make_pair(lo, hi);
	};
	const auto [lo0, hi0] = range();
	std::int32_t step = 0;
	for (const Row &r : plan) {
		EXPECT_EQ(r.step, ++step);
		ASSERT_EQ(index.count(r.shard), 1u);
		const std::size_t i = index[r.shard];
		EXPECT_FALSE(all_pinned || pinned.count(r.shard)) << r;
		EXPECT_TRUE(moved.insert(r.shard).second) << "moved twice: " << r;
		EXPECT_EQ(where[r.shard], r.source) << r;
		EXPECT_NE(r.source, r.target) << r;
		EXPECT_EQ(r.bytes, c.bytes[i]) << r;
		const std::int64_t d = load[r.source] - load[r.target];
		const std::int64_t ci = cost(i);
		EXPECT_GT(d, tol) << r;
		EXPECT_GT(ci, 0) << r;
		EXPECT_LE(3 * ci, 2 * d) << r;
		load[r.source] -= ci;
		load[r.target] += ci;
		where[r.shard] = r.target;
		// the gap narrowed by at least c
		EXPECT_LE(std::llabs(load[r.source] - load[r.target]), d - ci) << r;
		const auto [lo, hi] = range();
		EXPECT_GE(lo, lo0);
		EXPECT_LE(hi, hi0);
	}
	if (c.max_moves >= 0 && static_cast<std::int64_t>(plan.size()) == c.max_moves)
		return;
	// nothing is left to move
	for (std::size_t i = 0; i < c.shards.size(); ++i) {
		const std::int32_t s = *c.shards[i];
		if (all_pinned || pinned.count(s) || moved.count(s) || cost(i) <= 0)
			continue;
		for (const auto &[t, lt] : load) {
			const std::int64_t d = load[where[s]] - lt;
			EXPECT_FALSE(d > tol && 3 * cost(i) <= 2 * d)
				<< "shard " << s << " could still go from " << where[s] << " to " << t;
		}
	}
}

TEST(PlanMoves, RandomInputsMatchTheNaiveModelAndKeepTheProperties)
{
	std::mt19937_64 rng(20240601);
	std::size_t planned = 0;
	for (int i = 0; i < 3000; ++i) {
		const Case c = random_case(rng);
		const std::vector<Row> got = moves(c);
		const auto want = naive_plan(c);
		ASSERT_TRUE(want.has_value());
		ASSERT_EQ(got, *want) << "case " << i;
		check_properties(c, got);
		if (::testing::Test::HasFailure())
			FAIL() << "case " << i;
		planned += got.size();
	}
	// the cases are not all trivial
	EXPECT_GT(planned, 10000u);
}

// What every plan with closed nodes must hold: no move targets a closed
// node or moves a pinned shard or a shard twice; the moves off closed nodes
// come first, every movable shard of theirs among them unless max_moves
// stopped the plan; with drain_only there are no others.
void
check_drain_properties(const Case &c, const std::vector<Row> &plan)
{
	std::set<std::string> closed;
	for (std::size_t n = 0; n < c.nodes.size() && n < c.closed.size(); ++n)
		if (c.nodes[n] && c.closed[n])
			closed.insert(*c.nodes[n]);
	std::set<std::int32_t> pinned, moved, must_leave;
	bool all_pinned = false;
	for (const auto &p : c.pinned) {
		if (p)
			pinned.insert(*p);
		else
			all_pinned = true;
	}
	std::map<std::int32_t, std::string> where;
	for (std::size_t i = 0; i < c.shards.size(); ++i) {
		where[*c.shards[i]] = *c.shard_nodes[i];
		if (!all_pinned && !pinned.count(*c.shards[i]) && closed.count(*c.shard_nodes[i]))
			must_leave.insert(*c.shards[i]);
	}
	bool draining = true;
	for (const Row &r : plan) {
		EXPECT_EQ(closed.count(r.target), 0u) << "to a closed node: " << r;
		EXPECT_FALSE(all_pinned || pinned.count(r.shard)) << r;
		EXPECT_TRUE(moved.insert(r.shard).second) << "moved twice: " << r;
		EXPECT_EQ(where[r.shard], r.source) << r;
		const bool off_closed = closed.count(r.source) > 0;
		if (!off_closed)
			draining = false;
		EXPECT_TRUE(!off_closed || draining) << "a drain move after a balancing one: " << r;
		EXPECT_TRUE(off_closed || !c.drain_only) << "balancing in drain_only: " << r;
		must_leave.erase(r.shard);
	}
	if (c.max_moves < 0 || static_cast<std::int64_t>(plan.size()) < c.max_moves) {
		EXPECT_TRUE(must_leave.empty()) << must_leave.size() << " shards left on closed nodes";
	}
}

TEST(PlanMoves, RandomDrainsMatchTheNaiveModelAndKeepTheProperties)
{
	std::mt19937_64 rng(4242);
	std::size_t drained = 0, balanced = 0, refused = 0;
	for (int i = 0; i < 3000; ++i) {
		Case c = random_case(rng);
		for (std::size_t n = 0; n < c.nodes.size(); ++n)
			c.closed.push_back(rng() % 4 == 0);
		c.drain_only = rng() % 3 == 0;
		if (c.drain_only && c.strategy == Strategy::by_size)
			for (auto &b : c.bytes)
				if (rng() % 10 == 0)
					b = std::nullopt;
		const Result r = plan(c);
		const auto want = naive_plan(c);
		if (!want) {
			ASSERT_EQ(r.error.kind, Kind::no_open_node) << "case " << i;
			++refused;
			continue;
		}
		ASSERT_EQ(r.error.kind, Kind::none) << "case " << i;
		ASSERT_EQ(r.moves, *want) << "case " << i;
		check_drain_properties(c, r.moves);
		if (::testing::Test::HasFailure())
			FAIL() << "case " << i;
		std::set<std::string> closed;
		for (std::size_t n = 0; n < c.nodes.size(); ++n)
			if (c.nodes[n] && c.closed[n])
				closed.insert(*c.nodes[n]);
		for (const Row &m : r.moves)
			++(closed.count(m.source) ? drained : balanced);
	}
	// the cases are not all trivial
	EXPECT_GT(drained, 3000u);
	EXPECT_GT(balanced, 3000u);
	EXPECT_GT(refused, 10u);
}

TEST(PlanMoves, InternetScaleKeepsTheProperties)
{
	// 8192 shards of Zipf-like sizes on 255 nodes, one node just added
	std::mt19937_64 rng(8192);
	Case c;
	for (int n = 0; n < 256; ++n)
		c.nodes.push_back("node" + std::to_string(n));
	for (int s = 0; s < 8192; ++s) {
		c.shards.push_back(s);
		c.shard_nodes.push_back(c.nodes[static_cast<std::size_t>(rng() % 255)]);
		c.bytes.push_back(static_cast<std::int64_t>(1e12 / (1 + rng() % 8192)));
		if (rng() % 50 == 0)
			c.pinned.push_back(s);
	}
	for (Strategy s : {Strategy::by_size, Strategy::by_count}) {
		c.strategy = s;
		const std::vector<Row> got = moves(c);
		EXPECT_GT(got.size(), 20u);
		check_properties(c, got);
	}
}

}  // namespace
