-- Router: drops the retired copies that moves left on their source nodes
-- (shardid.retired_copies) retired at least older_than ago, one at a time,
-- committing after each. A copy whose name tells no time is dropped only
-- with older_than = 0 (the default: every retired copy).
-- No SET search_path: PostgreSQL refuses COMMIT in a procedure that has
-- one, so every name and operator here is schema-qualified.
CREATE OR REPLACE PROCEDURE shardid.drop_retired_copies(older_than interval DEFAULT '0')
    LANGUAGE plpgsql
AS $$
DECLARE
    copies  record;
    dropped integer := 0;
    freed   bigint := 0;
BEGIN
    IF NOT shardid_internal._commit_allowed() THEN
        RAISE EXCEPTION 'shardid.drop_retired_copies() cannot run inside a transaction block'
            USING ERRCODE = 'active_sql_transaction',
                  DETAIL = 'It commits after every copy it drops, which a CALL inside BEGIN ... COMMIT, a function, an EXCEPTION block or a multi-statement query string cannot do.',
                  HINT = 'CALL it on its own (autocommit).';
    END IF;
    IF older_than IS NULL OR older_than OPERATOR(pg_catalog.<) '0'::pg_catalog.interval THEN
        RAISE EXCEPTION 'older_than must be an interval of 0 or more, not %', COALESCE(older_than::pg_catalog.text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    FOR copies IN
        SELECT c.node, c.schema_name
          FROM shardid.retired_copies AS c
         WHERE (c.retired_at IS NULL AND older_than OPERATOR(pg_catalog.=) '0'::pg_catalog.interval)
            OR c.retired_at OPERATOR(pg_catalog.<=) (pg_catalog.now() OPERATOR(pg_catalog.-) older_than)
         ORDER BY c.node COLLATE "C", c.schema_name
    LOOP
        freed := freed OPERATOR(pg_catalog.+) shardid_internal._drop_retired_copy_on(copies.node, copies.schema_name);
        dropped := dropped OPERATOR(pg_catalog.+) 1;
        COMMIT;
    END LOOP;
    RAISE NOTICE 'drop_retired_copies: % dropped (%)', dropped, pg_catalog.pg_size_pretty(freed);
END
$$;

REVOKE ALL ON PROCEDURE shardid.drop_retired_copies(interval) FROM PUBLIC;

COMMENT ON PROCEDURE shardid.drop_retired_copies(interval) IS
    'Router: drops the retired copies of moved shards (shardid.retired_copies) retired at least older_than ago (default: all), one at a time, committing after each.';
