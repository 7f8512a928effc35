// rebalance.hpp — the rebalance planner, pure: from the nodes, the node each
// shard counts on and its size, the moves that even out the nodes' load.
// shardid_internal._rebalance_moves() calls it through _plan_moves()
// (src/pg/rebalance.cpp); it reads no table and reaches no node.
//
// A node's load is, by_size, the total bytes of the shards it holds; by_count,
// their number (each shard costs 1). One step moves a shard of cost c from a
// node s to a node t where, with D = load(s) - load(t):
//   D > tolerance: by_size a tenth of the average node's load (nodes that
//       close are balanced enough: sizes drift with every write, and a move
//       is not free); by_count 0;
//   0 < c and 3c <= 2D: the gap between s and t narrows by at least c, so a
//       big shard is not moved for a small gain; and since c < D, both new
//       loads lie strictly between the old ones: no node ends fuller than
//       the fullest was or emptier than the emptiest was, and the sum of
//       squared loads strictly falls. No step makes the balance worse and
//       no sequence of steps comes back to a placement it left.
// Which step (deterministic): sources from the fullest node down, targets
// from the emptiest up (equal loads: node names in byte order), the first
// pair that has such a shard; its shard whose cost is nearest D/2 (the
// largest narrowing), then the smaller, then the highest shard number (the
// choice of the count-based planner before 0.2, so by_count plans what it
// planned). A shard moves at most once in a plan. Pinned shards (in a move,
// frozen, or excluded by the caller) load the node given for them but never
// move. The plan ends when no pair has such a shard, or after max_moves.
//
// Closed nodes (PlanInput::node_closed: a node being drained, or one that
// is to take no more shards; Citus's shouldhaveshards = false) never
// receive a shard, and every movable shard on them leaves first, in the
// order of drain_plan()'s loop, which this replaces: largest first by_size
// (NULL sizes last), else highest-numbered first, each to the open node
// that is then the emptiest (equal loads: by name), loads counted as
// above. These moves need no gap and no bound on c: the shard must go. The
// shards of several closed nodes go in one order, the largest first while
// the open nodes are most alike, as greedy bin packing fills bins best.
// With drain_only (Citus's drainOnly) the plan ends there; otherwise the
// steps above follow among the open nodes: closed nodes are neither
// sources nor targets and their load is not in the average, and the
// tolerance is taken once the drain is done. Drained shards, having moved,
// move no more; max_moves counts every move. With no node closed the plan
// is the one described above, unchanged.
//
// The planner allocates nothing: the caller gives it a workspace of
// plan_workspace_size() bytes and room for one Move per shard (a shard
// moves at most once), so running out of memory is the caller's error to
// raise, before any of this runs. Every function is noexcept; invalid input
// is reported as a PlanError carrying the values its message names.
#pragma once

#include <cstddef>
#include <cstdint>

namespace shardid {

enum class Strategy : std::uint8_t {
	by_size,   // load = total bytes; shards need a size
	by_count,  // load = number of shards; sizes are only reported
};

// A node name: bytes compared in byte order (COLLATE "C"), not
// NUL-terminated; data == nullptr stands for SQL NULL.
struct NodeName {
	const char *data;
	std::size_t len;
};

// The planner's input: parallel arrays, as SQL passes them. Shard i is
// shards[i] on shard_nodes[i], of shard_bytes[i] bytes; the *_null arrays
// (nullptr: no NULLs) mark SQL NULLs.
struct PlanInput {
	Strategy strategy;
	std::int64_t max_moves;  // the most moves to plan; negative: no limit
	// every node that takes part, in any order; NULLs and repeats ignored
	const NodeName *nodes;
	std::size_t n_nodes;
	const std::int32_t *shards;
	const bool *shard_null;
	std::size_t n_shards;
	const NodeName *shard_nodes;
	std::size_t n_shard_nodes;
	const std::int64_t *shard_bytes;
	const bool *bytes_null;
	std::size_t n_shard_bytes;
	// shards that count where they are but never move; a NULL among them
	// (pinned_has_null) pins every shard, as SQL's "shard <> ALL (pinned)"
	// is never true then
	const std::int32_t *pinned;
	std::size_t n_pinned;
	bool pinned_has_null;
	// parallel to nodes: true closes a node (no shard goes to it, its
	// movable shards all leave); nullptr: every node is open. A name given
	// more than once is closed if any of its entries is.
	const bool *node_closed = nullptr;
	// plan only the moves off closed nodes, none to even out the others.
	// by_size then takes a NULL size too (the shard weighs 0 and leaves
	// last), as drain_plan() did with a shard whose size no node reported.
	bool drain_only = false;
};

// One planned move; source and target index PlanInput::nodes (the first of
// a name given more than once).
struct Move {
	std::int32_t step;  // 1, 2, ... in the order the moves are to be made
	std::int32_t shard;
	std::size_t shard_index;  // into PlanInput's shard arrays
	std::size_t source;
	std::size_t target;
	std::int64_t bytes;  // the shard's shard_bytes, as given
	bool bytes_null;
};

// Why the planner refused its input, in the order it checks; the glue
// words each as the SQL error.
struct PlanError {
	enum class Kind : std::uint8_t {
		none,
		lengths_differ,  // counts = {n_shards, n_shard_nodes, n_shard_bytes}
		shard_repeated,  // the smallest shard given twice, or NULL (shard_is_null)
		node_not_given,  // the smallest shard whose node is NULL or not in nodes
		// by_size: the smallest shard whose size is negative, or NULL (but
		// for drain_only)
		size_missing,
		// every node is closed and a shard must leave one: the smallest such
		// shard, and its node
		no_open_node,
		// by_size, two nodes or more: a node's load is over 2^63 - 1, or
		// would be with a drained shard (shard: that one; else 0)
		load_too_large,
	};
	Kind kind;
	std::int32_t shard;
	bool shard_is_null;
	std::size_t counts[3];
	std::size_t node = 0;  // no_open_node: index into PlanInput::nodes
};

// Bytes of workspace plan_moves() needs for these many nodes and shards
// (PlanInput::n_nodes, n_shards).
std::size_t plan_workspace_size(std::size_t n_nodes, std::size_t n_shards) noexcept;

// Plans the moves: on success (kind none) writes them to moves[0 ..
// *n_moves), which has room for in.n_shards; workspace is
// plan_workspace_size(in.n_nodes, in.n_shards) bytes, aligned for any
// scalar type (malloc's or palloc's alignment). With fewer than two nodes
// the input is still checked (no_open_node too), and the plan is empty.
PlanError plan_moves(const PlanInput &in, void *workspace, Move *moves,
					 std::size_t *n_moves) noexcept;

}  // namespace shardid
