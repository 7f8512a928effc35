-- The rebalance planner, pure: from the nodes, the node each shard counts
-- on and its size, the moves that even out the nodes' load. It reads no
-- table and reaches no node: rebalance_plan() gathers its input (placement,
-- moves in progress, sizes read from the nodes) and calls it, and the
-- regression tests call it with sizes of their own.
--
-- A node's load is, by_size, the total bytes of the shards it holds; by_count,
-- their number (each shard costs 1). One step moves a shard of cost c from a
-- node s to a node t where, with D = load(s) - load(t):
--   D > tolerance: by_size a tenth of the average node's load (nodes that
--       close are balanced enough: sizes drift with every write, and a move
--       is not free); by_count 0;
--   0 < c and 3c <= 2D: the gap between s and t narrows by at least c, so a
--       big shard is not moved for a small gain; and since c < D, both new
--       loads lie strictly between the old ones: no node ends fuller than
--       the fullest was or emptier than the emptiest was, and the sum of
--       squared loads strictly falls. No step makes the balance worse and
--       no sequence of steps comes back to a placement it left.
-- Which step (deterministic): sources from the fullest node down, targets
-- from the emptiest up (equal loads: node names in byte order), the first
-- pair that has such a shard; its shard whose cost is nearest D/2 (the
-- largest narrowing), then the smaller, then the highest shard number (the
-- choice of the count-based planner before 0.2, so by_count plans what it
-- planned). A shard moves at most once in a plan. Pinned shards (in a move,
-- frozen, or excluded by the caller) load the node given for them but never
-- move. The plan ends when no pair has such a shard, or after max_moves.
--
-- Cost: each step sorts the nodes and, per pair tried, binary-searches the
-- source's shards (sorted by cost) for D/2, skipping shards already moved.
CREATE OR REPLACE FUNCTION shardid._rebalance_moves(strategy text, max_moves integer, nodes text[],
                                                    shards integer[], shard_nodes text[], shard_bytes bigint[],
                                                    pinned integer[] DEFAULT '{}')
    RETURNS TABLE (step integer, shard integer, source text, target text, bytes bigint)
    LANGUAGE plpgsql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    node_name   text[];     -- the nodes, each once, in byte order; a node is its index here
    k           integer;
    load        bigint[];   -- per node
    tolerance   bigint := 0;
    -- the movable shards, sorted by node, cost, shard number descending;
    -- node i's are cand_*[first_of[i] .. last_of[i]]
    cand_shard  integer[];
    cand_cost   bigint[];
    cand_bytes  bigint[];
    cand_node   integer[];
    m           integer;
    first_of    integer[];
    last_of     integer[];
    -- runs of equal cost on one node: a shard taken from a run is always
    -- the first not yet taken, so each run is a queue: next_of[start] is
    -- its first untaken shard (past run_end once all are taken)
    run_start   integer[];
    run_end     integer[];
    next_of     integer[];
    by_load     integer[];  -- sources: fullest first, equal loads in name order
    to_load     integer[];  -- targets: emptiest first, equal loads in name order
    s           integer;
    t           integer;
    gap         bigint;
    lo          integer;
    hi          integer;
    mid         integer;
    g           integer;
    above       integer;
    below       integer;
    best        integer;
    done        integer := 0;
    dup         integer;
BEGIN
    PERFORM shardid._check_rebalance_options(strategy, max_moves);
    IF nodes IS NULL OR shards IS NULL OR shard_nodes IS NULL OR shard_bytes IS NULL THEN
        RAISE EXCEPTION '_rebalance_moves() arrays must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF cardinality(shard_nodes) <> cardinality(shards) OR cardinality(shard_bytes) <> cardinality(shards) THEN
        RAISE EXCEPTION 'shards, shard_nodes and shard_bytes must have one element per shard (% shards, % nodes, % sizes)',
                        cardinality(shards), cardinality(shard_nodes), cardinality(shard_bytes)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    node_name := ARRAY(SELECT u.n FROM pg_catalog.unnest(nodes) AS u(n) WHERE u.n IS NOT NULL
                        GROUP BY u.n ORDER BY u.n COLLATE "C");
    k := cardinality(node_name);

    SELECT x.sh INTO dup FROM pg_catalog.unnest(shards) AS x(sh)
     GROUP BY x.sh HAVING pg_catalog.count(*) > 1 OR x.sh IS NULL ORDER BY x.sh LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'shard % is given more than once', COALESCE(dup::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT x.sh INTO dup FROM ROWS FROM (pg_catalog.unnest(shards), pg_catalog.unnest(shard_nodes)) AS x(sh, nd)
     WHERE x.nd IS NULL OR x.nd <> ALL (node_name) ORDER BY x.sh LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'shard % is on a node that is not given', dup USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF strategy = 'by_size' THEN
        SELECT x.sh INTO dup FROM ROWS FROM (pg_catalog.unnest(shards), pg_catalog.unnest(shard_bytes)) AS x(sh, b)
         WHERE x.b IS NULL OR x.b < 0 ORDER BY x.sh LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION 'shard % has no size', dup
                USING ERRCODE = 'invalid_parameter_value',
                      DETAIL = 'by_size needs the size in bytes (0 or more) of every shard.';
        END IF;
    END IF;
    IF k < 2 THEN
        RETURN;
    END IF;

    load := ARRAY(SELECT COALESCE(pg_catalog.sum(CASE WHEN x.nd IS NULL THEN 0 WHEN strategy = 'by_count' THEN 1
                                                      ELSE x.b END), 0)::bigint
                    FROM pg_catalog.generate_series(1, k) AS g(i)
                    LEFT JOIN ROWS FROM (pg_catalog.unnest(shard_nodes), pg_catalog.unnest(shard_bytes)) AS x(nd, b)
                      ON x.nd = node_name[g.i]
                   GROUP BY g.i ORDER BY g.i);
    IF strategy = 'by_size' THEN
        SELECT pg_catalog.div(pg_catalog.sum(l), k * 10)::bigint
          INTO tolerance FROM pg_catalog.unnest(load) AS l;
    END IF;

    SELECT pg_catalog.array_agg(c.sh ORDER BY c.ni, c.cost, c.sh DESC),
           pg_catalog.array_agg(c.cost ORDER BY c.ni, c.cost, c.sh DESC),
           pg_catalog.array_agg(c.b ORDER BY c.ni, c.cost, c.sh DESC),
           pg_catalog.array_agg(c.ni ORDER BY c.ni, c.cost, c.sh DESC)
      INTO cand_shard, cand_cost, cand_bytes, cand_node
      FROM (SELECT x.sh, x.b, pg_catalog.array_position(node_name, x.nd) AS ni,
                   CASE strategy WHEN 'by_count' THEN 1 ELSE x.b END AS cost
              FROM ROWS FROM (pg_catalog.unnest(shards), pg_catalog.unnest(shard_nodes), pg_catalog.unnest(shard_bytes)) AS x(sh, nd, b)
             WHERE x.sh <> ALL (COALESCE(pinned, '{}'))) AS c;
    m := COALESCE(cardinality(cand_shard), 0);
    IF m = 0 THEN
        RETURN;
    END IF;

    first_of := array_fill(1, ARRAY[k]);
    last_of := array_fill(0, ARRAY[k]);
    run_start := array_fill(0, ARRAY[m]);
    run_end := array_fill(0, ARRAY[m]);
    next_of := array_fill(0, ARRAY[m]);
    FOR i IN 1 .. m LOOP
        IF last_of[cand_node[i]] = 0 THEN
            first_of[cand_node[i]] := i;
        END IF;
        last_of[cand_node[i]] := i;
        IF i > 1 AND cand_node[i] = cand_node[i - 1] AND cand_cost[i] = cand_cost[i - 1] THEN
            run_start[i] := run_start[i - 1];
        ELSE
            run_start[i] := i;
            next_of[i] := i;
        END IF;
    END LOOP;
    FOR i IN REVERSE m .. 1 LOOP
        run_end[i] := CASE WHEN i < m AND run_start[i + 1] = run_start[i] THEN run_end[i + 1] ELSE i END;
    END LOOP;

    WHILE max_moves IS NULL OR done < max_moves LOOP
        best := NULL;
        by_load := ARRAY(SELECT g.i FROM pg_catalog.generate_series(1, k) AS g(i) ORDER BY load[g.i] DESC, g.i);
        to_load := ARRAY(SELECT g.i FROM pg_catalog.generate_series(1, k) AS g(i) ORDER BY load[g.i], g.i);
        <<pairs>>
        FOREACH s IN ARRAY by_load LOOP
            FOREACH t IN ARRAY to_load LOOP
                gap := load[s] - load[t];
                EXIT WHEN gap <= tolerance;
                CONTINUE WHEN first_of[s] > last_of[s];
                -- the first of s's shards whose cost is at least D/2
                lo := first_of[s];
                hi := last_of[s] + 1;
                WHILE lo < hi LOOP
                    mid := (lo + hi) / 2;
                    IF 2 * cand_cost[mid] >= gap THEN hi := mid; ELSE lo := mid + 1; END IF;
                END LOOP;
                -- nearest untaken run at or above D/2, and below it
                above := NULL;
                g := lo;
                WHILE g <= last_of[s] AND next_of[run_start[g]] > run_end[g] LOOP
                    g := run_end[g] + 1;
                END LOOP;
                IF g <= last_of[s] AND 3 * cand_cost[g] <= 2 * gap THEN
                    above := next_of[run_start[g]];
                END IF;
                below := NULL;
                g := lo - 1;
                WHILE g >= first_of[s] AND cand_cost[g] > 0 AND next_of[run_start[g]] > run_end[g] LOOP
                    g := run_start[g] - 1;
                END LOOP;
                IF g >= first_of[s] AND cand_cost[g] > 0 THEN
                    below := next_of[run_start[g]];
                END IF;
                IF below IS NOT NULL AND (above IS NULL OR gap - 2 * cand_cost[below] <= 2 * cand_cost[above] - gap) THEN
                    best := below;
                ELSE
                    best := above;
                END IF;
                EXIT pairs WHEN best IS NOT NULL;
            END LOOP;
        END LOOP;
        EXIT WHEN best IS NULL;

        next_of[run_start[best]] := best + 1;
        load[s] := load[s] - cand_cost[best];
        load[t] := load[t] + cand_cost[best];
        done := done + 1;
        step := done;
        shard := cand_shard[best];
        source := node_name[s];
        target := node_name[t];
        bytes := cand_bytes[best];
        RETURN NEXT;
    END LOOP;
END
$$;

REVOKE ALL ON FUNCTION shardid._rebalance_moves(text, integer, text[], integer[], text[], bigint[], integer[]) FROM PUBLIC;

COMMENT ON FUNCTION shardid._rebalance_moves(text, integer, text[], integer[], text[], bigint[], integer[]) IS
    'Internal: the rebalance planner without I/O: the moves (step, shard, source, target, bytes) that even out the given nodes'' load by_size or by_count; shards in pinned count but never move.';
