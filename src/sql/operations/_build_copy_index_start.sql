-- Node, build_copy_index(): what building a template's index on a shard's
-- copy takes, checked before anything is built: nothing when the copy has
-- it already (valid, the template's definition: a NOTICE says so); 55000
-- when the copy has another index of that name (align_copy() drops it);
-- 23505 when the index is unique and the copy holds keys it would refuse
-- (the HINT is the copy_index_duplicates() call that lists them: a build
-- that cannot succeed is not started). Else {statement: CREATE [UNIQUE]
-- INDEX CONCURRENTLY of the template's definition on the copy (from
-- _index_statement()'s shape: no name replaced in text), cleanup: the
-- DROP INDEX CONCURRENTLY of an invalid index of that name a failed build
-- left, if any}. A partitioned copy (ONLY) cannot build CONCURRENTLY
-- (0A000; align_copy() builds it in a transaction); without dblink, 55000.
CREATE OR REPLACE FUNCTION shardid_internal._build_copy_index_start(shard integer, table_name name, index_name name) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    x     record;
    shape text;
    head  text;
    uniq  text;
    dups  bigint;
    again text := format('CALL shardid.build_copy_index(%s, %L, %L);', shard, table_name, index_name);
BEGIN
    x := shardid_internal._copy_index(shard, table_name, index_name);
    IF NOT EXISTS (SELECT FROM pg_extension AS e WHERE e.extname = 'dblink') THEN
        RAISE EXCEPTION 'build_copy_index() needs the dblink extension'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'CREATE INDEX CONCURRENTLY cannot run in a transaction block: it runs on a connection of its own to this database.',
                  HINT = format('CREATE EXTENSION dblink; in this database (contrib), then %s', again);
    END IF;
    shape := shardid_internal._index_statement(x.index);
    IF x.own IS NOT NULL AND x.own_valid THEN
        IF shardid_internal._index_statement(x.own) = shape THEN
            RAISE NOTICE 'build_copy_index: % has index % already', x.copy, quote_ident(index_name);
            RETURN jsonb_build_object('statement', NULL);
        END IF;
        RAISE EXCEPTION 'copy % has another index named %: %', x.copy, quote_ident(index_name), shardid_internal._index_statement(x.own)
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('The template''s is %s.', shape),
                  HINT = format('SELECT * FROM shardid.align_copy(%s, %L); replaces it.', shard, table_name);
    END IF;
    dups := shardid_internal._copy_index_duplicates(x.copy, x.index, false)::bigint;
    IF dups > 0 THEN
        RAISE EXCEPTION 'copy % holds % % that unique index % refuses', x.copy, dups, CASE WHEN dups = 1 THEN 'key' ELSE 'keys' END,
                        quote_ident(index_name)
            USING ERRCODE = 'unique_violation',
                  DETAIL = 'A build would fail on them and leave an invalid index; none was started.',
                  HINT = format('List them: SELECT * FROM shardid.copy_index_duplicates(%s, %L, %L); delete or change those rows, then %s',
                                shard, table_name, index_name, again);
    END IF;
    uniq := CASE WHEN starts_with(shape, 'CREATE UNIQUE ') THEN 'UNIQUE ' ELSE '' END;
    head := format('CREATE %sINDEX ON USING ', uniq);
    IF NOT starts_with(shape, head) THEN
        RAISE EXCEPTION 'index % of % cannot be built CONCURRENTLY: it is on a partitioned table', quote_ident(index_name), x.copy
            USING ERRCODE = 'feature_not_supported',
                  HINT = format('SELECT * FROM shardid.align_copy(%s, %L); builds it in a transaction (writes to the copy wait for it).', shard, table_name);
    END IF;
    RETURN jsonb_build_object(
        'statement', format('CREATE %sINDEX CONCURRENTLY %I ON %s USING %s', uniq, index_name, x.copy, substr(shape, length(head) + 1)),
        'cleanup', CASE WHEN x.own IS NOT NULL
                        THEN jsonb_build_array(format('DROP INDEX CONCURRENTLY %s', x.own::regclass)) ELSE '[]' END);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._build_copy_index_start(integer, name, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._build_copy_index_start(integer, name, name) IS
    'Node, build_copy_index(): the CREATE INDEX CONCURRENTLY that gives a shard''s copy its template''s index (and the drop of an invalid one a failed build left), or nothing when it is there; refused first when another index has the name (55000), when the copy holds keys a unique index refuses (23505, HINT: copy_index_duplicates()), or on a partitioned copy (0A000); 55000 without dblink.';
