/*
 * run_as.cpp — shardid_internal._run_as_owner(role, sql, replica): one statement of
 * shardid's run as the role that owns what it touches, never as the
 * superuser who called it.
 *
 * A move writes, empties and counts the rows of tables that tenants own,
 * and that runs their code: triggers, CHECK constraints, index expressions,
 * defaults, domains, policies. Run as a superuser, that code has a
 * superuser's rights, and SET ROLE is no fence: code running under SET ROLE
 * in a superuser's session may SET ROLE back. So this does what PostgreSQL
 * does when it runs a table owner's code in a maintenance command (CREATE
 * INDEX, ANALYZE, REFRESH MATERIALIZED VIEW) and 16's logical replication
 * (SwitchToUntrustedUser): the statement runs with the owner's identity in
 * a security-restricted operation, so it may not change the role or the
 * session authorization, make temporary objects, hold cursors or queue
 * deferred triggers that would fire after it, as the caller; every setting
 * it changes is undone when it returns. search_path is pinned to
 * pg_catalog, pg_temp; replica sets session_replication_role = replica
 * (ordinary and foreign-key triggers off, ENABLE ALWAYS and ENABLE REPLICA
 * ones fire as the owner, as in logical replication's apply).
 *
 * Errors need no cleanup here: a (sub)transaction abort restores the user,
 * the security context and the settings.
 */
#include "shardid_pg.h"

extern "C" {
#include "access/xact.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/syscache.h"

PG_FUNCTION_INFO_V1(shardid_run_as_owner);
PG_FUNCTION_INFO_V1(shardid_run_as_owner_read);
}

/*
 * The fence: sql run as role (see the file header); replica with
 * session_replication_role = replica; read_only in a read-only state of
 * the transaction (XactReadOnly, as SET TRANSACTION READ ONLY), so that
 * nothing it calls may write (setval() and nextval() included), restored
 * after it (a subtransaction's abort restores it too). Returns the first
 * value of the statement's first row, or NULL.
 */
static text *
run_as_owner(Oid role, char *sql, bool replica, bool read_only)
{
	MemoryContext caller_context = CurrentMemoryContext;
	bool save_read_only = XactReadOnly;
	text *result = NULL;
	Oid save_userid;
	int save_sec_context;
	int save_nestlevel;
	int rc;

	/* regrole accepts '-' and numbers: OID 0, or a dropped role's */
	if (!OidIsValid(role) || !SearchSysCacheExists1(AUTHOID, ObjectIdGetDatum(role)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT), errmsg("role with OID %u does not exist", role),
				 errhint("Pass the role that owns what the statement touches.")));
	if (!has_privs_of_role(GetUserId(), role))
		ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
						errmsg("permission denied to run a statement as role \"%s\"",
							   GetUserNameFromId(role, false))));
	if (replica && !superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to run a statement with session_replication_role = "
						"replica"),
				 errdetail("Only a superuser may turn triggers off.")));

	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	/* settings first, while still the caller: session_replication_role is SUSET */
	save_nestlevel = NewGUCNestLevel();
	(void) set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	if (replica)
		(void) set_config_option("session_replication_role", "replica", PGC_SUSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
	SetUserIdAndSecContext(role, save_sec_context | SECURITY_LOCAL_USERID_CHANGE |
									 SECURITY_RESTRICTED_OPERATION);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "shardid: SPI_connect failed");
	if (read_only)
		XactReadOnly = true;
	rc = SPI_execute(sql, false, 0);
	if (rc == SPI_ERROR_TRANSACTION)
		ereport(
			ERROR,
			(errcode(ERRCODE_INVALID_TRANSACTION_TERMINATION),
			 errmsg("shardid: _run_as_owner() runs no transaction control statement"),
			 errdetail("COMMIT, ROLLBACK, SAVEPOINT, BEGIN and their kin would end or split the "
					   "caller's transaction, outside the fence."),
			 errhint("Run the statement without them; the caller's transaction commits it.")));
	if (rc == SPI_ERROR_COPY)
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						errmsg("shardid: _run_as_owner() runs no COPY from or to the client")));
	if (rc < 0)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("shardid: _run_as_owner() cannot run this statement: %s",
							   SPI_result_code_string(rc))));
	if (SPI_tuptable != NULL && SPI_processed > 0 && SPI_tuptable->tupdesc->natts > 0)
	{
		char *value = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);

		if (value != NULL)
		{
			MemoryContext spi_context = MemoryContextSwitchTo(caller_context);

			result = cstring_to_text(value);
			MemoryContextSwitchTo(spi_context);
		}
	}
	SPI_finish();
	XactReadOnly = save_read_only;

	AtEOXact_GUC(false, save_nestlevel);
	SetUserIdAndSecContext(save_userid, save_sec_context);
	return result;
}

/*
 * _run_as_owner(role regrole, sql text, replica boolean) → text: the first
 * value of the statement's first row (NULL if none). The caller must have
 * the privileges of role (a superuser has), so this lets it do nothing SET
 * ROLE would not, but in the fence; replica (a superuser's setting, which
 * turns foreign-key triggers off) needs a superuser.
 */
extern "C" Datum
shardid_run_as_owner(PG_FUNCTION_ARGS)
{
	text *result = run_as_owner(PG_GETARG_OID(0), text_to_cstring(PG_GETARG_TEXT_PP(1)),
								PG_GETARG_BOOL(2), false);

	if (result == NULL)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(result);
}

/*
 * _run_as_owner_read(role regrole, sql text) → text: the same fence for a
 * read (run_on_shards()): the statement runs read-only, so a "read" that
 * writes through a function is refused (25006).
 */
extern "C" Datum
shardid_run_as_owner_read(PG_FUNCTION_ARGS)
{
	text *result =
		run_as_owner(PG_GETARG_OID(0), text_to_cstring(PG_GETARG_TEXT_PP(1)), false, true);

	if (result == NULL)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(result);
}
