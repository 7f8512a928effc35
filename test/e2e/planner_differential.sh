#!/usr/bin/env bash
# test/e2e/planner_differential.sh — the C++ rebalance planner behind
# shardid._rebalance_moves() (src/core/rebalance.cpp) against the PL/pgSQL
# planner it replaced (sql/functions/_rebalance_moves.sql as of commit
# bdbae32, read from git), on random inputs: by_size and by_count, 1 to 64
# nodes (repeated, NULL, holding nothing, names in several scripts), up to
# 3000 shards, sizes with many ties, zeros and skew, pins (also of shards
# not given, and NULL), max_moves, and one input in ten spoiled (every
# refusal of either planner). Each case must give the same rows in the same
# order, or the same error: SQLSTATE, message, detail and hint. The
# database's default collation is ICU's en-US, so that byte order (COLLATE
# "C") is only what the planners ask for.
#
#   PLANNER_DIFF_CASES  cases to run (default 500), in batches of 100
#   PLANNER_DIFF_SEED   seed of the first batch (default 1)
set -euo pipefail
cd "$(dirname "$0")/../.."
source test/lib/e2e.sh

old=bdbae326235631f697ca1f9fe098a2e186398a84
if ! git cat-file -e "$old:sql/functions/_rebalance_moves.sql" 2>/dev/null; then
	echo "SKIP: the PL/pgSQL planner is read from git (commit ${old:0:7}); this is no git checkout"
	exit 77
fi
cases=${PLANNER_DIFF_CASES:-500}
seed=${PLANNER_DIFF_SEED:-1}
PATH=$(pg_bindir):$PATH
export PATH

pg_start planner
createdb -T template0 --locale-provider=icu --icu-locale=en-US diff
q -d diff -c 'CREATE EXTENSION shardid'
git show "$old:sql/functions/_rebalance_moves.sql" |
	sed 's/shardid\._rebalance_moves(/shardid._rebalance_moves_plpgsql(/g' | q -d diff

q -d diff <<'EOF'
CREATE TYPE diff_case AS (strategy text, max_moves integer, nodes text[], shards integer[],
                          shard_nodes text[], shard_bytes bigint[], pinned integer[]);
CREATE TABLE differences (seed float8, case_no integer, c diff_case, plpgsql text, cpp text);

-- A valid input, most of them small.
CREATE FUNCTION random_case() RETURNS diff_case LANGUAGE plpgsql AS $$
DECLARE
    c diff_case;
    stems text[] := ARRAY['a', 'b', 'B', 'Z', 'z', 'é', 'Ä', 'ß', 'ab', 'aB', 'a b', 'node', 'node1',
                          'node10', 'n_', ''];
    k integer := 1 + floor(random() ^ 2 * 64)::integer;
    names text[] := '{}';
    holders text[];
    n integer;
    first_shard integer := floor(random() * 100)::integer - 20;
    sizes integer := floor(random() * 6)::integer;
BEGIN
    c.strategy := CASE WHEN random() < 0.5 THEN 'by_size' ELSE 'by_count' END;
    c.max_moves := CASE WHEN random() < 0.7 THEN NULL ELSE floor(random() * 30)::integer END;
    FOR j IN 1 .. k LOOP
        names := names || (stems[1 + floor(random() * cardinality(stems))::integer]
                           || CASE WHEN random() < 0.8 THEN j::text ELSE '' END);
    END LOOP;
    c.nodes := names;
    IF random() < 0.1 THEN c.nodes := c.nodes || NULL::text; END IF;
    IF random() < 0.1 THEN c.nodes := c.nodes || names[1]; END IF;
    -- some nodes hold nothing (just added); the first holders hold more
    holders := ARRAY(SELECT x FROM unnest(names) AS x WHERE random() < 0.8);
    IF cardinality(holders) = 0 THEN holders := names[1:1]; END IF;
    n := CASE WHEN random() < 0.6 THEN floor(random() * 60)
              WHEN random() < 0.75 THEN floor(random() * 600)
              ELSE floor(random() * 3000) END;
    c.shards := ARRAY(SELECT s FROM generate_series(first_shard, first_shard + 2 * n) AS s
                       ORDER BY random() LIMIT n);
    c.shard_nodes := ARRAY(SELECT holders[1 + floor(random() ^ 2 * cardinality(holders))::integer]
                             FROM generate_series(1, n));
    c.shard_bytes := ARRAY(SELECT CASE sizes
                                      WHEN 0 THEN floor(random() * 4)::bigint * 100
                                      WHEN 1 THEN floor(random() * 1000000)::bigint
                                      WHEN 2 THEN (1000000000 / (1 + floor(random() * 1000)))::bigint
                                      WHEN 3 THEN CASE WHEN random() < 0.7 THEN 0 ELSE floor(random() * 1000)::bigint END
                                      WHEN 4 THEN floor(random() * 2 ^ 50)::bigint
                                      ELSE 1 + floor(random() * 2)::bigint END
                             FROM generate_series(1, n));
    IF c.strategy = 'by_count' AND random() < 0.3 THEN
        c.shard_bytes := ARRAY(SELECT NULL::bigint FROM generate_series(1, n));
    END IF;
    c.pinned := CASE WHEN random() < 0.5 THEN '{}'
                     ELSE ARRAY(SELECT s FROM unnest(c.shards) AS s WHERE random() < 0.15) END;
    IF random() < 0.2 THEN c.pinned := c.pinned || (first_shard - 5); END IF;
    IF random() < 0.02 THEN c.pinned := c.pinned || NULL::integer; END IF;
    IF random() < 0.02 THEN c.pinned := NULL; END IF;
    RETURN c;
END $$;

-- The same input made invalid one way or another.
CREATE FUNCTION spoil(c diff_case) RETURNS diff_case LANGUAGE plpgsql AS $$
DECLARE
    n integer := cardinality(c.shards);
    i integer := 1 + floor(random() * greatest(n, 1))::integer;
BEGIN
    CASE floor(random() * 13)::integer
        WHEN 0 THEN c.strategy := 'by_disk_size';
        WHEN 1 THEN c.strategy := NULL;
        WHEN 2 THEN c.max_moves := -1 - floor(random() * 5)::integer;
        WHEN 3 THEN c.nodes := NULL;
        WHEN 4 THEN c.shards := NULL;
        WHEN 5 THEN c.shard_nodes := NULL;
        WHEN 6 THEN c.shard_bytes := NULL;
        WHEN 7 THEN IF random() < 0.5 THEN c.shard_nodes := c.shard_nodes[2:]; ELSE c.shard_bytes := c.shard_bytes || 5::bigint; END IF;
        WHEN 8 THEN c.shards := c.shards || c.shards[i];
                    c.shard_nodes := c.shard_nodes || c.nodes[1];
                    c.shard_bytes := c.shard_bytes || 7::bigint;
        WHEN 9 THEN c.shards[i] := NULL;
        WHEN 10 THEN c.shard_nodes[i] := CASE WHEN random() < 0.5 THEN 'not given' END;
        WHEN 11 THEN c.strategy := 'by_size';
                     c.shard_bytes[i] := CASE WHEN random() < 0.5 THEN -1 END;
        ELSE -- two shards of 5 EB on one node: over bigint (with two nodes or more)
            c.strategy := 'by_size';
            c.shards := c.shards || (-1000) || (-1001);
            c.shard_nodes := c.shard_nodes || c.nodes[1] || c.nodes[1];
            c.shard_bytes := c.shard_bytes || 5000000000000000000 || 5000000000000000000;
    END CASE;
    RETURN c;
END $$;

-- The rows of one planner, as text in the order returned, or its error.
CREATE FUNCTION outcome(planner text, c diff_case) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    r text;
    st text;
    msg text;
    det text;
    hin text;
BEGIN
    EXECUTE format('SELECT COALESCE(array_agg(p::text), ''{}'')::text FROM %s($1, $2, $3, $4, $5, $6, $7) AS p',
                   planner)
       INTO r USING c.strategy, c.max_moves, c.nodes, c.shards, c.shard_nodes, c.shard_bytes, c.pinned;
    RETURN r;
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                            hin = PG_EXCEPTION_HINT;
    RETURN format('ERROR %s: %s | DETAIL: %s | HINT: %s', st, msg, det, hin);
END $$;

-- One batch: n cases from a seed; what they covered.
CREATE FUNCTION diff_batch(seed float8, n integer)
    RETURNS TABLE (cases integer, differ integer, refused integer, planned integer, moves bigint,
                   by_size integer, pinned integer, limited integer, max_nodes integer, max_shards integer)
    LANGUAGE plpgsql AS $$
DECLARE
    c diff_case;
    a text;
    b text;
BEGIN
    PERFORM setseed(seed);
    cases := 0; differ := 0; refused := 0; planned := 0; moves := 0; by_size := 0; pinned := 0;
    limited := 0; max_nodes := 0; max_shards := 0;
    FOR i IN 1 .. n LOOP
        c := random_case();
        IF random() < 0.1 THEN c := spoil(c); END IF;
        a := outcome('shardid._rebalance_moves_plpgsql', c);
        b := outcome('shardid._rebalance_moves', c);
        cases := cases + 1;
        IF a IS DISTINCT FROM b THEN
            differ := differ + 1;
            INSERT INTO differences VALUES (seed, i, c, a, b);
        END IF;
        IF a LIKE 'ERROR%' THEN
            refused := refused + 1;
        ELSIF a <> '{}' THEN
            planned := planned + 1;
            moves := moves + cardinality(a::text[]);
        END IF;
        by_size := by_size + ((c.strategy = 'by_size') IS TRUE)::integer;
        pinned := pinned + ((cardinality(c.pinned) > 0) IS TRUE)::integer;
        limited := limited + (c.max_moves IS NOT NULL)::integer;
        max_nodes := greatest(max_nodes, cardinality(c.nodes));
        max_shards := greatest(max_shards, cardinality(c.shards));
    END LOOP;
    RETURN NEXT;
END $$;

CREATE TABLE batches AS SELECT * FROM diff_batch(0, 0) WHERE false;
EOF

start=$SECONDS
for ((ran = 0, batch = 0; ran < cases; ran += 100, batch++)); do
	n=$((cases - ran < 100 ? cases - ran : 100))
	# setseed() takes -1 .. 1
	s=$(awk -v s="$seed" -v b="$batch" 'BEGIN { printf "%.6f", ((s * 7919 + b) % 2000) / 1000 - 1 }')
	q -d diff -c "INSERT INTO batches SELECT * FROM diff_batch($s, $n)"
	echo "$((ran + n)) cases, $((SECONDS - start)) s"
done

summary=$(q -d diff -F ' ' -c "SELECT sum(cases), sum(differ), sum(refused), sum(planned), sum(moves), sum(by_size),
                                      sum(pinned), sum(limited), max(max_nodes), max(max_shards) FROM batches")
read -r n_cases n_differ n_refused n_planned n_moves n_size n_pinned n_limited n_nodes n_shards <<<"$summary"
echo "$n_cases cases: $n_planned plans ($n_moves moves), $n_refused refusals, $n_size by_size," \
	"$n_pinned with pins, $n_limited with max_moves; up to $n_nodes nodes and $n_shards shards"
if [ "$n_differ" != 0 ]; then
	q -d diff -c "SELECT seed, case_no, c, plpgsql, cpp FROM differences ORDER BY seed, case_no LIMIT 3" >&2
	fail "$n_differ of $n_cases cases differ"
fi
expect "cases where the planners differ" "$n_differ" 0
