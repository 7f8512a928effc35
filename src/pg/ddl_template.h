/*
 * ddl_template.h — a command's %s replaced by one table's name
 * (ddl_template.cpp), shared by apply_ddl()'s _ddl_template() and
 * run_on_shards()'s _run_on_shards_command(), and the test both parsers'
 * checks make of a parsed table name (ddl_command.cpp).
 */
#pragma once

struct RangeVar;

/* Whether a parsed RangeVar names schema.table exactly (ddl_command.cpp). */
bool ddl_names_table(const RangeVar *rv, const char *schema, const char *table);

/*
 * The statement for one table: the command with each %s outside literals,
 * quoted identifiers and comments replaced by the table's qualified name
 * (%s_suffix: an index named after it), and where each landed: plain[]
 * and suffixed[] hold byte offsets into text, for the parse tree's
 * locations to be checked against.
 */
struct DdlStatement
{
	char *text;
	int len;
	int *plain;
	int n_plain;
	int *suffixed;
	int n_suffixed;
};

/*
 * Replaces the %s of command for schema.table; 22023 for a command without
 * %s or with one inside a literal or a quoted identifier, 42601 for an
 * unterminated quote or comment. caller names the function in the errors,
 * example is the hint's statement for a command without %s.
 */
DdlStatement ddl_substitute(const char *command, const char *schema, const char *table,
							const char *caller, const char *example);
