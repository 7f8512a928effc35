-- What apply_ddl() may run, read by PostgreSQL's parser (src/pg/ddl_command.cpp):
-- one statement about schema.table, of a kind that changes every shard's
-- copy alike; concurrent when it cannot run in a transaction block;
-- index_name the index it makes or drops (CREATE INDEX, DROP INDEX of one).
CREATE OR REPLACE FUNCTION shardid_internal._ddl_command(command text, schema_name name, table_name name,
                                               OUT kind text, OUT concurrent boolean, OUT index_name text)
    LANGUAGE c STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_ddl_command';

COMMENT ON FUNCTION shardid_internal._ddl_command(text, name, name) IS
    'apply_ddl(): parses a command for schema.table; refuses more than one statement, another table, or a kind it does not run; returns the command tag, whether it cannot run in a transaction block, and the index a CREATE INDEX makes or a DROP INDEX of one index drops.';
