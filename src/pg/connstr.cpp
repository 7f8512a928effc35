/*
 * connstr.cpp — shardid_internal._connstr_options(connstr): a connect string as libpq
 * reads it, for the checks on node connect strings (add_node() and the CHECK
 * on shardid.nodes, in SQL).
 *
 * Parsing with libpq's own PQconninfoParse() rather than a regular
 * expression leaves no spelling unread: quoting, escapes, spacing, URIs with
 * their percent-encoding, and whatever keyword libpq marks as secret (its
 * display character '*': password, sslpassword, and in 18 the OAuth client
 * secret). PQconninfoParse() only parses: it opens no file and no
 * connection, and fills in no defaults.
 */
#include "shardid_pg.h"
#include "compat.h"

extern "C" {
#include "access/htup_details.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

#include "libpq-fe.h"

PG_FUNCTION_INFO_V1(shardid_connstr_options);
}

/*
 * _connstr_options(connstr text) → (keyword, value, secret): every option
 * the string sets, in libpq's order; 22023 with libpq's message if libpq
 * cannot parse it.
 */
extern "C" Datum
shardid_connstr_options(PG_FUNCTION_ARGS)
{
	char *conninfo = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char *libpq_error = NULL;
	PQconninfoOption *parsed = PQconninfoParse(conninfo, &libpq_error);

	if (parsed == NULL)
	{
		char *message = pstrdup(libpq_error != NULL ? libpq_error : "out of memory");
		size_t len = strlen(message);

		if (libpq_error != NULL)
			PQfreemem(libpq_error);
		while (len > 0 && message[len - 1] == '\n')
			message[--len] = '\0';
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s", message)));
	}

	/* libpq's array is malloc'ed: freed whether or not the rows are made */
	PG_TRY();
	{
		InitMaterializedSRF(fcinfo, 0);

		ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

		for (PQconninfoOption *o = parsed; o->keyword != NULL; o++)
		{
			Datum values[3];
			bool nulls[3] = {false, false, false};

			if (o->val == NULL)
				continue;
			values[0] = CStringGetTextDatum(o->keyword);
			values[1] = CStringGetTextDatum(o->val);
			values[2] = BoolGetDatum(o->dispchar != NULL && o->dispchar[0] == '*');
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	PG_FINALLY();
	{
		PQconninfoFree(parsed);
	}
	PG_END_TRY();
	return (Datum) 0;
}
