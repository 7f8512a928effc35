/*
 * ddl_command.cpp — shardid_internal._ddl_command(command, schema, table): what
 * apply_ddl() may run on a sharded table, read by PostgreSQL's own parser.
 *
 * apply_ddl() runs the caller's statement as the table's owner on every
 * node, where its connection is a superuser's. A statement list ("ALTER
 * TABLE ...; RESET ROLE; ...") or a SET ROLE / SET SESSION AUTHORIZATION
 * inside it would leave the owner's rights, so only one statement of a
 * short list of kinds is accepted, and it must name the table it is run
 * for. The parse tree, not the leading keywords, also says whether the
 * statement cannot run in a transaction block (CONCURRENTLY).
 *
 * Only the raw parser runs: no catalog lookup, no lock, nothing executed.
 */
#include "shardid_pg.h"
#include "ddl_template.h"

extern "C" {
#include "access/htup_details.h"
#include "funcapi.h"
#include "nodes/parsenodes.h"
#include "parser/parser.h"
#include "tcop/cmdtag.h"
#include "tcop/utility.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(shardid_ddl_command);
}

/* Refuses a statement apply_ddl() does not run, naming its kind. */
static void
refuse(const char *kind, const char *why)
{
	ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					errmsg("apply_ddl() does not run %s", kind), errdetail("%s", why),
					errhint("apply_ddl() runs ALTER TABLE, CREATE INDEX, DROP INDEX and "
							"ALTER TABLE/INDEX ... RENAME on the sharded table.")));
}

/* Refuses a foreign key, whether ADD CONSTRAINT or a column's REFERENCES. */
static void
refuse_foreign_key()
{
	refuse("ADD FOREIGN KEY", "Shard tables are made LIKE their templates, which copies no "
							  "foreign key: new shards would lack it.");
}

bool
ddl_names_table(const RangeVar *rv, const char *schema, const char *table)
{
	return rv != NULL && rv->schemaname != NULL && rv->catalogname == NULL &&
		   strcmp(rv->schemaname, schema) == 0 && strcmp(rv->relname, table) == 0;
}

/* Refuses a statement that is not about schema.table. */
static void
require_table(const RangeVar *rv, const char *schema, const char *table, const char *kind)
{
	if (!ddl_names_table(rv, schema, table))
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("%s must change the table %%s stands for", kind),
						errdetail("The command names %s%s%s, not the sharded table.",
								  rv != NULL && rv->schemaname != NULL ? rv->schemaname : "",
								  rv != NULL && rv->schemaname != NULL ? "." : "",
								  rv != NULL ? rv->relname : "no table")));
}

/* The ALTER TABLE subcommands a change of every shard's copy may use. */
static void
check_alter_table(const AlterTableStmt *stmt)
{
	ListCell *lc;

	foreach (lc, stmt->cmds)
	{
		const AlterTableCmd *cmd = (const AlterTableCmd *) lfirst(lc);

		switch (cmd->subtype)
		{
			case AT_AddColumn:
			{
				/* ADD COLUMN ... REFERENCES is a foreign key too. */
				ListCell *cc;

				foreach (cc, ((const ColumnDef *) cmd->def)->constraints)
					if (((const Constraint *) lfirst(cc))->contype == CONSTR_FOREIGN)
						refuse_foreign_key();
				break;
			}
			case AT_ColumnDefault:
			case AT_DropNotNull:
			case AT_SetNotNull:
			case AT_SetStatistics:
			case AT_SetStorage:
			case AT_SetCompression:
			case AT_DropColumn:
			case AT_AlterConstraint:
			case AT_ValidateConstraint:
			case AT_DropConstraint:
			case AT_AlterColumnType:
			case AT_SetRelOptions:
			case AT_ResetRelOptions:
			case AT_ReplicaIdentity:
				break;
			case AT_AddConstraint:
				if (IsA(cmd->def, Constraint) &&
					((const Constraint *) cmd->def)->contype == CONSTR_FOREIGN)
					refuse_foreign_key();
				break;
			default:
				refuse(
					"this ALTER TABLE subcommand",
					"Only column, default, NOT NULL, constraint (not FOREIGN KEY), storage, "
					"statistics "
					"and replica identity changes are applied to every shard; owners, privileges, "
					"triggers, row security and partitioning are each shard's own.");
		}
	}
}

/*
 * _ddl_command(command, schema, table) → (kind, concurrently, index_name):
 * command is one statement about schema.table; concurrently says it
 * cannot run in a transaction block; index_name is the index a CREATE
 * INDEX makes or a DROP INDEX of one index drops (NULL otherwise). 42601
 * for a syntax error, 22023 or 0A000 otherwise.
 */
extern "C" Datum
shardid_ddl_command(PG_FUNCTION_ARGS)
{
	char *command = text_to_cstring(PG_GETARG_TEXT_PP(0));
	const char *schema = NameStr(*PG_GETARG_NAME(1));
	const char *table = NameStr(*PG_GETARG_NAME(2));
	List *stmts = raw_parser(command, RAW_PARSE_DEFAULT);
	TupleDesc desc;
	Datum values[3];
	bool nulls[3] = {false, false, true};
	bool concurrently = false;
	const char *index_name = NULL;
	Node *stmt;

	if (list_length(stmts) != 1)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("apply_ddl() runs one statement, not %d", list_length(stmts)),
						errhint("CALL apply_ddl() once for each statement.")));
	stmt = linitial_node(RawStmt, stmts)->stmt;

	switch (nodeTag(stmt))
	{
		case T_AlterTableStmt:
		{
			const AlterTableStmt *a = (const AlterTableStmt *) stmt;

			if (a->objtype != OBJECT_TABLE)
				refuse(GetCommandTagName(CreateCommandTag(stmt)),
					   "Only the sharded table itself is changed.");
			require_table(a->relation, schema, table, "ALTER TABLE");
			check_alter_table(a);
			break;
		}
		case T_IndexStmt:
		{
			const IndexStmt *i = (const IndexStmt *) stmt;

			require_table(i->relation, schema, table, "CREATE INDEX");
			/*
			 * A name of PostgreSQL's choosing may differ from shard to shard,
			 * and a retried build would make a second index.
			 */
			if (i->idxname == NULL)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("apply_ddl() needs CREATE INDEX to name the index"),
						 errdetail(
							 "Every copy gets the same name in its own schema; a re-CALL after an "
							 "interruption finds it there rather than building a second one."),
						 errhint("For example: CREATE INDEX photos_user_id_idx ON %%s (user_id)")));
			concurrently = i->concurrent;
			index_name = i->idxname;
			break;
		}
		case T_DropStmt:
		{
			const DropStmt *d = (const DropStmt *) stmt;
			ListCell *lc;

			if (d->removeType != OBJECT_INDEX)
				refuse(GetCommandTagName(CreateCommandTag(stmt)),
					   "Only indexes are dropped from every shard.");
			foreach (lc, d->objects)
			{
				List *qualified = (List *) lfirst(lc);

				if (list_length(qualified) != 2 || strcmp(strVal(linitial(qualified)), schema) != 0)
					ereport(
						ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("DROP INDEX must name indexes in the schema of the table %%s "
								"stands for"),
						 errhint(
							 "Write the index name after %%s, e.g. DROP INDEX %%s_user_id_idx.")));
			}
			concurrently = d->concurrent;
			/* the one index a DROP INDEX of one index names */
			if (list_length(d->objects) == 1)
				index_name = strVal(llast((List *) linitial(d->objects)));
			break;
		}
		case T_RenameStmt:
		{
			const RenameStmt *r = (const RenameStmt *) stmt;

			switch (r->renameType)
			{
				case OBJECT_COLUMN:
				case OBJECT_TABCONSTRAINT:
					require_table(r->relation, schema, table, "RENAME");
					break;
				case OBJECT_INDEX:
					if (r->relation == NULL || r->relation->schemaname == NULL ||
						strcmp(r->relation->schemaname, schema) != 0)
						ereport(
							ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("ALTER INDEX must name an index in the schema of the table %%s "
									"stands for"),
							 errhint("Write the index name after %%s, e.g. ALTER INDEX "
									 "%%s_user_id_idx RENAME TO ...")));
					break;
				default:
					refuse("this RENAME",
						   "A sharded table keeps its name (it is registered by name); its "
						   "columns, constraints and indexes may be renamed.");
			}
			break;
		}
		default:
			refuse(GetCommandTagName(CreateCommandTag(stmt)),
				   "It is not a change of one sharded table.");
	}

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "_ddl_command() must return a record");
	desc = BlessTupleDesc(desc);
	values[0] = CStringGetTextDatum(GetCommandTagName(CreateCommandTag(stmt)));
	values[1] = BoolGetDatum(concurrently);
	if (index_name != NULL)
	{
		values[2] = CStringGetTextDatum(index_name);
		nulls[2] = false;
	}
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}
