-- What run_on_shards() may run on every copy of a sharded table, read by
-- PostgreSQL's parser (src/pg/shard_command.cpp): the statement for
-- schema.table (%s replaced as for apply_ddl(), src/pg/ddl_template.cpp),
-- its command tag, and whether it is a read. GRANT and REVOKE on the
-- table, COMMENT ON the table, a column or a constraint, and SELECT
-- (without INTO, locking clause or a WITH that writes); 0A000 for other
-- kinds (a definition change: apply_ddl(); rows: the application), 42601
-- for a syntax error or more than one statement, 22023 for %s missing or
-- where the statement does not name the table.
CREATE OR REPLACE FUNCTION shardid_internal._run_on_shards_command(command text, schema_name name, table_name name,
                                                                   OUT statement text, OUT kind text, OUT reads boolean)
    LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_run_on_shards_command';

COMMENT ON FUNCTION shardid_internal._run_on_shards_command(text, name, name) IS
    'Internal: run_on_shards(): the statement for schema.table (%s replaced), its command tag and whether it reads; refuses (0A000) what is not GRANT/REVOKE on the table, COMMENT ON it, its column or constraint, or a read; 42601 or 22023 for a statement list, a syntax error, %s missing or misplaced.';
