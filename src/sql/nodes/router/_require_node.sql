-- Router: what add_node() and place_shards() refuse of a node, as
-- check_cluster() would report it, when the router has dblink (without it
-- nothing can be read, and nothing is checked): a node that cannot be
-- reached, has no shardid, has another layout than the router, or (first
-- .. last not NULL) does not hold every shard of first .. last. Each
-- refusal hints at force => true, for a bootstrap that registers nodes and
-- placements before the nodes are ready.
CREATE OR REPLACE FUNCTION shardid_internal._require_node(node text, first integer DEFAULT NULL, last integer DEFAULT NULL) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    conn CONSTANT text := 'shardid_check_node';
    force_hint CONSTANT text := 'force => true skips this check (a bootstrap that registers the cluster before the nodes are ready); SELECT * FROM shardid.check_cluster(); then reports what is still wrong.';
    v       text;
    theirs  jsonb;
    mine    jsonb;
    missing text;
    msg     text;
    det     text;
BEGIN
    IF NOT EXISTS (SELECT FROM pg_extension AS e WHERE e.extname = 'dblink') THEN
        RETURN;
    END IF;
    BEGIN
        PERFORM shardid_internal._node_close(conn);  -- not one left open to another node
        PERFORM shardid_internal._node_connect(conn, node);
        PERFORM shardid_internal._node(conn, 'SET search_path = pg_catalog, pg_temp', node);
        v := shardid_internal._node(conn, 'SELECT e.extversion FROM pg_catalog.pg_extension AS e WHERE e.extname OPERATOR(pg_catalog.=) ''shardid''', node);
        IF v IS NOT NULL THEN
            theirs := shardid_internal._node(conn, 'SELECT pg_catalog.jsonb_build_object(''epoch'', pg_catalog.to_char(l.epoch AT TIME ZONE ''UTC'', ''YYYY-MM-DD HH24:MI:SS.MS'') OPERATOR(pg_catalog.||) ''+00'', ''shard_bits'', l.shard_bits, ''seq_bits'', l.seq_bits)::pg_catalog.text FROM shardid.layout() AS l', node)::jsonb;
            IF first IS NOT NULL THEN
                missing := shardid_internal._node(conn, pg_catalog.format(
                    'SELECT pg_catalog.string_agg(g::pg_catalog.text, '', '' ORDER BY g) FROM pg_catalog.generate_series(%s, %s) AS g
                      WHERE NOT EXISTS (SELECT FROM shardid.shard_registry AS r WHERE r.shard OPERATOR(pg_catalog.=) g)', first, last), node);
            END IF;
        END IF;
        PERFORM shardid_internal._node_close(conn);
    EXCEPTION WHEN sqlclient_unable_to_establish_sqlconnection THEN
        GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
        PERFORM shardid_internal._node_close(conn);
        RAISE EXCEPTION '%', msg USING ERRCODE = 'sqlclient_unable_to_establish_sqlconnection', DETAIL = det, HINT = force_hint;
    END;
    IF v IS NULL THEN
        RAISE EXCEPTION 'node "%" does not have the shardid extension', node
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'On the node: CREATE EXTENSION shardid; ' || force_hint;
    END IF;
    SELECT jsonb_build_object('epoch', pg_catalog.to_char(l.epoch AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS') || '+00', 'shard_bits', l.shard_bits, 'seq_bits', l.seq_bits) INTO mine FROM shardid.layout() AS l;
    IF theirs <> mine THEN
        RAISE EXCEPTION 'node "%" has another layout than the router', node
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = pg_catalog.format('Node: epoch %s, %s shard bits, %s seq bits; router: epoch %s, %s shard bits, %s seq bits.',
                                             theirs->>'epoch', theirs->>'shard_bits', theirs->>'seq_bits',
                                             mine->>'epoch', mine->>'shard_bits', mine->>'seq_bits'),
                  HINT = 'Every server of one system has the same layout: shardid.configure() it before any ID is issued. ' || force_hint;
    END IF;
    IF missing IS NOT NULL THEN
        RAISE EXCEPTION 'node "%" does not hold shards %', node, pg_catalog.left(missing, 200)
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = pg_catalog.format('No shard of %s .. %s was placed: the node''s shardid.shard_registry lacks them.', first, last),
                  HINT = pg_catalog.format('Create them on the node first (SELECT shardid.create_shards(%s, %s);). ', first, last) || force_hint;
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._require_node(text, integer, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._require_node(text, integer, integer) IS
    'Router: refuses a node that cannot be reached, has no shardid, has another layout than the router, or lacks shards first .. last; what add_node() and place_shards() check unless force => true. Checks nothing without dblink.';
