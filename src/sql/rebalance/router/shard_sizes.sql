-- The size source of by_size rebalancing: each placed shard's size on the
-- node that holds it, the sum of pg_total_relation_size() (table, indexes,
-- TOAST) of the tables and materialized views in the shard's schema, read
-- over dblink (contrib) with one query per node that holds shards. A copy
-- being moved in or retired is not counted: only the shards placed on a
-- node, found through that node's shard_registry. A move may repoint a
-- shard and retire its old copy between the read of the placement and
-- the read of the node: a shard the node no longer registers is read
-- again where the placement now puts it (up to three rounds); one still
-- placed there and in no move is the error (55000).
CREATE OR REPLACE FUNCTION shardid.shard_sizes()
    RETURNS TABLE (shard integer, node text, bytes bigint)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    -- runs on the node, whatever its search_path; %L is the shard list
    node_query CONSTANT text := $q$
        SELECT s.shard,
               CASE WHEN r.shard IS NOT NULL THEN
                   (SELECT COALESCE(pg_catalog.sum(pg_catalog.pg_total_relation_size(c.oid)), 0)::pg_catalog.int8
                      FROM pg_catalog.pg_class AS c
                      JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
                     WHERE n.nspname = r.schema_name
                       AND c.relkind = ANY ('{r,m}'::pg_catalog."char"[]))
               END
          FROM pg_catalog.unnest(%L::pg_catalog.int4[]) AS s(shard)
          LEFT JOIN shardid.shard_registry AS r ON r.shard = s.shard$q$;
    dblink_schema name;
    n       record;
    got_shard integer[];
    got_bytes bigint[];
    missing integer;
    todo    integer[];
    again   integer[];
    round   integer := 0;
    err_state text;
    err_msg text;
    err_detail text;
BEGIN
    SELECT ns.nspname INTO dblink_schema
      FROM pg_catalog.pg_extension AS e
      JOIN pg_catalog.pg_namespace AS ns ON ns.oid = e.extnamespace
     WHERE e.extname = 'dblink';
    IF NOT FOUND THEN
        RAISE EXCEPTION 'dblink is not installed in database %', pg_catalog.current_database()
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'The router reads the shards'' sizes from the data nodes over dblink.',
                  HINT = 'On the router: CREATE EXTENSION dblink; (contrib, part of the postgresql-NN package). Or rebalance by_count, which reads no size.';
    END IF;
    WHILE todo IS NULL OR (pg_catalog.cardinality(todo) > 0 AND round < 3) LOOP
        round := round + 1;
        again := '{}';
        FOR n IN
            SELECT nd.node, nd.connstr, pg_catalog.array_agg(p.shard ORDER BY p.shard) AS placed
              FROM shardid.nodes AS nd
              JOIN shardid.shard_placement AS p ON p.node = nd.node
             WHERE todo IS NULL OR p.shard = ANY (todo)
             GROUP BY nd.node, nd.connstr
             ORDER BY nd.node COLLATE "C"
        LOOP
            BEGIN
                EXECUTE pg_catalog.format('SELECT pg_catalog.array_agg(r.shard ORDER BY r.shard), pg_catalog.array_agg(r.bytes ORDER BY r.shard)
                                             FROM %I.dblink($1, $2) AS r(shard integer, bytes bigint)', dblink_schema)
                   INTO got_shard, got_bytes
                  USING shardid_internal._pinned_connstr(n.connstr), pg_catalog.format(node_query, n.placed::text);
            EXCEPTION WHEN OTHERS THEN
                GET STACKED DIAGNOSTICS err_state = RETURNED_SQLSTATE, err_msg = MESSAGE_TEXT, err_detail = PG_EXCEPTION_DETAIL;
                RAISE EXCEPTION 'cannot read the shard sizes of node "%": %', n.node, err_msg
                    USING ERRCODE = err_state, DETAIL = err_detail,
                          HINT = 'The router connects to each node with its connect string in shardid.nodes, as the router''s server user (passwords in its ~/.pgpass).';
            END;
            -- not registered there: moved since (placed elsewhere now, or in a move), or the error
            FOR missing IN SELECT u.sh FROM ROWS FROM (pg_catalog.unnest(got_shard), pg_catalog.unnest(got_bytes)) AS u(sh, b)
                            WHERE u.b IS NULL ORDER BY u.sh LOOP
                IF round < 3 AND (EXISTS (SELECT FROM shardid.shard_placement AS p WHERE p.shard = missing AND p.node <> n.node)
                                  OR EXISTS (SELECT FROM shardid.shard_moves AS m WHERE m.shard = missing)) THEN
                    again := again || missing;
                ELSE
                    RAISE EXCEPTION 'shard % is placed on node "%" but not registered there', missing, n.node
                        USING ERRCODE = 'object_not_in_prerequisite_state',
                              DETAIL = 'Its size cannot be read: the node''s shardid.shard_registry has no such shard.',
                              HINT = 'Fix the placement (shardid.shard_placement) or the node, or rebalance by_count.';
                END IF;
            END LOOP;
            RETURN QUERY SELECT u.sh, n.node, u.b FROM ROWS FROM (pg_catalog.unnest(got_shard), pg_catalog.unnest(got_bytes)) AS u(sh, b)
                          WHERE u.b IS NOT NULL;
        END LOOP;
        todo := again;
    END LOOP;
END
$$;

REVOKE ALL ON FUNCTION shardid.shard_sizes() FROM PUBLIC;

COMMENT ON FUNCTION shardid.shard_sizes() IS
    'Router: each placed shard''s size in bytes on its node (tables with their indexes and TOAST in the shard''s schema), read over dblink; the sizes rebalance_plan(''by_size'') balances.';
