/*
 * shard_command.cpp — shardid_internal._run_on_shards_command(command, schema,
 * table): what run_on_shards() may run on every copy of a sharded table,
 * read by PostgreSQL's own parser.
 *
 * run_on_shards() runs one statement per copy, as the copy's owner, with
 * no ledger: only what changes no definition the copies must share. It
 * runs GRANT and REVOKE on the table (privileges: a move copies them from
 * the source copy), COMMENT ON the table, a column or a constraint
 * (comments: nothing compares them), and reads (a SELECT without INTO,
 * locking clause or data-modifying WITH). A change of the definition is
 * apply_ddl()'s, which records it and runs it on the template too; rows
 * are written through the application's routing. A statement list, a
 * statement about another object, or a %s anywhere but where the
 * statement names the table is refused.
 *
 * Only the raw parser runs: no catalog lookup, no lock, nothing executed.
 */
#include "shardid_pg.h"
#include "compat.h"
#include "ddl_template.h"

extern "C" {
#include "access/htup_details.h"
#include "funcapi.h"
#include "nodes/nodeFuncs.h"
#include "nodes/parsenodes.h"
#include "parser/parser.h"
#include "tcop/cmdtag.h"
#include "tcop/utility.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(shardid_run_on_shards_command);
}

static const char *const kRuns = "run_on_shards() runs GRANT and REVOKE on the table, COMMENT ON "
								 "the table, a column or a constraint of it, and reads (SELECT ... "
								 "FROM %s).";

/* Refuses a kind of statement run_on_shards() does not run. */
static void
refuse(const char *kind, const char *why, const char *hint)
{
	ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					errmsg("run_on_shards() does not run %s", kind), errdetail("%s", why),
					errhint("%s", hint)));
}

/* Refuses a %s that does not stand where the statement names the table. */
static void
refuse_placement(const char *command, const char *where)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("run_on_shards() command has %%s where the statement does not name the table: "
					"%s",
					command),
			 errdetail("%%s stands for the table %s.", where)));
}

/* Whether a list of String names begins with schema, table. */
static bool
names_table_list(const List *names, const char *schema, const char *table)
{
	return list_length(names) >= 2 && strcmp(strVal(linitial(names)), schema) == 0 &&
		   strcmp(strVal(lsecond(names)), table) == 0;
}

/* What a read's walk over its raw tree found. */
struct ReadWalk
{
	const char *schema;
	const char *table;
	int *locations; /* of the RangeVars that name schema.table */
	int n_locations;
	int max_locations;
	const char *writes; /* the tag of a data-modifying statement inside, if any */
};

/* Collects the table's RangeVars and finds data-modifying statements. */
static bool
read_walker(Node *node, void *context)
{
	ReadWalk *w = (ReadWalk *) context;

	if (node == NULL)
		return false;
	switch (nodeTag(node))
	{
		case T_InsertStmt:
		case T_UpdateStmt:
		case T_DeleteStmt:
		case T_MergeStmt:
			w->writes = GetCommandTagName(CreateCommandTag(node));
			return true;
		case T_RangeVar:
		{
			const RangeVar *rv = (const RangeVar *) node;

			if (ddl_names_table(rv, w->schema, w->table) && w->n_locations < w->max_locations)
				w->locations[w->n_locations++] = rv->location;
			return false;
		}
		default:
			return SHARDID_RAW_TREE_WALK(node, read_walker, context);
	}
}

/* A SELECT: reads only, and %s only where it names the table (FROM %s). */
static void
check_read(const SelectStmt *select, const DdlStatement &st, const char *command,
		   const char *schema, const char *table)
{
	ReadWalk w = {schema, table,          (int *) palloc(sizeof(int) * (st.n_plain + 1)),
				  0,      st.n_plain + 1, NULL};

	if (select->intoClause != NULL)
		refuse("SELECT INTO", "It creates a table.",
			   "Read with a plain SELECT; tables are created with create_table().");
	if (select->lockingClause != NIL)
		refuse("SELECT ... FOR UPDATE or FOR SHARE", "It locks rows: run_on_shards() only reads.",
			   "Leave the locking clause out.");
	if (SHARDID_RAW_TREE_WALK((Node *) select, read_walker, &w))
		refuse(w.writes, "A WITH query that writes rows writes them through no routing.",
			   "Write rows through the application's routing (rows carry their shard).");
	if (st.n_suffixed != 0)
		refuse_placement(command, "in the FROM list of a read");
	for (int i = 0; i < st.n_plain; i++)
	{
		bool found = false;

		for (int k = 0; k < w.n_locations && !found; k++)
			found = w.locations[k] == st.plain[i];
		if (!found)
			refuse_placement(command, "in the FROM list of a read (SELECT count(*) FROM %s)");
	}
}

/* GRANT or REVOKE of privileges on the table itself (columns too). */
static void
check_grant(const GrantStmt *g, const DdlStatement &st, const char *command, const char *schema,
			const char *table)
{
	const char *kind = g->is_grant ? "GRANT" : "REVOKE";

	if (g->targtype != ACL_TARGET_OBJECT || g->objtype != OBJECT_TABLE)
		refuse(g->targtype != ACL_TARGET_OBJECT ? "GRANT ... ON ALL TABLES IN SCHEMA"
												: "GRANT or REVOKE on another kind of object",
			   "Only the table %s stands for gets the privileges, on every copy.",
			   "For example: GRANT SELECT ON %s TO reporting");
	if (list_length(g->objects) != 1 ||
		!ddl_names_table((const RangeVar *) linitial(g->objects), schema, table))
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("%s must name only the table %%s stands for", kind),
						errhint("For example: %s SELECT ON %%s %s reporting", kind,
								g->is_grant ? "TO" : "FROM")));
	if (st.n_suffixed != 0 || st.n_plain != 1 ||
		st.plain[0] != ((const RangeVar *) linitial(g->objects))->location)
		refuse_placement(command, "after ON");
}

/* COMMENT ON the table, one of its columns or one of its constraints. */
static void
check_comment(const CommentStmt *c, const DdlStatement &st, const char *command, const char *schema,
			  const char *table)
{
	const List *names = (const List *) c->object;
	int expect;

	switch (c->objtype)
	{
		case OBJECT_TABLE:
			expect = 2;
			break;
		case OBJECT_COLUMN:
		case OBJECT_TABCONSTRAINT:
			expect = 3;
			break;
		default:
			refuse("COMMENT ON this kind of object",
				   "Only the table's, its columns' and its constraints' comments are set on every "
				   "copy.",
				   "For example: COMMENT ON COLUMN %s.caption IS 'shown under the photo'");
			return;
	}
	/* the parse has no location here: one %s, and the object named is the table */
	if (!IsA(c->object, List) || list_length(names) != expect ||
		!names_table_list(names, schema, table) || st.n_plain != 1 || st.n_suffixed != 0)
		refuse_placement(command,
						 "after COMMENT ON TABLE, COLUMN (%s.column) or CONSTRAINT ... ON");
}

/*
 * _run_on_shards_command(command, schema, table) → (statement, kind, reads):
 * the statement for schema.table (%s replaced as apply_ddl() replaces it),
 * its command tag, and whether it is a read. 42601 for a syntax error or
 * more than one statement, 22023 for %s missing or misplaced, 0A000 for a
 * kind run_on_shards() does not run.
 */
extern "C" Datum
shardid_run_on_shards_command(PG_FUNCTION_ARGS)
{
	char *command = text_to_cstring(PG_GETARG_TEXT_PP(0));
	const char *schema = NameStr(*PG_GETARG_NAME(1));
	const char *table = NameStr(*PG_GETARG_NAME(2));
	DdlStatement st = ddl_substitute(command, schema, table, "run_on_shards()",
									 "GRANT SELECT ON %s TO reporting");
	List *stmts = raw_parser(st.text, RAW_PARSE_DEFAULT);
	TupleDesc desc;
	Datum values[3];
	bool nulls[3] = {false, false, false};
	bool reads = false;
	Node *stmt;

	if (list_length(stmts) != 1)
		ereport(ERROR, (errcode(ERRCODE_SYNTAX_ERROR),
						errmsg("run_on_shards() runs one statement, not %d", list_length(stmts)),
						errhint("Call run_on_shards() once for each statement.")));
	stmt = linitial_node(RawStmt, stmts)->stmt;

	switch (nodeTag(stmt))
	{
		case T_SelectStmt:
			check_read((const SelectStmt *) stmt, st, command, schema, table);
			reads = true;
			break;
		case T_GrantStmt:
			check_grant((const GrantStmt *) stmt, st, command, schema, table);
			break;
		case T_CommentStmt:
			check_comment((const CommentStmt *) stmt, st, command, schema, table);
			break;
		case T_AlterTableStmt:
		case T_IndexStmt:
		case T_DropStmt:
		case T_RenameStmt:
		case T_CreateTrigStmt:
		case T_CreatePolicyStmt:
		case T_AlterPolicyStmt:
			refuse(GetCommandTagName(CreateCommandTag(stmt)),
				   "It changes a definition every copy shares, or may: run without the template "
				   "and without a record, new shards and moved copies would not have it.",
				   "CALL shardid.apply_ddl(template, command) changes the template and every copy, "
				   "recorded and resumable.");
			break;
		case T_InsertStmt:
		case T_UpdateStmt:
		case T_DeleteStmt:
		case T_MergeStmt:
		case T_CopyStmt:
		case T_TruncateStmt:
			refuse(GetCommandTagName(CreateCommandTag(stmt)),
				   "It writes rows, and run_on_shards() keeps no record: an interrupted run "
				   "cannot tell the copies it wrote from the others.",
				   "Write rows through the application's routing (rows carry their shard); "
				   "change definitions with CALL shardid.apply_ddl(template, command).");
			break;
		default:
			refuse(GetCommandTagName(CreateCommandTag(stmt)), kRuns,
				   "Definition changes of a sharded table: CALL shardid.apply_ddl(template, "
				   "command).");
	}

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "_run_on_shards_command() must return a record");
	desc = BlessTupleDesc(desc);
	values[0] = PointerGetDatum(cstring_to_text_with_len(st.text, st.len));
	values[1] = CStringGetTextDatum(GetCommandTagName(CreateCommandTag(stmt)));
	values[2] = BoolGetDatum(reads);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}
