-- Node, target of an offline move, first statement of the transaction that
-- replays the rows (bin/shardid-move-shard --offline): locks the copy's
-- tables against any change until the replay commits, refuses if writing
-- rows into them would run code of a role that is not a superuser (see
-- _move_untrusted_code), and empties them (a repeated attempt replaces what
-- an earlier one left). Returns the number of tables.
CREATE OR REPLACE FUNCTION shardid._move_offline_load(schema_name name) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n    integer := shardid._for_tables(schema_name, '{r,p}', 'LOCK TABLE %I.%I IN ACCESS EXCLUSIVE MODE');
    code text;
BEGIN
    code := shardid._move_untrusted_code(schema_name);
    IF code IS NOT NULL THEN
        RAISE EXCEPTION 'the rows of schema % cannot be copied offline: writing them would run code of roles that are not superusers',
                quote_ident(schema_name)
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'Functions: ' || code || '.',
                  HINT = 'Move the shard online (the copy then runs as the tables'' owners), or have a superuser own those functions.';
    END IF;
    PERFORM shardid._for_tables(schema_name, '{r}', 'TRUNCATE %I.%I');
    RETURN n;
END
$$;

REVOKE ALL ON FUNCTION shardid._move_offline_load(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_offline_load(name) IS
    'Node, offline moves on the target: locks the copy''s tables, refuses code of non-superusers that the replay would run, empties them.';
