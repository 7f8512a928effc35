// planner_bench.cpp — the rebalance planner (src/core/rebalance.cpp) alone,
// at Instagram's scale: 8192 shards of Zipf-skewed sizes on 64 and on 256
// nodes, in three scenarios, by_size and by_count. For each: the CPU time of
// the whole plan and of its first step (what rebalance() asks for before each
// move), the moves, the bytes they move, and the nodes' loads before and
// after against the mean (the ideal). With --schedule, instead: how long a
// driver takes to make the moves of a plan, serially or in parallel (see
// simulate()). Prints Markdown rows; bench/planner/run writes them to
// bench/PLANNER.md.
//
//   planner_bench [--shards N] [--zipf S] [--reps R] [--seed X] NODES...
//   planner_bench --schedule [--move-fixed S] [--move-per-mb S] [--move-gap S] [--added N]
//                 [--shards N] [--zipf S] [--seed X] NODES...
//
// Scenarios, each from a placement of its own:
//   random      the shards placed uniformly at random (the imbalance is
//               that of the draw and of the sizes);
//   new node    the random placement balanced by the planner (by_size),
//               then one empty node added (--schedule: --added nodes, 16);
//   drain       the same balanced placement with node0 closed: the planner
//               moves its shards off first, largest first each to the then
//               emptiest node (counted on their own), then evens out the
//               other nodes (--schedule: drain_only, the drain alone).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <queue>
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
	std::vector<char> closed;  // per node; empty: none
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

bool
is_closed(const Cluster &c, std::size_t n)
{
	return n < c.closed.size() && c.closed[n];
}

// Runs the planner reps times on the same input; the moves of the last.
Plan
plan(const Cluster &c, Strategy strategy, std::int64_t max_moves, int reps, bool drain_only = false)
{
	std::vector<shardid::NodeName> nodes, on;
	for (const std::string &n : c.nodes)
		nodes.push_back({n.data(), n.size()});
	for (std::size_t n : c.node_of)
		on.push_back(nodes[n]);
	shardid::PlanInput in{
		strategy, max_moves,       nodes.data(),    nodes.size(),    c.shards.data(),
		nullptr,  c.shards.size(), on.data(),       on.size(),       c.bytes.data(),
		nullptr,  c.bytes.size(),  c.pinned.data(), c.pinned.size(), false};
	std::unique_ptr<bool[]> closed(new bool[c.nodes.size() + 1]);
	for (std::size_t n = 0; n < c.nodes.size(); ++n)
		closed[n] = is_closed(c, n);
	in.node_closed = closed.get();
	in.drain_only = drain_only;
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
apply_moves(Cluster &c, const std::vector<Move> &moves)
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

std::size_t
open_nodes(const Cluster &c)
{
	return c.nodes.size() -
		   static_cast<std::size_t>(std::count(c.closed.begin(), c.closed.end(), 1));
}

// max / mean and min / mean of the open nodes' loads, and the largest shard
// / mean (no placement has its fullest node below that).
struct Spread {
	double max_ratio;
	double min_ratio;
	double floor_ratio;
};

Spread
spread(const Cluster &c, Strategy strategy)
{
	std::vector<std::int64_t> l;
	const std::vector<std::int64_t> all = loads(c, strategy);
	for (std::size_t n = 0; n < all.size(); ++n)
		if (!is_closed(c, n))
			l.push_back(all[n]);
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

// One row of the table: a scenario's plan and what it leaves. The moves off
// closed nodes are counted on their own (the first number), and "before" is
// once they are made.
void
report(const char *scenario, const Cluster &given, Strategy strategy, int reps)
{
	const Plan whole = plan(given, strategy, -1, reps);
	const Plan first = plan(given, strategy, 1, reps);
	std::vector<Move> forced;
	Plan full;
	for (const Move &m : whole.moves)
		(is_closed(given, m.source) ? forced : full.moves).push_back(m);
	full.seconds = whole.seconds;
	Cluster before = given;
	apply_moves(before, forced);
	Cluster after = before;
	apply_moves(after, full.moves);
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
	if (!given.closed.empty()) {
		moves = std::to_string(forced.size()) + " + " + moves;
		bytes = std::to_string(std::llround(forced_bytes / kGiB)) + " + " + bytes;
	}
	std::printf("| %s | %zu | %s | %s (%s–%s) | %s | %s | %s GiB (%.1f %%) | %.2f → %.2f (%.2f) | "
				"%.2f → %.2f | %.2f → %.2f |\n",
				scenario, open_nodes(given), strategy == Strategy::by_size ? "by_size" : "by_count",
				duration(median(full.seconds)).c_str(), duration(*lo).c_str(),
				duration(*hi).c_str(), duration(median(first.seconds)).c_str(), moves.c_str(),
				bytes.c_str(), 100 * (forced_bytes + moved) / total, b.max_ratio, a.max_ratio,
				b.floor_ratio, b.min_ratio, a.min_ratio, bc.max_ratio, ac.max_ratio);
}

// A move as the driver sees it: its two nodes and how long it takes.
struct Job {
	std::size_t source;
	std::size_t target;
	double seconds;
};

// The moves of a plan as jobs: fixed seconds each, plus per_byte seconds a
// byte.
std::vector<Job>
jobs_of(const std::vector<Move> &moves, double fixed, double per_byte)
{
	std::vector<Job> jobs;
	for (const Move &m : moves)
		jobs.push_back(Job{m.source, m.target, fixed + per_byte * static_cast<double>(m.bytes)});
	return jobs;
}

// The wall time of a driver that makes the jobs with at most per_node moves
// in flight on a node (as source or target) and at most overall in all (0:
// no bound): whenever a move ends (and at the start) it starts, in plan
// order, every move not started yet whose two nodes are each in fewer than
// per_node moves, while fewer than overall are in flight. A later move may
// start before an earlier one that waits for its nodes. Moves are
// independent (a shard moves at most once in a plan) and take as long
// whatever else runs.
double
simulate(const std::vector<Job> &jobs, std::size_t n_nodes, int per_node, std::size_t overall)
{
	std::vector<int> busy(n_nodes, 0);
	std::vector<std::size_t> waiting(jobs.size());
	for (std::size_t j = 0; j < jobs.size(); ++j)
		waiting[j] = j;
	using Running = std::pair<double, std::size_t>;  // end, job
	std::priority_queue<Running, std::vector<Running>, std::greater<Running>> running;
	double now = 0;
	while (!waiting.empty() || !running.empty()) {
		std::vector<std::size_t> still;
		for (std::size_t j : waiting) {
			const Job &m = jobs[j];
			if ((overall == 0 || running.size() < overall) && busy[m.source] < per_node &&
				busy[m.target] < per_node) {
				++busy[m.source];
				++busy[m.target];
				running.push({now + m.seconds, j});
			} else
				still.push_back(j);
		}
		waiting.swap(still);
		now = running.top().first;
		while (!running.empty() && running.top().first <= now) {
			const Job &m = jobs[running.top().second];
			--busy[m.source];
			--busy[m.target];
			running.pop();
		}
	}
	return now;
}

// The most seconds of moves one node takes part in: no driver with one
// move per node finishes sooner.
double
busiest_node(const std::vector<Job> &jobs, std::size_t n_nodes)
{
	std::vector<double> work(n_nodes, 0);
	for (const Job &m : jobs) {
		work[m.source] += m.seconds;
		work[m.target] += m.seconds;
	}
	return *std::max_element(work.begin(), work.end());
}

// A wall time as h:mm:ss.
std::string
clock_time(double seconds)
{
	const long long s = std::llround(seconds);
	char buf[32];
	std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
	return buf;
}

// One row of the schedule table: a plan's moves and the driver's wall time,
// serial and in parallel.
void
report_schedule(const char *scenario, const Cluster &c, const std::vector<Move> &moves,
				double fixed, double per_byte, double total_bytes)
{
	const std::vector<Job> jobs = jobs_of(moves, fixed, per_byte);
	const std::size_t k = c.nodes.size();
	double longest = 0, sum = 0;
	for (const Job &m : jobs) {
		longest = std::max(longest, m.seconds);
		sum += m.seconds;
	}
	const double busiest = busiest_node(jobs, k);
	const double serial = simulate(jobs, k, 1, 1), pool = simulate(jobs, k, 1, 4);
	const double one = simulate(jobs, k, 1, 0), two_half = simulate(jobs, k, 2, k / 2);
	const double two = simulate(jobs, k, 2, 0);
	// what the schedules must respect: serial is the sum; none beats the
	// longest move or the busiest node's share of L; none is slower than
	// serial, as a move is in flight at every moment until the last ends
	const double eps = 1e-6 * (1 + sum);
	const double floor_two = std::max(longest, busiest / 2);
	if (std::fabs(serial - sum) > eps || one < std::max(longest, busiest) - eps ||
		two < floor_two - eps || two_half < floor_two - eps ||
		std::max({pool, one, two_half, two}) > serial + eps) {
		std::fprintf(stderr, "%s: the simulated schedules contradict each other\n", scenario);
		std::exit(1);
	}
	std::printf("| %.2f TiB | %s | %zu | %zu | %lld | %s | %s | %s | %s | %s | %s | %s |\n",
				total_bytes / kGiB / 1024, scenario, k, moves.size(),
				std::llround(static_cast<double>(moved_bytes(c, moves)) / kGiB),
				clock_time(longest).c_str(), clock_time(busiest).c_str(),
				clock_time(serial).c_str(), clock_time(pool).c_str(), clock_time(one).c_str(),
				clock_time(two_half).c_str(), clock_time(two).c_str());
}

}  // namespace

int
main(int argc, char **argv)
{
	int shards = 8192, reps = 5, added = 16;
	double zipf = 1.0, fixed = 0.9, per_mb = 2.8 / 300, gap = 0;
	bool schedule = false;
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
		else if (std::strcmp(argv[i], "--schedule") == 0)
			schedule = true;
		else if (std::strcmp(argv[i], "--move-fixed") == 0 && more)
			fixed = std::atof(argv[++i]);
		else if (std::strcmp(argv[i], "--move-per-mb") == 0 && more)
			per_mb = std::atof(argv[++i]);
		else if (std::strcmp(argv[i], "--move-gap") == 0 && more)
			gap = std::atof(argv[++i]);
		else if (std::strcmp(argv[i], "--added") == 0 && more)
			added = std::atoi(argv[++i]);
		else if (std::atoi(argv[i]) >= 2)
			node_counts.push_back(std::atoi(argv[i]));
		else {
			std::fprintf(
				stderr, "usage: planner_bench [--shards N] [--zipf S] [--reps R] [--seed X] "
						"NODES...\n"
						"       planner_bench --schedule [--move-fixed S] [--move-per-mb S] "
						"[--move-gap S] [--added N] [--shards N] [--zipf S] [--seed X] NODES...\n");
			return 2;
		}
	}

	// the driver's gap between a move's end and the next start in its slot
	// (bench/jobs/run measures it) counts as part of each move
	fixed += gap;
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
		double total = 0;
		for (int s = 0; s < shards; ++s) {
			random.shards.push_back(s);
			random.bytes.push_back(static_cast<std::int64_t>(
				100 * kGiB / std::pow(rank[static_cast<std::size_t>(s)], zipf)));
			random.node_of.push_back(static_cast<std::size_t>(rng() % static_cast<unsigned>(k)));
			total += static_cast<double>(random.bytes.back());
		}
		Cluster balanced = random;
		apply_moves(balanced, plan(random, Strategy::by_size, -1, 1).moves);
		Cluster drained = balanced;
		drained.closed.assign(balanced.nodes.size(), 0);
		drained.closed[0] = 1;

		if (schedule) {
			Cluster grown = balanced;
			for (int n = 0; n < added; ++n)
				grown.nodes.push_back("node" + std::to_string(k + n));
			const double per_byte = per_mb / 1e6;
			const std::string name = "add " + std::to_string(added) + " nodes";
			report_schedule(name.c_str(), grown, plan(grown, Strategy::by_size, -1, 1).moves, fixed,
							per_byte, total);
			report_schedule("drain node0", drained,
							plan(drained, Strategy::by_size, -1, 1, true).moves, fixed, per_byte,
							total);
			continue;
		}

		report("random", random, Strategy::by_size, reps);
		report("random", random, Strategy::by_count, reps);
		Cluster grown = balanced;
		grown.nodes.push_back("node" + std::to_string(k));
		report("new node", grown, Strategy::by_size, reps);
		report("new node", grown, Strategy::by_count, reps);
		report("drain", drained, Strategy::by_size, reps);
	}
	return 0;
}
