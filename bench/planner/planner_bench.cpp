// planner_bench.cpp — the rebalance planner (src/core/rebalance.cpp) alone,
// at Instagram's scale: 8192 shards of Zipf-skewed sizes on 64 and on 256
// nodes, in three scenarios, by_size and by_count. For each: the CPU time of
// the whole plan and of its first step (what rebalance() asks for before each
// move), the moves, the bytes they move, and the nodes' loads before and
// after against the mean (the ideal). Prints Markdown rows; bench/planner/run
// writes them to bench/PLANNER.md.
//
//   planner_bench [--shards N] [--zipf S] [--reps R] [--seed X] NODES...
//
// Scenarios, each from a placement of its own:
//   random      the shards placed uniformly at random (the imbalance is
//               that of the draw and of the sizes);
//   new node    the random placement balanced by the planner (by_size),
//               then one empty node added;
//   drain       the same balanced placement, one node drained. The planner
//               has no drain mode (every shard must be on a node it is given),
//               so a drain is modelled as what it must do: each of the node's
//               shards, largest first, goes to the node that is emptiest at
//               that point (these moves are forced; they are counted on
//               their own), then the planner evens out the rest with those
//               shards pinned, since they have already moved once.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <time.h>
#include <vector>

#include "rebalance.hpp"

namespace {

using shardid::Move;
using shardid::PlanError;
using shardid::Strategy;

constexpr double kGiB = 1024.0 * 1024 * 1024;

// Shards, their sizes and where they are.
struct Cluster {
	std::vector<std::string> nodes;
	std::vector<std::int32_t> shards;
	std::vector<std::int64_t> bytes;
	std::vector<std::size_t> node_of;  // index into nodes
	std::vector<std::int32_t> pinned;
};

// This thread's CPU time: other work on a shared machine disturbs it far
// less than the wall time (the planner runs on one thread).
double
cpu_seconds()
{
	timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Plan {
	std::vector<Move> moves;
	std::vector<double> seconds;  // CPU time of each repetition
};

// Runs the planner reps times on the same input; the moves of the last.
Plan
plan(const Cluster &c, Strategy strategy, std::int64_t max_moves, int reps)
{
	std::vector<shardid::NodeName> nodes, on;
	for (const std::string &n : c.nodes)
		nodes.push_back({n.data(), n.size()});
	for (std::size_t n : c.node_of)
		on.push_back(nodes[n]);
	const shardid::PlanInput in{
		strategy, max_moves,       nodes.data(),    nodes.size(),    c.shards.data(),
		nullptr,  c.shards.size(), on.data(),       on.size(),       c.bytes.data(),
		nullptr,  c.bytes.size(),  c.pinned.data(), c.pinned.size(), false};
	std::vector<std::max_align_t> workspace(
		shardid::plan_workspace_size(nodes.size(), c.shards.size()) / sizeof(std::max_align_t) + 1);
	Plan p;
	p.moves.resize(c.shards.size());
	std::size_t n = 0;
	for (int r = 0; r < reps; ++r) {
		const double t0 = cpu_seconds();
		const PlanError err = shardid::plan_moves(in, workspace.data(), p.moves.data(), &n);
		const double t1 = cpu_seconds();
		if (err.kind != PlanError::Kind::none) {
			std::fprintf(stderr, "planner refused its input (%d)\n", static_cast<int>(err.kind));
			std::exit(1);
		}
		p.seconds.push_back(t1 - t0);
	}
	p.moves.resize(n);
	return p;
}

void
apply(Cluster &c, const std::vector<Move> &moves)
{
	for (const Move &m : moves)
		c.node_of[m.shard_index] = m.target;
}

std::vector<std::int64_t>
loads(const Cluster &c, Strategy strategy)
{
	std::vector<std::int64_t> l(c.nodes.size(), 0);
	for (std::size_t i = 0; i < c.shards.size(); ++i)
		l[c.node_of[i]] += strategy == Strategy::by_count ? 1 : c.bytes[i];
	return l;
}

// max / mean and min / mean of the nodes' loads, and the largest shard
// / mean (no placement has its fullest node below that).
struct Spread {
	double max_ratio;
	double min_ratio;
	double floor_ratio;
};

Spread
spread(const Cluster &c, Strategy strategy)
{
	const std::vector<std::int64_t> l = loads(c, strategy);
	double total = 0;
	for (std::int64_t x : l)
		total += static_cast<double>(x);
	const double mean = total / static_cast<double>(l.size());
	const auto [lo, hi] = std::minmax_element(l.begin(), l.end());
	const double largest =
		strategy == Strategy::by_count
			? 1.0
			: static_cast<double>(*std::max_element(c.bytes.begin(), c.bytes.end()));
	return Spread{static_cast<double>(*hi) / mean, static_cast<double>(*lo) / mean,
				  std::max(1.0, largest / mean)};
}

double
median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

std::string
duration(double s)
{
	char buf[32];
	if (s < 0.9995e-3)
		std::snprintf(buf, sizeof buf, "%.0f µs", s * 1e6);
	else if (s < 0.9995)
		std::snprintf(buf, sizeof buf, "%.1f ms", s * 1e3);
	else
		std::snprintf(buf, sizeof buf, "%.2f s", s);
	return buf;
}

std::int64_t
moved_bytes(const Cluster &c, const std::vector<Move> &moves)
{
	std::int64_t b = 0;
	for (const Move &m : moves)
		b += c.bytes[m.shard_index];
	return b;
}

// One row of the table: a scenario's plan and what it leaves.
void
report(const char *scenario, const Cluster &before, Strategy strategy, int reps,
	   const std::vector<Move> &forced = {})
{
	const Plan full = plan(before, strategy, -1, reps);
	const Plan first = plan(before, strategy, 1, reps);
	Cluster after = before;
	apply(after, full.moves);
	double total = 0;
	for (std::int64_t b : before.bytes)
		total += static_cast<double>(b);
	const double moved = static_cast<double>(moved_bytes(before, full.moves));
	const Spread b = spread(before, Strategy::by_size), a = spread(after, Strategy::by_size);
	const Spread bc = spread(before, Strategy::by_count), ac = spread(after, Strategy::by_count);
	const auto [lo, hi] = std::minmax_element(full.seconds.begin(), full.seconds.end());
	const double forced_bytes = static_cast<double>(moved_bytes(before, forced));
	std::string moves = std::to_string(full.moves.size());
	std::string bytes = std::to_string(std::llround(moved / kGiB));
	if (!forced.empty()) {
		moves = std::to_string(forced.size()) + " + " + moves;
		bytes = std::to_string(std::llround(forced_bytes / kGiB)) + " + " + bytes;
	}
	std::printf("| %s | %zu | %s | %s (%s–%s) | %s | %s | %s GiB (%.1f %%) | %.2f → %.2f (%.2f) | "
				"%.2f → %.2f | %.2f → %.2f |\n",
				scenario, before.nodes.size(),
				strategy == Strategy::by_size ? "by_size" : "by_count",
				duration(median(full.seconds)).c_str(), duration(*lo).c_str(),
				duration(*hi).c_str(), duration(median(first.seconds)).c_str(), moves.c_str(),
				bytes.c_str(), 100 * (forced_bytes + moved) / total, b.max_ratio, a.max_ratio,
				b.floor_ratio, b.min_ratio, a.min_ratio, bc.max_ratio, ac.max_ratio);
}

// Drains node d: its shards, largest first, each to the emptiest other
// node; returns those moves and leaves the cluster without d, the moved
// shards pinned.
std::vector<Move>
drain(Cluster &c, std::size_t d)
{
	std::vector<std::size_t> on_d;
	for (std::size_t i = 0; i < c.shards.size(); ++i)
		if (c.node_of[i] == d)
			on_d.push_back(i);
	std::sort(on_d.begin(), on_d.end(), [&](std::size_t a, std::size_t b) {
		return c.bytes[a] > c.bytes[b] || (c.bytes[a] == c.bytes[b] && a < b);
	});
	std::vector<std::int64_t> l = loads(c, Strategy::by_size);
	l[d] = INT64_MAX;
	std::vector<Move> forced;
	for (std::size_t i : on_d) {
		const std::size_t t =
			static_cast<std::size_t>(std::min_element(l.begin(), l.end()) - l.begin());
		forced.push_back(Move{static_cast<std::int32_t>(forced.size() + 1), c.shards[i], i, d, t,
							  c.bytes[i], false});
		l[t] += c.bytes[i];
		c.node_of[i] = t;
		c.pinned.push_back(c.shards[i]);
	}
	// d leaves the node list
	c.nodes.erase(c.nodes.begin() + static_cast<std::ptrdiff_t>(d));
	for (std::size_t &n : c.node_of)
		if (n > d)
			--n;
	return forced;
}

}  // namespace

int
main(int argc, char **argv)
{
	int shards = 8192, reps = 5;
	double zipf = 1.0;
	unsigned long seed = 20240601;
	std::vector<int> node_counts;
	for (int i = 1; i < argc; ++i) {
		const bool more = i + 1 < argc;
		if (std::strcmp(argv[i], "--shards") == 0 && more)
			shards = std::atoi(argv[++i]);
		else if (std::strcmp(argv[i], "--zipf") == 0 && more)
			zipf = std::atof(argv[++i]);
		else if (std::strcmp(argv[i], "--reps") == 0 && more)
			reps = std::atoi(argv[++i]);
		else if (std::strcmp(argv[i], "--seed") == 0 && more)
			seed = std::strtoul(argv[++i], nullptr, 10);
		else if (std::atoi(argv[i]) >= 2)
			node_counts.push_back(std::atoi(argv[i]));
		else {
			std::fprintf(stderr,
						 "usage: planner_bench [--shards N] [--zipf S] [--reps R] [--seed X] "
						 "NODES...\n");
			return 2;
		}
	}

	for (int k : node_counts) {
		// sizes: rank r of a random permutation weighs 100 GiB / r^zipf
		std::mt19937_64 rng(seed + static_cast<unsigned long>(k));
		Cluster random;
		for (int n = 0; n < k; ++n)
			random.nodes.push_back("node" + std::to_string(n));
		std::vector<int> rank(static_cast<std::size_t>(shards));
		for (int s = 0; s < shards; ++s)
			rank[static_cast<std::size_t>(s)] = s + 1;
		std::shuffle(rank.begin(), rank.end(), rng);
		for (int s = 0; s < shards; ++s) {
			random.shards.push_back(s);
			random.bytes.push_back(static_cast<std::int64_t>(
				100 * kGiB / std::pow(rank[static_cast<std::size_t>(s)], zipf)));
			random.node_of.push_back(static_cast<std::size_t>(rng() % static_cast<unsigned>(k)));
		}
		report("random", random, Strategy::by_size, reps);
		report("random", random, Strategy::by_count, reps);

		Cluster balanced = random;
		apply(balanced, plan(random, Strategy::by_size, -1, 1).moves);
		Cluster grown = balanced;
		grown.nodes.push_back("node" + std::to_string(k));
		report("new node", grown, Strategy::by_size, reps);
		report("new node", grown, Strategy::by_count, reps);

		Cluster drained = balanced;
		const std::vector<Move> forced = drain(drained, 0);
		// the table's "before" is the cluster with the drained shards placed
		report("drain", drained, Strategy::by_size, reps, forced);
	}
	return 0;
}
