-- apply_ddl(): the statement for one table (_ddl_template: %s replaced
-- where the parser sees the table's name), checked by the parser
-- (_ddl_command) for that table; returns it with its kind. A syntax
-- error is reported with the statement (the parser's position would point
-- into this function's query).
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_check(command text, schema_name name, table_name name,
                                                    OUT statement text, OUT kind text, OUT concurrent boolean,
                                                    OUT index_name text)
    LANGUAGE plpgsql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    msg text;
BEGIN
    BEGIN
        statement := shardid_internal._ddl_template(command, schema_name, table_name);
        SELECT c.kind, c.concurrent, c.index_name INTO kind, concurrent, index_name
            FROM shardid_internal._ddl_command(statement, schema_name, table_name) AS c;
    EXCEPTION WHEN syntax_error THEN
        IF statement IS NULL THEN
            RAISE;
        END IF;
        GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT;
        RAISE EXCEPTION 'apply_ddl() command is not valid SQL: %', msg
            USING ERRCODE = 'syntax_error', DETAIL = format('The statement was: %s', statement);
    END;
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_check(text, name, name) IS
    'apply_ddl(): the statement for schema.table made from the command and checked by the parser, with its kind, whether it cannot run in a transaction block, and the index it makes or drops.';
