-- Router: the undo of place_shards(): shards first..last are routed to no
-- node any more (the placement rows are deleted; the node keeps the data).
-- A shard being moved (a row of shard_moves) or frozen on the router is
-- refused, before anything changes: a move's repoint or rollback needs its
-- placement. Unplaced shards of the range are skipped. On a router with
-- PL/Proxy the cluster follows (_refresh_proxy()), as for place_shards().
-- Returns the number of shards unplaced.
CREATE OR REPLACE FUNCTION shardid.unplace_shards(first integer, last integer) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p       shardid.shard_placement;
    m       shardid.shard_moves;
    removed integer;
BEGIN
    IF first IS NULL OR last IS NULL THEN
        RAISE EXCEPTION 'unplace_shards() arguments must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    PERFORM shardid_internal._require_shard_range(first, last);
    LOCK TABLE shardid.shard_placement IN SHARE ROW EXCLUSIVE MODE;
    SELECT * INTO m FROM shardid.shard_moves AS x
     WHERE x.shard >= first AND x.shard <= last
     ORDER BY x.shard LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'shard % is being moved from node "%" to node "%"', m.shard, m.source, m.target
            USING ERRCODE = 'object_in_use',
                  DETAIL = pg_catalog.format('No shard of %s .. %s was unplaced.', first, last),
                  HINT = pg_catalog.format('Let the move finish, or roll it back with CALL shardid.abort_move(%s); first.', m.shard);
    END IF;
    SELECT * INTO p FROM shardid.shard_placement AS x
     WHERE x.shard >= first AND x.shard <= last AND x.frozen
     ORDER BY x.shard LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'shard % is frozen on node "%"', p.shard, p.node
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = pg_catalog.format('No shard of %s .. %s was unplaced.', first, last),
                  HINT = pg_catalog.format('If no move is running, SELECT shardid.unfreeze_shard(%s); first.', p.shard);
    END IF;
    DELETE FROM shardid.shard_placement AS x WHERE x.shard >= first AND x.shard <= last;
    GET DIAGNOSTICS removed = ROW_COUNT;
    PERFORM shardid_internal._refresh_proxy();
    RETURN removed;
END
$$;

REVOKE ALL ON FUNCTION shardid.unplace_shards(integer, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid.unplace_shards(integer, integer) IS
    'Router: routes shards first..last to no node any more (the nodes keep their data); returns how many were unplaced. Refuses shards being moved or frozen.';
