-- Node: a table's indexes in creation order, each as {name, shape, def,
-- constraint}: shape is its definition (_index_statement(): from the
-- catalog, search_path pinned) without its name and table, so that the same index of two tables
-- (a template and a shard's copy, or a shard on two nodes) compares equal
-- whatever each is named; constraint says a constraint owns it.
CREATE OR REPLACE FUNCTION shardid_internal._index_list(rel regclass) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT COALESCE(jsonb_agg(jsonb_build_object(
               'name', i.relname,
               'shape', shardid_internal._index_statement(i.oid),
               'def', pg_get_indexdef(i.oid),
               'constraint', EXISTS (SELECT FROM pg_constraint AS k WHERE k.conindid = i.oid AND k.conrelid = t.oid))
             ORDER BY i.oid), '[]')
      FROM pg_index AS x
      JOIN pg_class AS i ON i.oid = x.indexrelid
      JOIN pg_class AS t ON t.oid = x.indrelid
     WHERE x.indrelid = rel
$$;

-- EXECUTE stays with PUBLIC: _create_shard_table() calls it with the caller's rights.

COMMENT ON FUNCTION shardid_internal._index_list(regclass) IS
    'Node: a table''s indexes as {name, shape (definition without name and table), def, constraint}, in creation order.';
