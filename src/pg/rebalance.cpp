/*
 * rebalance.cpp — shardid_internal._plan_moves(): the rebalance planner of
 * src/core/rebalance.cpp as a set-returning SQL function, for
 * shardid_internal._rebalance_moves(), which checks the strategy and max_moves
 * first (_require_rebalance_options()) and returns what this returns: the
 * plans of rebalance_plan() and, with closed nodes and drain_only, of
 * drain_plan().
 *
 * Everything PostgreSQL may fail on happens before the core runs or after
 * it returned: the arrays are read and the workspace and the moves
 * palloc'd first (out of memory is PostgreSQL's error, raised with no C++
 * frame to unwind), the core calls nothing of PostgreSQL, and its refusal
 * is raised once it has returned. The messages are those of the PL/pgSQL
 * planner it replaces, word for word.
 */
#include "shardid_pg.h"

#include "../core/rebalance.hpp"

extern "C" {
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(shardid_plan_moves);
}

/* The elements of an array argument of a built-in element type. */
struct Elements
{
	Datum *values;
	bool *nulls;
	int n;
};

static Elements
array_arg(FunctionCallInfo fcinfo, int arg, Oid elemtype)
{
	Elements e = {NULL, NULL, 0};
	int16 typlen;
	bool typbyval;
	char typalign;

	get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
	deconstruct_array(PG_GETARG_ARRAYTYPE_P(arg), elemtype, typlen, typbyval, typalign, &e.values,
					  &e.nulls, &e.n);
	return e;
}

/* Text elements as the core's node names (data NULL for SQL NULL). */
static shardid::NodeName *
node_names(const Elements &e)
{
	shardid::NodeName *names = (shardid::NodeName *) palloc(sizeof(shardid::NodeName) * (e.n + 1));

	for (int i = 0; i < e.n; i++)
	{
		if (e.nulls[i])
			names[i] = shardid::NodeName{NULL, 0};
		else
		{
			text *t = DatumGetTextPP(e.values[i]);

			names[i] = shardid::NodeName{VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t)};
		}
	}
	return names;
}

/* integer elements, NULLs as 0 (e.nulls tells them apart). */
static int32 *
int32_values(const Elements &e)
{
	int32 *v = (int32 *) palloc(sizeof(int32) * (e.n + 1));

	for (int i = 0; i < e.n; i++)
		v[i] = e.nulls[i] ? 0 : DatumGetInt32(e.values[i]);
	return v;
}

/* bigint elements, NULLs as 0 (e.nulls tells them apart). */
static int64 *
int64_values(const Elements &e)
{
	int64 *v = (int64 *) palloc(sizeof(int64) * (e.n + 1));

	for (int i = 0; i < e.n; i++)
		v[i] = e.nulls[i] ? 0 : DatumGetInt64(e.values[i]);
	return v;
}

/* Raises the SQL error of a refusal of the core; never returns. */
[[noreturn]] static void
report_plan_error(const shardid::PlanError &err, const char *node_name)
{
	using Kind = shardid::PlanError::Kind;

	if (err.kind == Kind::lengths_differ)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("shards, shard_nodes and shard_bytes must have one element per "
							   "shard (%d shards, %d nodes, %d sizes)",
							   (int) err.counts[0], (int) err.counts[1], (int) err.counts[2])));
	if (err.kind == Kind::shard_repeated && err.shard_is_null)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("shard NULL is given more than once")));
	if (err.kind == Kind::shard_repeated)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("shard %d is given more than once", err.shard)));
	if (err.kind == Kind::node_not_given)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("shard %d is on a node that is not given", err.shard)));
	if (err.kind == Kind::size_missing)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("shard %d has no size", err.shard),
						errdetail("by_size needs the size in bytes (0 or more) of every shard.")));
	if (err.kind == Kind::no_open_node)
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						errmsg("no node accepts shards: shard %d cannot leave node \"%s\"",
							   err.shard, node_name),
						errhint("Add a node (shardid.add_node()), or let one accept shards again "
								"(shardid.set_node(node, accepts_shards => true)).")));
	if (err.kind == Kind::load_too_large)
		/* what the PL/pgSQL planner's sum()::bigint raised */
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE), errmsg("bigint out of range")));
	elog(ERROR, "unexpected rebalance planner status %d", (int) err.kind);
	pg_unreachable();
}

/*
 * _plan_moves(strategy, max_moves, nodes, shards, shard_nodes, shard_bytes,
 * pinned, closed, drain_only) → (step, shard, source, target, bytes): the
 * planned moves. NULL max_moves: no limit; NULL pinned: none; closed,
 * parallel to nodes (NULL: every node open; a NULL element: open), the
 * nodes that take no shard and whose shards all leave; drain_only: only
 * those moves (NULL: false).
 */
extern "C" Datum
shardid_plan_moves(PG_FUNCTION_ARGS)
{
	shardid::Strategy strategy;
	char *name = PG_ARGISNULL(0) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(0));

	/* _rebalance_moves() has refused others with _require_rebalance_options() */
	if (name != NULL && strcmp(name, "by_size") == 0)
		strategy = shardid::Strategy::by_size;
	else if (name != NULL && strcmp(name, "by_count") == 0)
		strategy = shardid::Strategy::by_count;
	else
		elog(ERROR, "_plan_moves() needs the strategy by_size or by_count");
	if (!PG_ARGISNULL(1) && PG_GETARG_INT32(1) < 0)
		elog(ERROR, "_plan_moves() needs max_moves NULL or 0 or more");
	for (int arg = 2; arg <= 5; arg++)
		if (PG_ARGISNULL(arg))
			ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
							errmsg("_rebalance_moves() arrays must not be NULL")));

	Elements nodes = array_arg(fcinfo, 2, TEXTOID);
	Elements shards = array_arg(fcinfo, 3, INT4OID);
	Elements shard_nodes = array_arg(fcinfo, 4, TEXTOID);
	Elements bytes = array_arg(fcinfo, 5, INT8OID);
	Elements pinned = PG_ARGISNULL(6) ? Elements{NULL, NULL, 0} : array_arg(fcinfo, 6, INT4OID);
	int32 *pins = (int32 *) palloc(sizeof(int32) * (pinned.n + 1));
	int n_pins = 0;
	bool null_pin = false;

	for (int i = 0; i < pinned.n; i++)
	{
		if (pinned.nulls[i])
			null_pin = true;
		else
			pins[n_pins++] = DatumGetInt32(pinned.values[i]);
	}

	bool *closed = NULL;

	if (!PG_ARGISNULL(7))
	{
		Elements c = array_arg(fcinfo, 7, BOOLOID);

		if (c.n != nodes.n)
			ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							errmsg("closed must have one element per node (%d nodes, %d elements)",
								   nodes.n, c.n)));
		closed = (bool *) palloc(sizeof(bool) * (c.n + 1));
		for (int i = 0; i < c.n; i++)
			closed[i] = !c.nulls[i] && DatumGetBool(c.values[i]);
	}

	const shardid::PlanInput in = {
		strategy,
		PG_ARGISNULL(1) ? -1 : PG_GETARG_INT32(1),
		node_names(nodes),
		(size_t) nodes.n,
		int32_values(shards),
		shards.nulls,
		(size_t) shards.n,
		node_names(shard_nodes),
		(size_t) shard_nodes.n,
		int64_values(bytes),
		bytes.nulls,
		(size_t) bytes.n,
		pins,
		(size_t) n_pins,
		null_pin,
		closed,
		!PG_ARGISNULL(8) && PG_GETARG_BOOL(8),
	};
	void *workspace = MemoryContextAllocHuge(CurrentMemoryContext,
											 shardid::plan_workspace_size(in.n_nodes, in.n_shards));
	shardid::Move *moves = (shardid::Move *) MemoryContextAllocHuge(
		CurrentMemoryContext, sizeof(shardid::Move) * (in.n_shards + 1));
	size_t n_moves = 0;
	shardid::PlanError err = shardid::plan_moves(in, workspace, moves, &n_moves);

	if (err.kind != shardid::PlanError::Kind::none)
		report_plan_error(err, err.kind == shardid::PlanError::Kind::no_open_node &&
									   err.node < (size_t) nodes.n && !nodes.nulls[err.node]
								   ? text_to_cstring(DatumGetTextPP(nodes.values[err.node]))
								   : "?");

	InitMaterializedSRF(fcinfo, 0);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	for (size_t i = 0; i < n_moves; i++)
	{
		const shardid::Move &m = moves[i];
		Datum values[5] = {Int32GetDatum(m.step), Int32GetDatum(m.shard), nodes.values[m.source],
						   nodes.values[m.target], Int64GetDatum(m.bytes)};
		bool nulls[5] = {false, false, false, false, m.bytes_null};

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
