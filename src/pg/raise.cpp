/*
 * raise.cpp — _raise(): an error that shardid's SQL composed or captured,
 * raised as the error of the call the user made, without CONTEXT lines.
 *
 * move_shard() captures the error of a step (GET STACKED DIAGNOSTICS),
 * rolls the move back, then raises it again. PL/pgSQL's RAISE cannot leave
 * out an empty DETAIL or HINT, and a PL/pgSQL helper adds its own frame and
 * the statement that called it to the error's CONTEXT: lines that name
 * shardid's internals rather than anything the user wrote. This raises
 * with no error context at all: the message, detail and hint say it.
 */
#include "shardid_pg.h"

extern "C" {
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(shardid_raise);
}

/* A text argument as a C string; NULL for NULL or ''. */
static const char *
optional_text(FunctionCallInfo fcinfo, int arg)
{
	if (PG_ARGISNULL(arg))
		return NULL;
	const char *s = text_to_cstring(PG_GETARG_TEXT_PP(arg));
	return *s ? s : NULL;
}

/*
 * _raise(sqlstate, message, detail, hint) — raises the error, leaving out an
 * empty detail or hint. The error context stack is emptied first: whoever
 * catches the error (a PL/pgSQL exception block, the top level) restores
 * its own, as it does after every error.
 */
extern "C" Datum
shardid_raise(PG_FUNCTION_ARGS)
{
	const char *state = optional_text(fcinfo, 0);
	const char *message = optional_text(fcinfo, 1);
	const char *detail = optional_text(fcinfo, 2);
	const char *hint = optional_text(fcinfo, 3);

	if (state == NULL || strlen(state) != 5 ||
		strspn(state, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ") != 5)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("invalid SQLSTATE code \"%s\"", state ? state : "")));
	error_context_stack = NULL;
	ereport(ERROR, (errcode(MAKE_SQLSTATE(state[0], state[1], state[2], state[3], state[4])),
					errmsg_internal("%s", message ? message : "unknown error"),
					detail ? errdetail_internal("%s", detail) : 0, hint ? errhint("%s", hint) : 0));
	PG_RETURN_VOID();
}
