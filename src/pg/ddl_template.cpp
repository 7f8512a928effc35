/*
 * ddl_template.cpp — shardid_internal._ddl_template(command, schema, table):
 * apply_ddl()'s command with %s replaced by one table's name, by what the
 * SQL means, not by its text. The replacement itself (ddl_substitute(),
 * ddl_template.h) is run_on_shards()'s too, which checks where each %s
 * landed for the statements it runs (shard_command.cpp).
 *
 * The core scanner (src/core/ddl_template.cpp) finds the %s that stand
 * outside string literals, dollar quotes, quoted identifiers and comments
 * (one inside a literal or a quoted identifier is refused: it would put
 * a different text or name into every copy). Each becomes the table's
 * qualified name, quoted as PostgreSQL quotes identifiers, or, with a
 * suffix (%s_user_id_idx), the qualified name of an index named after the
 * table (its name and the suffix, folded to lower case as the parser folds
 * an unquoted name, quoted as one identifier: "Pics" gives
 * public."Pics_uid_idx"). Then PostgreSQL's raw parser checks that each
 * %s stands where the statement names the table it changes (ALTER TABLE
 * %s, CREATE INDEX ... ON %s, RENAME of its column or constraint) or an
 * index named after it (DROP INDEX %s_suffix, ALTER INDEX %s_suffix ...
 * RENAME): by the parse tree's locations, so %s anywhere else (a column
 * reference, an expression) is refused. What kind of statement it is,
 * and which kinds run, is _ddl_command()'s to say.
 *
 * Only the raw parser runs: no catalog lookup, no lock, nothing executed.
 */
#include "shardid_pg.h"
#include "ddl_template.h"

extern "C" {
#include "lib/stringinfo.h"
#include "nodes/parsenodes.h"
#include "parser/parser.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(shardid_ddl_template);
}

/* The refusal of a command whose %s does not stand for the table. */
static void
refuse_placement(const char *command)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("apply_ddl() command has %%s where the statement does not name the table it "
					"changes: %s",
					command),
			 errdetail("%%s stands for the table the statement changes (ALTER TABLE %%s, CREATE "
					   "INDEX ... ON %%s) and, as %%s_suffix, for an index named after it (DROP "
					   "INDEX %%s_suffix)."),
			 errhint("Name columns and other objects without %%s.")));
}

/*
 * The raw parse of statement, NIL for a syntax error: that is
 * _ddl_command()'s to raise, which apply_ddl() reports with the statement.
 * The raw parser holds nothing but memory.
 */
static List *
try_parse(const char *statement)
{
	MemoryContext context = CurrentMemoryContext;
	List *volatile stmts = NIL;

	PG_TRY();
	{
		stmts = raw_parser(statement, RAW_PARSE_DEFAULT);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(context);
		FlushErrorState();
		stmts = NIL;
	}
	PG_END_TRY();
	return stmts;
}

/*
 * Whether the statement's own table, and only it, is where the %s stand:
 * plain (no suffix) at the offsets in plain[], suffixed at suffixed[].
 */
static void
check_placement(const char *statement, const char *command, const int *plain, int n_plain,
				const int *suffixed, int n_suffixed)
{
	List *stmts = try_parse(statement);
	Node *stmt;
	const RangeVar *rel = NULL;
	bool index_named = false;

	/* more than one statement, or none: _ddl_command() says so */
	if (list_length(stmts) != 1)
		return;
	stmt = linitial_node(RawStmt, stmts)->stmt;
	switch (nodeTag(stmt))
	{
		case T_AlterTableStmt:
			rel = ((const AlterTableStmt *) stmt)->relation;
			break;
		case T_IndexStmt:
			rel = ((const IndexStmt *) stmt)->relation;
			break;
		case T_RenameStmt:
			rel = ((const RenameStmt *) stmt)->relation;
			index_named = ((const RenameStmt *) stmt)->renameType == OBJECT_INDEX;
			break;
		case T_DropStmt:
			/* DROP INDEX %s_a, %s_b: one suffixed %s per index, no plain one */
			if (((const DropStmt *) stmt)->removeType == OBJECT_INDEX &&
				(n_plain != 0 || n_suffixed != list_length(((const DropStmt *) stmt)->objects)))
				refuse_placement(command);
			return;
		default:
			/* a kind apply_ddl() does not run: _ddl_command() refuses it */
			return;
	}
	if (rel == NULL)
		return;
	if (index_named ? (n_plain != 0 || n_suffixed != 1 || suffixed[0] != rel->location)
					: (n_suffixed != 0 || n_plain != 1 || plain[0] != rel->location))
		refuse_placement(command);
}

/*
 * The statement for one table (see ddl_template.h): caller names the
 * function in errors ("apply_ddl()"), example is the hint's statement for
 * a command without %s.
 */
DdlStatement
ddl_substitute(const char *command, const char *schema, const char *table, const char *caller,
			   const char *example)
{
	const size_t len = strlen(command);
	shardid::DdlPiece *pieces = (shardid::DdlPiece *) palloc(sizeof(shardid::DdlPiece) * (len + 1));
	DdlStatement st;
	size_t n = 0;
	size_t error_pos = 0;
	StringInfoData out;
	shardid::DdlTemplateStatus status;

	st.plain = (int *) palloc(sizeof(int) * (len + 1));
	st.suffixed = (int *) palloc(sizeof(int) * (len + 1));
	st.n_plain = 0;
	st.n_suffixed = 0;
	status = shardid::scan_ddl_template(command, len, pieces, &n, &error_pos);
	switch (status)
	{
		case shardid::DdlTemplateStatus::ok:
			break;
		case shardid::DdlTemplateStatus::no_placeholder:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s command has no %%s: %s", caller, command),
					 errdetail("%%s stands for each table's schema-qualified name (the template, "
							   "then each shard's copy)."),
					 errhint("For example: %s", example)));
			break;
		case shardid::DdlTemplateStatus::placeholder_in_string:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s command has %%s inside a string literal: %s", caller, command),
					 errdetail("%%s stands for the table's name only where the statement names "
							   "the table; in a literal every copy would get a different text "
							   "(at byte %zu).",
							   error_pos + 1),
					 errhint("Write a literal %%s as %%%%s.")));
			break;
		case shardid::DdlTemplateStatus::placeholder_in_identifier:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s command has %%s inside a quoted identifier: %s", caller, command),
					 errdetail("%%s stands for the table's name only where the statement names "
							   "the table; in a quoted name every copy would name its object "
							   "after its own table (at byte %zu).",
							   error_pos + 1)));
			break;
		case shardid::DdlTemplateStatus::unterminated:
			ereport(ERROR, (errcode(ERRCODE_SYNTAX_ERROR),
							errmsg("%s command has an unterminated quoted string, "
								   "quoted identifier or comment: %s",
								   caller, command),
							errdetail("It opens at byte %zu.", error_pos + 1)));
			break;
	}

	initStringInfo(&out);
	for (size_t i = 0; i < n; i++)
	{
		const shardid::DdlPiece &p = pieces[i];

		if (p.kind == shardid::DdlPieceKind::text)
		{
			appendBinaryStringInfo(&out, command + p.start, (int) p.len);
			continue;
		}
		if (p.len == 0)
		{
			st.plain[st.n_plain++] = out.len;
			appendStringInfo(&out, "%s.%s", quote_identifier(schema), quote_identifier(table));
		}
		else
		{
			StringInfoData name;

			initStringInfo(&name);
			appendStringInfoString(&name, table);
			/* the suffix is unquoted SQL: folded to lower case, as the parser does */
			for (size_t k = 0; k < p.len; k++)
			{
				char c = command[p.start + k];

				appendStringInfoChar(&name, (c >= 'A' && c <= 'Z') ? (char) (c - 'A' + 'a') : c);
			}
			st.suffixed[st.n_suffixed++] = out.len;
			appendStringInfo(&out, "%s.%s", quote_identifier(schema), quote_identifier(name.data));
		}
	}
	st.text = out.data;
	st.len = out.len;
	return st;
}

/*
 * _ddl_template(command text, schema_name name, table_name name) → text:
 * the statement for one table. 22023 for a command without %s, with %s
 * in a literal, a quoted identifier or where the table is not named,
 * 42601 for an unterminated quote or comment.
 */
extern "C" Datum
shardid_ddl_template(PG_FUNCTION_ARGS)
{
	char *command = text_to_cstring(PG_GETARG_TEXT_PP(0));
	DdlStatement st =
		ddl_substitute(command, NameStr(*PG_GETARG_NAME(1)), NameStr(*PG_GETARG_NAME(2)),
					   "apply_ddl()", "ALTER TABLE %s ADD COLUMN mood text");

	check_placement(st.text, command, st.plain, st.n_plain, st.suffixed, st.n_suffixed);
	PG_RETURN_TEXT_P(cstring_to_text_with_len(st.text, st.len));
}
