-- Node, for check_cluster() on the router: in one value, what the router
-- compares between nodes: the layout, the registered shards, the
-- templates' definitions, the shards' copies that differ from their
-- templates (_copy_drift()), the shards whose privileges differ from
-- the templates' (_privilege_steps()), the retired copies, and what a move leaves
-- behind when it is interrupted (its publication, subscription, slot and,
-- on 15, role, all named shardid_move_<shard>_<move id>; shardid's freeze
-- triggers, known by their function), and unfinished apply_ddl() changes
-- (ID, template, command) when this version has the ledger. The router
-- validates every name before it builds text with it
-- (_check_unsafe_name()).
CREATE OR REPLACE FUNCTION shardid_internal._node_facts() RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    facts jsonb;
    ddl   jsonb := '[]';
BEGIN
    SELECT jsonb_build_object(
        'layout', (SELECT jsonb_build_object('epoch', pg_catalog.to_char(l.epoch AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS') || '+00', 'shard_bits', l.shard_bits, 'seq_bits', l.seq_bits)
                     FROM shardid.layout() AS l),
        'shards', COALESCE((SELECT jsonb_agg(jsonb_build_object('shard', r.shard, 'schema', r.schema_name) ORDER BY r.shard)
                              FROM shardid.shard_registry AS r), '[]'),
        'templates', COALESCE((SELECT jsonb_object_agg(t.table_name, shardid_internal._template_definition(t.table_name))
                                 FROM shardid.sharded_tables AS t), '{}'),
        'drift', shardid_internal._copy_drift(),
        -- issue 46: the shards whose privileges differ from the templates'
        'privileges', COALESCE((SELECT jsonb_agg(jsonb_build_object('shard', p.shard, 'differences', p.d) ORDER BY p.shard)
                                  FROM (SELECT s.shard, jsonb_agg(s.what ORDER BY s.what COLLATE "C") AS d
                                          FROM shardid_internal._privilege_steps(NULL) AS s GROUP BY s.shard) AS p), '[]'),
        'retired', COALESCE((SELECT jsonb_agg(pg_catalog.to_jsonb(x)) FROM shardid_internal._retired_here() AS x), '[]'),
        'frozen', COALESCE((SELECT jsonb_agg(DISTINCT n.nspname)
                              FROM pg_trigger AS t
                              JOIN pg_class AS c ON c.oid = t.tgrelid
                              JOIN pg_namespace AS n ON n.oid = c.relnamespace
                             WHERE t.tgfoid = 'shardid_internal._refuse_frozen_write()'::regprocedure), '[]'),
        'publications', COALESCE((SELECT jsonb_agg(p.pubname ORDER BY p.pubname) FROM pg_publication AS p
                                   WHERE p.pubname LIKE 'shardid\_move\_%'), '[]'),
        'subscriptions', COALESCE((SELECT jsonb_agg(s.subname ORDER BY s.subname) FROM pg_subscription AS s
                                    WHERE s.subdbid = (SELECT d.oid FROM pg_database AS d WHERE d.datname = current_database())
                                      AND s.subname LIKE 'shardid\_move\_%'), '[]'),
        'slots', COALESCE((SELECT jsonb_agg(s.slot_name ORDER BY s.slot_name) FROM pg_replication_slots AS s
                            WHERE s.database = current_database() AND s.slot_name LIKE 'shardid\_move\_%'), '[]'),
        'roles', COALESCE((SELECT jsonb_agg(a.rolname ORDER BY a.rolname) FROM pg_roles AS a
                            WHERE a.rolname LIKE 'shardid\_move\_%'), '[]'))
      INTO facts;
    IF to_regclass('shardid.ddl_changes') IS NOT NULL THEN
        EXECUTE 'SELECT COALESCE(jsonb_agg(jsonb_build_object(''change_id'', c.change_id, ''template'', c.template, ''command'', c.command)
                                           ORDER BY c.started_at), ''[]'')
                   FROM shardid.ddl_changes AS c WHERE c.finished_at IS NULL'
           INTO ddl;
    END IF;
    RETURN facts || jsonb_build_object('ddl_unfinished', ddl);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._node_facts() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._node_facts() IS
    'Node, for check_cluster(): the layout, registered shards, template definitions, copies that differ from their templates, shards whose privileges differ from the templates'', retired copies, leftovers of moves and unfinished apply_ddl() changes here, as one jsonb value.';
