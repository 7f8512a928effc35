/*
 * ddl_inverse.cpp — shardid_internal._ddl_inverse(statement): what undoes
 * one apply_ddl() statement, read by PostgreSQL's own parser, for
 * abandon_ddl(template, undo => true).
 *
 * A statement has a safe inverse when undoing it loses no data: a CREATE
 * INDEX (its index dropped), an ADD CONSTRAINT of a named constraint (that
 * constraint dropped), a column's SET/DROP DEFAULT and SET STATISTICS (the
 * previous value put back, when the caller can know it). ADD and DROP
 * COLUMN, type changes and the rest have none: their way out is to
 * complete the change. The statement was accepted by _ddl_command()
 * already; this only reads its parse tree.
 *
 * Only the raw parser runs: no catalog lookup, no lock, nothing executed.
 */
#include "shardid_pg.h"

extern "C" {
#include "access/htup_details.h"
#include "funcapi.h"
#include "nodes/parsenodes.h"
#include "parser/parser.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(shardid_ddl_inverse);
}

/* The words a user knows an ALTER TABLE subcommand by, for a refusal. */
static const char *
subcommand_words(AlterTableType t)
{
	switch (t)
	{
		case AT_AddColumn:
			return "ADD COLUMN";
		case AT_DropColumn:
			return "DROP COLUMN";
		case AT_AlterColumnType:
			return "ALTER COLUMN TYPE";
		case AT_SetNotNull:
			return "SET NOT NULL";
		case AT_DropNotNull:
			return "DROP NOT NULL";
		case AT_DropConstraint:
			return "DROP CONSTRAINT";
		case AT_AlterConstraint:
			return "ALTER CONSTRAINT";
		case AT_ValidateConstraint:
			return "VALIDATE CONSTRAINT";
		case AT_SetStorage:
			return "SET STORAGE";
		case AT_SetCompression:
			return "SET COMPRESSION";
		case AT_SetRelOptions:
			return "SET (storage parameters)";
		case AT_ResetRelOptions:
			return "RESET (storage parameters)";
		case AT_ReplicaIdentity:
			return "REPLICA IDENTITY";
		default:
			return "this ALTER TABLE subcommand";
	}
}

/*
 * _ddl_inverse(statement) → (inverse, object_name, what): inverse is
 * DROP INDEX, DROP CONSTRAINT, SET DEFAULT or SET STATISTICS (the
 * previous value of column object_name), NULL when the statement has no
 * safe inverse; what names the statement's change in words.
 */
extern "C" Datum
shardid_ddl_inverse(PG_FUNCTION_ARGS)
{
	char *statement = text_to_cstring(PG_GETARG_TEXT_PP(0));
	List *stmts = raw_parser(statement, RAW_PARSE_DEFAULT);
	TupleDesc desc;
	Datum values[3];
	bool nulls[3] = {true, true, true};
	const char *inverse = NULL;
	const char *name = NULL;
	const char *what = "this statement";
	Node *stmt;

	if (list_length(stmts) != 1)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("_ddl_inverse() reads one statement, not %d", list_length(stmts))));
	stmt = linitial_node(RawStmt, stmts)->stmt;

	switch (nodeTag(stmt))
	{
		case T_IndexStmt:
			inverse = "DROP INDEX";
			name = ((const IndexStmt *) stmt)->idxname;
			what = ((const IndexStmt *) stmt)->unique ? "CREATE UNIQUE INDEX" : "CREATE INDEX";
			break;
		case T_AlterTableStmt:
		{
			const AlterTableStmt *a = (const AlterTableStmt *) stmt;
			const AlterTableCmd *cmd;

			if (list_length(a->cmds) != 1)
			{
				what = "ALTER TABLE with several subcommands";
				break;
			}
			cmd = linitial_node(AlterTableCmd, a->cmds);
			what = subcommand_words(cmd->subtype);
			if (cmd->subtype == AT_AddConstraint && IsA(cmd->def, Constraint))
			{
				what = "ADD CONSTRAINT";
				name = ((const Constraint *) cmd->def)->conname;
				/* an unnamed one has a name of PostgreSQL's choosing per copy */
				if (name != NULL)
					inverse = "DROP CONSTRAINT";
			}
			else if (cmd->subtype == AT_ColumnDefault)
			{
				what = cmd->def != NULL ? "SET DEFAULT" : "DROP DEFAULT";
				inverse = "SET DEFAULT";
				name = cmd->name;
			}
			else if (cmd->subtype == AT_SetStatistics && cmd->name != NULL)
			{
				what = "SET STATISTICS";
				inverse = "SET STATISTICS";
				name = cmd->name;
			}
			break;
		}
		case T_DropStmt:
			what = "DROP INDEX";
			break;
		case T_RenameStmt:
			what = "RENAME";
			break;
		default:
			break;
	}

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "_ddl_inverse() must return a record");
	desc = BlessTupleDesc(desc);
	if (inverse != NULL)
	{
		values[0] = CStringGetTextDatum(inverse);
		nulls[0] = false;
	}
	if (name != NULL)
	{
		values[1] = CStringGetTextDatum(name);
		nulls[1] = false;
	}
	values[2] = CStringGetTextDatum(what);
	nulls[2] = false;
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}
