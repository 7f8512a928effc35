-- Router: the moves that empty a node, without making any: its shards,
-- largest first (by_size, sizes read from the nodes by shard_sizes()) or
-- highest-numbered first (by_count), each to the node that is then the
-- emptiest (by total size, or by number of shards; ties by node name),
-- never to the drained node. Loads count shards in a move on their target
-- (on their source while being rolled back). Shards of the node in a move
-- or frozen on the router are not planned: drain_node() resumes the
-- first and reports the second.
CREATE OR REPLACE FUNCTION shardid.drain_plan(node text, strategy text DEFAULT 'by_size', max_moves integer DEFAULT NULL)
    RETURNS TABLE (step integer, shard integer, source text, target text, bytes bigint)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    names  text[];
    loads  numeric[];
    sizes  jsonb := '{}';
    s      record;
    best   integer;
    i      integer;
    n      integer := 0;
BEGIN
    PERFORM shardid_internal._check_rebalance_options(strategy, max_moves);
    IF node IS NULL OR NOT EXISTS (SELECT FROM shardid.nodes AS x WHERE x.node = drain_plan.node) THEN
        RAISE EXCEPTION 'node "%" does not exist', node USING ERRCODE = 'undefined_object';
    END IF;
    names := ARRAY(SELECT x.node FROM shardid.nodes AS x WHERE x.node <> drain_plan.node ORDER BY x.node COLLATE "C");
    IF pg_catalog.cardinality(names) = 0 THEN
        RAISE EXCEPTION 'there is no other node to drain node "%" onto', node
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Add a node first (shardid.add_node()).';
    END IF;
    IF strategy = 'by_size' THEN
        SELECT COALESCE(jsonb_object_agg(z.shard::text, z.bytes), '{}') INTO sizes FROM shardid.shard_sizes() AS z;
    END IF;
    loads := ARRAY(
            SELECT COALESCE((SELECT sum(CASE WHEN strategy = 'by_size' THEN (sizes->>(p.shard::text))::numeric ELSE 1 END)
                               FROM shardid.shard_placement AS p
                               LEFT JOIN shardid.shard_moves AS m ON m.shard = p.shard
                              WHERE (CASE WHEN m.shard IS NULL OR m.phase = 'aborting' THEN p.node ELSE m.target END) = o.name), 0)
              FROM unnest(names) WITH ORDINALITY AS o(name, ord) ORDER BY o.ord);
    FOR s IN
        SELECT p.shard, (sizes->>(p.shard::text))::bigint AS bytes
          FROM shardid.shard_placement AS p
         WHERE p.node = drain_plan.node AND NOT p.frozen
           AND NOT EXISTS (SELECT FROM shardid.shard_moves AS m WHERE m.shard = p.shard)
         ORDER BY CASE WHEN strategy = 'by_size' THEN (sizes->>(p.shard::text))::bigint END DESC NULLS LAST, p.shard DESC
    LOOP
        EXIT WHEN max_moves IS NOT NULL AND n >= max_moves;
        best := 1;
        FOR i IN 2 .. pg_catalog.cardinality(names) LOOP
            IF loads[i] < loads[best] THEN
                best := i;
            END IF;
        END LOOP;
        n := n + 1;
        loads[best] := loads[best] + CASE WHEN strategy = 'by_size' THEN COALESCE(s.bytes, 0) ELSE 1 END;
        step := n; shard := s.shard; source := node; target := names[best]; bytes := s.bytes;
        RETURN NEXT;
    END LOOP;
END
$$;

REVOKE ALL ON FUNCTION shardid.drain_plan(text, text, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid.drain_plan(text, text, integer) IS
    'Router: the moves (step, shard, source, target, bytes) that empty a node: its shards largest first (by_size) or by number (by_count), each to the then emptiest other node; shards in a move or frozen stay. Changes nothing.';
