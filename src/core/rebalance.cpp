// rebalance.cpp — the rebalance planner (rebalance.hpp): checks the input,
// drains the closed nodes, then plans one step at a time over each open
// node's movable shards, sorted by cost.
//
// Cost: the drain sorts the closed nodes' shards once and keeps the open
// nodes in a heap by load, O(log k) a move. Each balancing step sorts the
// nodes and, per source tried, binary-searches its shards for D/2; shards
// already moved are skipped by union-find pointers, so a step never walks
// over them one by one.
#include "rebalance.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

namespace shardid {

namespace {

constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
constexpr std::int64_t kMaxLoad = std::numeric_limits<std::int64_t>::max();

// A shard that may move. Each node's are sorted by cost, then by shard
// number descending: the first of equal cost is the one to move.
struct Candidate {
	std::int64_t cost;
	std::int32_t shard;
	std::size_t index;  // into PlanInput's shard arrays
};

// The planner's arrays, all in the caller's workspace.
struct Work {
	std::size_t *node_order;   // n_nodes: input node indexes, the first k by name, unique
	std::size_t *shard_order;  // n_shards: shard indexes by number, NULL last
	std::size_t *node_of;      // n_shards: each shard's node, 0 .. k-1
	bool *pinned;              // n_shards
	std::int64_t *load;        // n_nodes
	std::size_t *cand_begin;   // n_nodes + 1: node i's are cand[cand_begin[i] .. cand_begin[i+1])
	Candidate *cand;           // n_shards
	std::size_t *run_start;    // n_shards: the first candidate of the same node and cost
	std::size_t *next_free;    // n_shards + 1: see Untaken
	std::size_t *prev_free;    // n_shards + 1
	std::size_t *by_load;      // n_nodes: sources, fullest first (the drain: a heap)
	bool *closed;              // n_nodes: node n (0 .. k-1) takes no shard
	std::size_t *drain;        // n_shards: candidates leaving closed nodes, in turn
};

// Lays Work out in a workspace; with base == nullptr it only measures, so
// plan_workspace_size() and plan_moves() cannot disagree.
class Carver {
  public:
	explicit Carver(void *base) : base_(static_cast<unsigned char *>(base)) {}

	template <typename T> T *take(std::size_t n)
	{
		used_ = (used_ + alignof(T) - 1) / alignof(T) * alignof(T);
		T *p = base_ == nullptr ? nullptr : reinterpret_cast<T *>(base_ + used_);
		used_ += n * sizeof(T);
		return p;
	}

	std::size_t used() const { return used_; }

  private:
	unsigned char *base_;
	std::size_t used_ = 0;
};

Work
carve(Carver &c, std::size_t n_nodes, std::size_t n_shards)
{
	Work w;
	w.node_order = c.take<std::size_t>(n_nodes);
	w.shard_order = c.take<std::size_t>(n_shards);
	w.node_of = c.take<std::size_t>(n_shards);
	w.pinned = c.take<bool>(n_shards);
	w.load = c.take<std::int64_t>(n_nodes);
	w.cand_begin = c.take<std::size_t>(n_nodes + 1);
	w.cand = c.take<Candidate>(n_shards);
	w.run_start = c.take<std::size_t>(n_shards);
	w.next_free = c.take<std::size_t>(n_shards + 1);
	w.prev_free = c.take<std::size_t>(n_shards + 1);
	w.by_load = c.take<std::size_t>(n_nodes);
	w.closed = c.take<bool>(n_nodes);
	w.drain = c.take<std::size_t>(n_shards);
	return w;
}

// Byte order, shorter first on a common prefix: COLLATE "C".
int
compare_names(const NodeName &a, const NodeName &b)
{
	const int c = std::memcmp(a.data, b.data, std::min(a.len, b.len));
	if (c != 0)
		return c;
	return a.len < b.len ? -1 : a.len > b.len ? 1 : 0;
}

PlanError
refusal(PlanError::Kind kind, std::int32_t shard)
{
	return PlanError{kind, shard, false, {0, 0, 0}};
}

// Sorts the non-NULL node names into w.node_order, each once (its first
// occurrence); returns how many.
std::size_t
unique_nodes(const PlanInput &in, const Work &w)
{
	std::size_t k = 0;
	for (std::size_t i = 0; i < in.n_nodes; ++i)
		if (in.nodes[i].data != nullptr)
			w.node_order[k++] = i;
	std::sort(w.node_order, w.node_order + k, [&](std::size_t a, std::size_t b) {
		const int c = compare_names(in.nodes[a], in.nodes[b]);
		return c < 0 || (c == 0 && a < b);
	});
	const auto same = [&](std::size_t a, std::size_t b) {
		return compare_names(in.nodes[a], in.nodes[b]) == 0;
	};
	return static_cast<std::size_t>(std::unique(w.node_order, w.node_order + k, same) -
									w.node_order);
}

// The node (0 .. k-1) of a name, or kNone.
std::size_t
find_node(const PlanInput &in, const Work &w, std::size_t k, const NodeName &name)
{
	if (name.data == nullptr)
		return kNone;
	const std::size_t *begin = w.node_order;
	const std::size_t *end = begin + k;
	const std::size_t *it =
		std::lower_bound(begin, end, name, [&](std::size_t i, const NodeName &n) {
			return compare_names(in.nodes[i], n) < 0;
		});
	if (it == end || compare_names(in.nodes[*it], name) != 0)
		return kNone;
	return static_cast<std::size_t>(it - begin);
}

// The checks of every shard, each reporting the smallest shard number that
// fails it; fills w.shard_order and w.node_of.
PlanError
check_shards(const PlanInput &in, const Work &w, std::size_t k)
{
	const auto is_null = [&](std::size_t i) {
		return in.shard_null != nullptr && in.shard_null[i];
	};
	for (std::size_t i = 0; i < in.n_shards; ++i)
		w.shard_order[i] = i;
	std::sort(w.shard_order, w.shard_order + in.n_shards, [&](std::size_t a, std::size_t b) {
		if (is_null(a) || is_null(b))
			return !is_null(a) && is_null(b);
		return in.shards[a] < in.shards[b];
	});
	for (std::size_t j = 0; j < in.n_shards; ++j) {
		const std::size_t i = w.shard_order[j];
		if (is_null(i))
			return PlanError{PlanError::Kind::shard_repeated, 0, true, {0, 0, 0}};
		if (j > 0 && in.shards[w.shard_order[j - 1]] == in.shards[i])
			return refusal(PlanError::Kind::shard_repeated, in.shards[i]);
	}
	for (std::size_t j = 0; j < in.n_shards; ++j) {
		const std::size_t i = w.shard_order[j];
		w.node_of[i] = find_node(in, w, k, in.shard_nodes[i]);
		if (w.node_of[i] == kNone)
			return refusal(PlanError::Kind::node_not_given, in.shards[i]);
	}
	if (in.strategy == Strategy::by_size)
		for (std::size_t j = 0; j < in.n_shards; ++j) {
			const std::size_t i = w.shard_order[j];
			const bool null = in.bytes_null != nullptr && in.bytes_null[i];
			if ((null && !in.drain_only) || (!null && in.shard_bytes[i] < 0))
				return refusal(PlanError::Kind::size_missing, in.shards[i]);
		}
	return refusal(PlanError::Kind::none, 0);
}

// What a shard weighs in its node's load; a NULL size (drain_only only)
// nothing, as drain_plan()'s sum() skipped it.
std::int64_t
cost_of(const PlanInput &in, std::size_t i)
{
	if (in.strategy == Strategy::by_count)
		return 1;
	return in.bytes_null != nullptr && in.bytes_null[i] ? 0 : in.shard_bytes[i];
}

// Each node's load, every shard counted (pinned too); false when one is
// over 2^63 - 1.
bool
count_loads(const PlanInput &in, const Work &w, std::size_t k)
{
	std::fill(w.load, w.load + k, 0);
	for (std::size_t i = 0; i < in.n_shards; ++i) {
		const std::int64_t c = cost_of(in, i);
		std::int64_t &load = w.load[w.node_of[i]];
		if (c > kMaxLoad - load)
			return false;
		load += c;
	}
	return true;
}

// by_size, floor(total load / (10 k)) over the k_open open nodes; the
// total itself may not fit in 64 bits, so the quotient is summed node by
// node with the remainders carried.
std::int64_t
tolerance(const PlanInput &in, const Work &w, std::size_t k, std::size_t k_open)
{
	if (in.strategy == Strategy::by_count)
		return 0;
	const std::int64_t d = static_cast<std::int64_t>(k_open) * 10;
	std::int64_t quotient = 0;
	std::int64_t remainder = 0;
	for (std::size_t n = 0; n < k; ++n) {
		if (w.closed[n])
			continue;
		quotient += w.load[n] / d;
		remainder += w.load[n] % d;
		if (remainder >= d) {
			quotient += 1;
			remainder -= d;
		}
	}
	return quotient;
}

// Marks the closed nodes (a name closed in any of its entries); returns
// how many of the k are open.
std::size_t
mark_closed(const PlanInput &in, const Work &w, std::size_t k)
{
	std::fill(w.closed, w.closed + k, false);
	if (in.node_closed != nullptr)
		for (std::size_t i = 0; i < in.n_nodes; ++i)
			if (in.node_closed[i] && in.nodes[i].data != nullptr)
				w.closed[find_node(in, w, k, in.nodes[i])] = true;
	return static_cast<std::size_t>(std::count(w.closed, w.closed + k, false));
}

// Marks the shards in in.pinned (all of them if a pin is NULL).
void
mark_pinned(const PlanInput &in, const Work &w)
{
	std::fill(w.pinned, w.pinned + in.n_shards, in.pinned_has_null);
	const std::size_t *begin = w.shard_order;
	const std::size_t *end = begin + in.n_shards;
	for (std::size_t p = 0; p < in.n_pinned; ++p) {
		const std::size_t *it =
			std::lower_bound(begin, end, in.pinned[p], [&](std::size_t i, std::int32_t shard) {
				return in.shards[i] < shard;
			});
		if (it != end && in.shards[*it] == in.pinned[p])
			w.pinned[*it] = true;
	}
}

// Groups the shards that may move by node (w.cand_begin), each node's
// sorted; returns how many.
std::size_t
collect_candidates(const PlanInput &in, const Work &w, std::size_t k)
{
	std::size_t *fill = w.by_load;  // free until the steps begin
	std::fill(w.cand_begin, w.cand_begin + k + 1, 0);
	for (std::size_t i = 0; i < in.n_shards; ++i)
		if (!w.pinned[i])
			++w.cand_begin[w.node_of[i] + 1];
	for (std::size_t n = 0; n < k; ++n) {
		w.cand_begin[n + 1] += w.cand_begin[n];
		fill[n] = w.cand_begin[n];
	}
	for (std::size_t i = 0; i < in.n_shards; ++i)
		if (!w.pinned[i])
			w.cand[fill[w.node_of[i]]++] = Candidate{cost_of(in, i), in.shards[i], i};
	for (std::size_t n = 0; n < k; ++n)
		std::sort(w.cand + w.cand_begin[n], w.cand + w.cand_begin[n + 1],
				  [](const Candidate &a, const Candidate &b) {
					  return a.cost < b.cost || (a.cost == b.cost && a.shard > b.shard);
				  });
	const std::size_t m = w.cand_begin[k];
	for (std::size_t n = 0; n < k; ++n)
		for (std::size_t i = w.cand_begin[n]; i < w.cand_begin[n + 1]; ++i)
			w.run_start[i] = i > w.cand_begin[n] && w.cand[i].cost == w.cand[i - 1].cost
								 ? w.run_start[i - 1]
								 : i;
	return m;
}

// With no node open, the smallest shard that must leave a closed one:
// nowhere to send it. Else none.
PlanError
check_open(const PlanInput &in, const Work &w, std::size_t k_open)
{
	if (k_open == 0)
		for (std::size_t j = 0; j < in.n_shards; ++j) {
			const std::size_t i = w.shard_order[j];
			if (!w.pinned[i] && w.closed[w.node_of[i]]) {
				PlanError e = refusal(PlanError::Kind::no_open_node, in.shards[i]);
				e.node = w.node_order[w.node_of[i]];
				return e;
			}
		}
	return refusal(PlanError::Kind::none, 0);
}

// Lists the candidates of the closed nodes in w.drain, in the order they
// leave: by_size the largest first, a NULL size last (drain_plan()'s
// "bytes DESC NULLS LAST"), then the highest shard number; returns how
// many.
std::size_t
list_drain(const PlanInput &in, const Work &w, std::size_t k)
{
	std::size_t n = 0;
	for (std::size_t node = 0; node < k; ++node)
		if (w.closed[node])
			for (std::size_t p = w.cand_begin[node]; p < w.cand_begin[node + 1]; ++p)
				w.drain[n++] = p;
	const auto sized = [&](std::size_t p) {
		return in.strategy == Strategy::by_size &&
			   !(in.bytes_null != nullptr && in.bytes_null[w.cand[p].index]);
	};
	std::sort(w.drain, w.drain + n, [&](std::size_t a, std::size_t b) {
		const Candidate &x = w.cand[a];
		const Candidate &y = w.cand[b];
		if (sized(a) != sized(b))
			return sized(a);
		if (sized(a) && x.cost != y.cost)
			return x.cost > y.cost;
		return x.shard > y.shard;
	});
	return n;
}

// The candidates not taken yet, as two union-find forests that skip taken
// ones: next[i] leads to the first untaken at or after i (m: none), prev[p]
// to the last untaken before position p (candidate p - 1; 0: none).
class Untaken {
  public:
	Untaken(std::size_t *next, std::size_t *prev, std::size_t m) : next_(next), prev_(prev)
	{
		for (std::size_t i = 0; i <= m; ++i)
			next_[i] = prev_[i] = i;
	}

	std::size_t first_from(std::size_t i) { return root(next_, i); }

	std::size_t last_before(std::size_t i)
	{
		const std::size_t p = root(prev_, i);
		return p == 0 ? kNone : p - 1;
	}

	void take(std::size_t i)
	{
		next_[i] = i + 1;
		prev_[i + 1] = i;
	}

  private:
	static std::size_t root(std::size_t *parent, std::size_t i)
	{
		while (parent[i] != i) {
			parent[i] = parent[parent[i]];
			i = parent[i];
		}
		return i;
	}

	std::size_t *next_;
	std::size_t *prev_;
};

// The candidate of node s a step across gap D (> 0) moves, or kNone: the
// untaken one whose cost c is nearest D/2 with 0 < c and 3c <= 2D, the
// smaller of two as near, the first (highest numbered) of equal cost.
std::size_t
pick(const Work &w, Untaken &untaken, std::size_t s, std::int64_t gap)
{
	const std::size_t first = w.cand_begin[s];
	const std::size_t end = w.cand_begin[s + 1];
	const std::int64_t half_up = gap / 2 + gap % 2;
	const std::uint64_t most = 2 * static_cast<std::uint64_t>(gap) / 3;
	const Candidate *lo =
		std::lower_bound(w.cand + first, w.cand + end, half_up,
						 [](const Candidate &c, std::int64_t cost) { return c.cost < cost; });
	const std::size_t at = static_cast<std::size_t>(lo - w.cand);

	std::size_t above = untaken.first_from(at);
	if (above >= end || static_cast<std::uint64_t>(w.cand[above].cost) > most)
		above = kNone;
	std::size_t below = untaken.last_before(at);
	if (below == kNone || below < first || w.cand[below].cost <= 0)
		below = kNone;
	else
		below = untaken.first_from(w.run_start[below]);

	// below is at least as near as above: D/2 - below <= above - D/2
	if (below != kNone &&
		(above == kNone ||
		 static_cast<std::uint64_t>(gap) <= static_cast<std::uint64_t>(w.cand[above].cost) +
												static_cast<std::uint64_t>(w.cand[below].cost)))
		return below;
	return above;
}

// One step: its source, target and candidate (kNone: no step left).
struct Choice {
	std::size_t source;
	std::size_t target;
	std::size_t candidate;
};

// The first pair of open nodes, sources fullest first and targets emptiest
// first (equal loads: by name), whose gap is over the tolerance and that
// has a shard to move. Only the emptiest target need be tried: the shards
// that fit a gap (0 < c, 3c <= 2D) fit any wider one too, so a source that
// has none for the widest of its gaps has none for the others.
Choice
choose(const Work &w, Untaken &untaken, std::size_t k, std::int64_t tol)
{
	const std::int64_t *load = w.load;
	std::size_t open = 0;
	std::size_t t = kNone;
	for (std::size_t n = 0; n < k; ++n)
		if (!w.closed[n]) {
			w.by_load[open++] = n;
			if (t == kNone || load[n] < load[t])
				t = n;
		}
	std::sort(w.by_load, w.by_load + open, [&](std::size_t a, std::size_t b) {
		return load[a] > load[b] || (load[a] == load[b] && a < b);
	});
	for (std::size_t i = 0; i < open; ++i) {
		const std::size_t s = w.by_load[i];
		const std::int64_t gap = load[s] - load[t];
		if (gap <= tol)
			break;  // nor is any emptier source's
		const std::size_t c = pick(w, untaken, s, gap);
		if (c != kNone)
			return Choice{s, t, c};
	}
	return Choice{kNone, kNone, kNone};
}

// The move of candidate p from node source to node target (0 .. k-1), as
// step done + 1.
Move
move_of(const PlanInput &in, const Work &w, std::size_t p, std::size_t source, std::size_t target,
		std::size_t done)
{
	const Candidate &c = w.cand[p];
	return Move{static_cast<std::int32_t>(done + 1),
				c.shard,
				c.index,
				w.node_order[source],
				w.node_order[target],
				in.shard_bytes[c.index],
				in.bytes_null != nullptr && in.bytes_null[c.index]};
}

// Moves the n_drain shards of w.drain off the closed nodes, each to the
// open node then emptiest (ties: by name, as drain_plan()'s first minimum
// of the names in order), until max_moves; returns how many moved, or
// kNone with the shard in *too_large when the emptiest node cannot take it
// within 2^63 - 1 (nor can any other). Unlike a balancing step, a drain
// can fill a node past the fullest, hence the check.
std::size_t
drain_closed(const PlanInput &in, const Work &w, Untaken &untaken, std::size_t k,
			 std::size_t n_drain, Move *moves, std::int32_t *too_large)
{
	std::int64_t *load = w.load;
	std::size_t *heap = w.by_load;
	std::size_t open = 0;
	for (std::size_t n = 0; n < k; ++n)
		if (!w.closed[n])
			heap[open++] = n;
	// std's heaps put first what no other is ordered after: by "fuller",
	// the emptiest node, the first by name of equal loads
	const auto fuller = [&](std::size_t a, std::size_t b) {
		return load[a] > load[b] || (load[a] == load[b] && a > b);
	};
	std::make_heap(heap, heap + open, fuller);
	std::size_t done = 0;
	for (std::size_t j = 0; j < n_drain; ++j) {
		if (in.max_moves >= 0 &&
			static_cast<std::uint64_t>(done) >= static_cast<std::uint64_t>(in.max_moves))
			break;
		const std::size_t p = w.drain[j];
		const Candidate &c = w.cand[p];
		const std::size_t s = w.node_of[c.index];
		const std::size_t t = heap[0];
		if (c.cost > kMaxLoad - load[t]) {
			*too_large = c.shard;
			return kNone;
		}
		untaken.take(p);
		load[s] -= c.cost;
		load[t] += c.cost;
		std::pop_heap(heap, heap + open, fuller);
		std::push_heap(heap, heap + open, fuller);
		moves[done] = move_of(in, w, p, s, t, done);
		++done;
	}
	return done;
}

}  // namespace

std::size_t
plan_workspace_size(std::size_t n_nodes, std::size_t n_shards) noexcept
{
	Carver measure(nullptr);
	carve(measure, n_nodes, n_shards);
	return measure.used();
}

PlanError
plan_moves(const PlanInput &in, void *workspace, Move *moves, std::size_t *n_moves) noexcept
{
	*n_moves = 0;
	if (in.n_shard_nodes != in.n_shards || in.n_shard_bytes != in.n_shards)
		return PlanError{PlanError::Kind::lengths_differ,
						 0,
						 false,
						 {in.n_shards, in.n_shard_nodes, in.n_shard_bytes}};

	Carver carver(workspace);
	const Work w = carve(carver, in.n_nodes, in.n_shards);
	const std::size_t k = unique_nodes(in, w);
	const PlanError checked = check_shards(in, w, k);
	if (checked.kind != PlanError::Kind::none)
		return checked;
	const std::size_t k_open = mark_closed(in, w, k);
	mark_pinned(in, w);
	const PlanError open = check_open(in, w, k_open);
	if (open.kind != PlanError::Kind::none || k < 2)
		return open;
	if (!count_loads(in, w, k))
		return refusal(PlanError::Kind::load_too_large, 0);
	const std::size_t m = collect_candidates(in, w, k);
	Untaken untaken(w.next_free, w.prev_free, m);

	std::int32_t too_large = 0;
	std::size_t done = drain_closed(in, w, untaken, k, list_drain(in, w, k), moves, &too_large);
	if (done == kNone)
		return refusal(PlanError::Kind::load_too_large, too_large);
	if (in.drain_only || k_open < 2) {
		*n_moves = done;
		return checked;
	}

	// the tolerance of the loads the drain left
	const std::int64_t tol = tolerance(in, w, k, k_open);
	while (in.max_moves < 0 ||
		   static_cast<std::uint64_t>(done) < static_cast<std::uint64_t>(in.max_moves)) {
		const Choice step = choose(w, untaken, k, tol);
		if (step.candidate == kNone)
			break;

		const Candidate &c = w.cand[step.candidate];
		untaken.take(step.candidate);
		w.load[step.source] -= c.cost;
		w.load[step.target] += c.cost;
		moves[done] = move_of(in, w, step.candidate, step.source, step.target, done);
		++done;
	}
	*n_moves = done;
	return checked;
}

}  // namespace shardid
