-- apply_ddl() on a node, CONCURRENTLY: whether a target has each of the
-- template's indexes, valid and with the template's definition (the same
-- shape, _index_statement(): the definition without name and table). A retried CREATE INDEX that finds
-- its name taken ("already exists": the interrupted run may have built
-- it before the ledger recorded it) counts as done only then; an index of
-- that name that is another index is an error.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_same_indexes(change_id bigint, target text) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT NOT EXISTS (
        SELECT FROM pg_index AS x JOIN pg_class AS i ON i.oid = x.indexrelid
         WHERE x.indrelid = to_regclass(format('%I.%I', t.template_schema, t.template_name))
           AND NOT EXISTS (
               SELECT FROM pg_index AS y JOIN pg_class AS j ON j.oid = y.indexrelid
                WHERE y.indrelid = to_regclass(format('%I.%I', target, t.table_name))
                  AND j.relname = i.relname AND y.indisvalid
                  AND shardid_internal._index_statement(y.indexrelid) = shardid_internal._index_statement(x.indexrelid)))
      FROM shardid.ddl_changes AS c JOIN shardid.sharded_tables AS t ON t.table_name = c.table_name
     WHERE c.change_id = _apply_ddl_same_indexes.change_id AND _apply_ddl_same_indexes.target <> 'template'
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_same_indexes(bigint, text) IS
    'apply_ddl() on a node, CONCURRENTLY: whether a shard''s copy has each of the template''s indexes, valid, with the template''s definition; a retried CREATE INDEX whose name is taken counts as done only then.';
