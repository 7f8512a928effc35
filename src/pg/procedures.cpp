/*
 * procedures.cpp — what shardid's batch procedures (create_shards_proc,
 * create_table_proc) need to know and SQL cannot tell them.
 *
 * A procedure that COMMITs works only when CALLed on its own: not inside
 * BEGIN ... COMMIT, a function, a multi-statement query string or a block
 * with an EXCEPTION clause. Otherwise its first COMMIT fails with PostgreSQL's
 * bare "invalid transaction termination", after work that is then rolled
 * back. The procedures ask first and refuse with their own message.
 */
#include "shardid_pg.h"

extern "C" {
#include "executor/spi.h"

PG_FUNCTION_INFO_V1(shardid_commit_allowed);
}

/*
 * _commit_allowed() — whether the PL/pgSQL procedure whose statement calls
 * this may COMMIT. The caller's SPI connection is the procedure's: this
 * function opens none, so SPI answers exactly what SPI_commit() would check.
 */
extern "C" Datum
shardid_commit_allowed(PG_FUNCTION_ARGS)
{
	(void) fcinfo;
	PG_RETURN_BOOL(SPI_inside_nonatomic_context());
}
