-- Node, source of a move: what the router needs to know before and while
-- it moves a shard away from here, in one round trip: the registry row,
-- the online prerequisites (wal_level, a free replication slot, replica
-- identities), the size, the owners and privileges the target must give
-- its copy, its indexes (_index_list), the generator's parameters, every role named, and the
-- definition to compare (_shard_definition). Changes nothing.
CREATE OR REPLACE FUNCTION shardid_internal._move_source_facts(shard integer) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r      shardid.shard_registry;
    nspoid oid;
    out    jsonb;
BEGIN
    SELECT * INTO r FROM shardid.shard_registry AS s WHERE s.shard = _move_source_facts.shard;
    out := jsonb_build_object(
        'registered', FOUND,
        'schema_name', r.schema_name,
        'sequence_schema', r.sequence_schema,
        'sequence_name', r.sequence_name,
        'wal_level', current_setting('wal_level'),
        'free_slot', (SELECT count(*) FROM pg_replication_slots) < current_setting('max_replication_slots')::integer,
        'server_version_num', current_setting('server_version_num')::integer);
    SELECT n.oid INTO nspoid FROM pg_namespace AS n WHERE n.nspname = r.schema_name;
    IF nspoid IS NULL THEN
        RETURN out || jsonb_build_object('schema_exists', false);
    END IF;
    RETURN out || jsonb_build_object(
        'schema_exists', true,
        'indexes', (SELECT COALESCE(jsonb_object_agg(c.relname, shardid_internal._index_list(c.oid)), '{}')
                      FROM pg_class AS c WHERE c.relnamespace = nspoid AND c.relkind IN ('r', 'p')),
        -- main forks of the tables and their TOAST tables (as _move_copy_progress counts them)
        'bytes', (SELECT COALESCE(sum(pg_relation_size(c.oid)
                                      + CASE WHEN c.reltoastrelid <> 0 THEN pg_relation_size(c.reltoastrelid) ELSE 0 END), 0)
                    FROM pg_class AS c WHERE c.relnamespace = nspoid AND c.relkind = 'r'),
        -- tables an online move cannot replicate UPDATE/DELETE of
        'no_identity', (SELECT string_agg(format('%I.%I', r.schema_name, c.relname), ', ' ORDER BY c.relname)
                          FROM pg_class AS c
                         WHERE c.relnamespace = nspoid AND c.relkind = 'r'
                           AND (c.relreplident = 'n' OR (c.relreplident = 'd' AND NOT EXISTS
                                (SELECT FROM pg_index AS i WHERE i.indrelid = c.oid AND i.indisprimary)))),
        'sequence', (SELECT jsonb_build_object('name', c.relname, 'type', format_type(s.seqtypid, NULL),
                                               'start', s.seqstart, 'increment', s.seqincrement, 'min', s.seqmin,
                                               'max', s.seqmax, 'cache', s.seqcache, 'cycle', s.seqcycle)
                       FROM pg_class AS c JOIN pg_sequence AS s ON s.seqrelid = c.oid
                      WHERE c.relnamespace = nspoid AND c.relname = r.sequence_name AND r.sequence_schema = r.schema_name),
        'ownership', jsonb_build_object(
            'schema', (SELECT jsonb_build_object('owner', pg_get_userbyid(n.nspowner),
                                                 'acl', shardid_internal._acl_items(n.nspacl, 'n', n.nspowner))
                         FROM pg_namespace AS n WHERE n.oid = nspoid),
            'relations', (SELECT COALESCE(jsonb_object_agg(c.relname, jsonb_build_object(
                                      'kind', c.relkind,
                                      'owner', pg_get_userbyid(c.relowner),
                                      'replident', c.relreplident,
                                      'replident_index', (SELECT i.relname FROM pg_index AS x JOIN pg_class AS i ON i.oid = x.indexrelid
                                                           WHERE x.indrelid = c.oid AND x.indisreplident),
                                      'acl', shardid_internal._acl_items(c.relacl, CASE c.relkind WHEN 'S' THEN 's' ELSE 'r' END::"char", c.relowner),
                                      'columns', (SELECT COALESCE(jsonb_object_agg(a.attname, shardid_internal._acl_items(a.attacl, NULL, NULL)), '{}')
                                                    FROM pg_attribute AS a
                                                   WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
                                                     AND a.attacl IS NOT NULL))), '{}')
                            FROM pg_class AS c WHERE c.relnamespace = nspoid AND c.relkind IN ('r', 'p', 'S'))),
        'roles', (SELECT COALESCE(jsonb_agg(DISTINCT x.rolname), '[]')
                    FROM (SELECT pg_get_userbyid(n.nspowner) AS rolname FROM pg_namespace AS n WHERE n.oid = nspoid
                          UNION ALL
                          SELECT pg_get_userbyid(c.relowner) FROM pg_class AS c WHERE c.relnamespace = nspoid
                          UNION ALL
                          SELECT pg_get_userbyid(a.grantee) FROM pg_class AS c, aclexplode(c.relacl) AS a
                           WHERE c.relnamespace = nspoid AND a.grantee <> 0
                          UNION ALL
                          SELECT pg_get_userbyid(a.grantor) FROM pg_class AS c, aclexplode(c.relacl) AS a
                           WHERE c.relnamespace = nspoid
                          UNION ALL
                          SELECT pg_get_userbyid(a.grantee) FROM pg_namespace AS n, aclexplode(n.nspacl) AS a
                           WHERE n.oid = nspoid AND a.grantee <> 0
                          UNION ALL
                          SELECT pg_get_userbyid(x.grantee) FROM pg_attribute AS t
                            JOIN pg_class AS c ON c.oid = t.attrelid, aclexplode(t.attacl) AS x
                           WHERE c.relnamespace = nspoid AND x.grantee <> 0) AS x),
        'definition', shardid_internal._shard_definition(r.schema_name),
        -- for a target with only the extension
        'templates', shardid_internal._template_ddl());
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_source_facts(integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_source_facts(integer) IS
    'Node, moves: what the router needs about a shard before moving it away (registry, prerequisites, size, owners and privileges, definition); changes nothing.';
