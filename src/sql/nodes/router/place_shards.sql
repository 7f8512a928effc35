-- Places shards first..last on a node: the node must already hold them
-- (created there with shardid.create_shards). A shard already on this node
-- is left alone; one placed on another node is refused (move it instead).
-- Returns the number of shards newly placed. With dblink on the router, a
-- node that cannot be reached, has another layout or lacks one of the
-- shards is refused (_require_node()), unless force (bootstrap order).
CREATE OR REPLACE FUNCTION shardid.place_shards(node text, first integer, last integer, force boolean DEFAULT false) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    other shardid.shard_placement;
    added integer;
BEGIN
    IF node IS NULL OR first IS NULL OR last IS NULL THEN
        RAISE EXCEPTION 'place_shards() arguments must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    PERFORM shardid_internal._require_shard_range(first, last);
    LOCK TABLE shardid.shard_placement IN SHARE ROW EXCLUSIVE MODE;
    IF NOT EXISTS (SELECT FROM shardid.nodes AS n WHERE n.node = place_shards.node) THEN
        RAISE EXCEPTION 'node "%" does not exist', node
            USING ERRCODE = 'undefined_object',
                  HINT = 'Register it first with shardid.add_node(name, connstr).';
    END IF;
    SELECT * INTO other FROM shardid.shard_placement AS p
     WHERE p.shard >= first AND p.shard <= last
       AND p.node <> place_shards.node
     ORDER BY p.shard LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'shard % is already placed on node "%"', other.shard, other.node
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = pg_catalog.format('No shard of %s .. %s was placed.', first, last),
                  HINT = 'Move a placed shard with CALL shardid.move_shard(), which copies its data.';
    END IF;
    IF NOT force THEN
        PERFORM shardid_internal._require_node(node, first, last);
    END IF;
    INSERT INTO shardid.shard_placement (shard, node)
    SELECT g, place_shards.node FROM pg_catalog.generate_series(first, last) AS g
    ON CONFLICT (shard) DO NOTHING;
    GET DIAGNOSTICS added = ROW_COUNT;
    PERFORM shardid_internal._refresh_proxy();
    RETURN added;
END
$$;

REVOKE ALL ON FUNCTION shardid.place_shards(text, integer, integer, boolean) FROM PUBLIC;

COMMENT ON FUNCTION shardid.place_shards(text, integer, integer, boolean) IS
    'Router: routes shards first..last to a node that already holds them; returns how many were newly placed. Refuses shards placed on another node and, with dblink, a node it cannot reach, with another layout or lacking the shards, unless force.';
