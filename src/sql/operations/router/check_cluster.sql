-- Router: what is wrong with the cluster, one row per problem, each with
-- the command that fixes it (fix) and where to run it (run_on: a node's
-- name; NULL for the router, and for a fix that is only advice, a comment
-- of one line); no row on a healthy cluster.
--
-- Every node is read once over dblink (search_path pinned): its shardid
-- version and, at the router's version, its facts
-- (shardid_internal._node_facts() there); a node that cannot be read is
-- recorded with the error and its SQLSTATE. Then each kind of
-- shardid.check_cluster_kinds, the one list of them, is checked by its
-- function shardid_internal._check_<kind>(nodes, facts): nodes holds what
-- was read of every node, facts the facts of the nodes read without what
-- holds a control character (_node_facts_safe(); _check_unsafe_name()
-- reports that), so that no name read on a node with a control character
-- reaches a fix. Rows come step by step (the view's step); the rows of a
-- step with several kinds are merged: reading the nodes (step 1) by node,
-- the shards against the placement (step 3) by shard, then node; within
-- a kind, in its function's order. Shards being moved (rows of
-- shard_moves) are live on both of their nodes by design and are not
-- reported but by move_stalled.
CREATE OR REPLACE FUNCTION shardid.check_cluster()
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    conn CONSTANT text := 'shardid_check_cluster';
    my_version text := (SELECT e.extversion FROM pg_extension AS e WHERE e.extname = 'shardid');
    nd    record;
    v     text;
    got   jsonb;
    nodes jsonb := '{}';  -- node: {version, facts} as read, or {error, sqlstate}
    facts jsonb;          -- node: its facts without what holds a control character
    msg   text;
    st    text;
BEGIN
    PERFORM shardid_internal._dblink_schema();
    FOR nd IN SELECT n.node FROM shardid.nodes AS n ORDER BY n.node COLLATE "C" LOOP
        BEGIN
            PERFORM shardid_internal._node_close(conn);  -- not one left open to another node
            PERFORM shardid_internal._node_connect(conn, nd.node);
            PERFORM shardid_internal._node(conn, 'SET search_path = pg_catalog, pg_temp', nd.node);
            v := shardid_internal._node(conn, 'SELECT e.extversion FROM pg_catalog.pg_extension AS e WHERE e.extname OPERATOR(pg_catalog.=) ''shardid''', nd.node);
            got := jsonb_build_object('version', v);
            IF v = my_version THEN
                got := got || jsonb_build_object('facts',
                    shardid_internal._node(conn, 'SELECT shardid_internal._node_facts()::pg_catalog.text', nd.node)::jsonb);
            END IF;
            PERFORM shardid_internal._node_close(conn);
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, st = RETURNED_SQLSTATE;
            PERFORM shardid_internal._node_close(conn);
            got := jsonb_build_object('error', msg, 'sqlstate', st);
        END;
        nodes := nodes || jsonb_build_object(nd.node, got);
    END LOOP;
    SELECT COALESCE(jsonb_object_agg(n.key, shardid_internal._node_facts_safe(n.value->'facts')), '{}') INTO facts
      FROM jsonb_each(nodes) AS n WHERE n.value ? 'facts';

    RETURN QUERY EXECUTE
        'SELECT r.kind, r.shard, r.node, r.detail, r.run_on, r.fix FROM ('
        || (SELECT pg_catalog.string_agg(pg_catalog.format('SELECT %s AS step, c.* FROM shardid_internal.%I($1, $2) WITH ORDINALITY AS c',
                                                           k.step, '_check_' || k.kind), ' UNION ALL ')
              FROM shardid.check_cluster_kinds AS k)
        || ') AS r ORDER BY r.step, CASE r.step WHEN 1 THEN r.node COLLATE "C" END,
                            CASE r.step WHEN 3 THEN r.shard END, CASE r.step WHEN 3 THEN r.node END, r.ordinality'
        USING nodes, facts;
END
$$;

REVOKE ALL ON FUNCTION shardid.check_cluster() FROM PUBLIC;

COMMENT ON FUNCTION shardid.check_cluster() IS
    'Router: one row per problem of the cluster (kind, shard, node, detail, run_on: the node to run the fix on, NULL for the router or advice; fix: the command that fixes it), none when healthy: unreachable or unreadable nodes, names with control characters, layouts, shards live twice or nowhere, placements, templates, leftovers of moves, moves nothing drives, the PL/Proxy cluster, unfinished apply_ddl(), shard copies that differ from their template. No fix holds a name read on a node that has a control character.';
