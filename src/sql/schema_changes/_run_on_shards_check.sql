-- run_on_shards(): the statement for one table, checked by the parser
-- (_run_on_shards_command), with its kind and whether it reads. A syntax
-- error is reported with the statement (the parser's position would point
-- into this function's query).
CREATE OR REPLACE FUNCTION shardid_internal._run_on_shards_check(command text, schema_name name, table_name name,
                                                                 OUT statement text, OUT kind text, OUT reads boolean)
    LANGUAGE plpgsql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    msg text;
BEGIN
    SELECT c.statement, c.kind, c.reads INTO statement, kind, reads
      FROM shardid_internal._run_on_shards_command(command, schema_name, table_name) AS c;
EXCEPTION WHEN syntax_error THEN
    GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT;
    IF msg LIKE 'run_on_shards()%' THEN
        RAISE;
    END IF;
    RAISE EXCEPTION 'run_on_shards() command is not valid SQL: %', msg
        USING ERRCODE = 'syntax_error', DETAIL = format('The command was: %s', command);
END
$$;

COMMENT ON FUNCTION shardid_internal._run_on_shards_check(text, name, name) IS
    'Internal: run_on_shards(): the statement for schema.table made from the command and checked by the parser, with its kind and whether it reads; a syntax error names the command.';
