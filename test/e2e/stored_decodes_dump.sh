#!/usr/bin/env bash
# test/e2e/stored_decodes_dump.sh — stored decodes survive pg_dump with a
# configured layout. pg_dump restores shardid.layout_config after the tables
# of schemas that sort before "shardid", so their generated columns are first
# computed with the default layout; the layout row's arrival recomputes them.
# Expression indexes are built after the data, with the restored layout.
set -euo pipefail
cd "$(dirname "$0")/../.."
source test/lib/e2e.sh
pg_start stored-decodes

createdb source_db
createdb target_db
q -d source_db >/dev/null <<'SQL'
CREATE EXTENSION shardid;
SELECT shardid.configure('2020-02-02 02:02:02.202+00', 11, 12);
CREATE SEQUENCE public.gen;
-- "public" sorts before "shardid", "zz" after it
CREATE TABLE public.posts (
    id bigint PRIMARY KEY DEFAULT shardid.next_id(7, 'public.gen'),
    created_at timestamptz GENERATED ALWAYS AS (shardid.id_time(id)) STORED,
    shard integer GENERATED ALWAYS AS (shardid.id_shard(id)) STORED,
    body text
);
CREATE INDEX posts_time ON public.posts (shardid.id_time(id));
CREATE SCHEMA zz;
CREATE TABLE zz.notes (id bigint PRIMARY KEY DEFAULT shardid.next_id(9, 'public.gen'),
                       created_at timestamptz GENERATED ALWAYS AS (shardid.id_time(id)) STORED);
INSERT INTO public.posts (body) SELECT 'post ' || g FROM generate_series(1, 500) g;
INSERT INTO public.posts (id, body) VALUES (shardid.make_id('2021-03-04 05:06:07.089+00', 2047, 4095), 'edge');
INSERT INTO zz.notes SELECT FROM generate_series(1, 50);
SQL

pg_dump -d source_db | q -d target_db >/dev/null

snapshot() {
	q -d "$1" -c "SELECT md5(string_agg(format('%s|%s|%s', id, created_at, shard), ',' ORDER BY id)) FROM public.posts" \
		-c "SELECT md5(string_agg(format('%s|%s', id, created_at), ',' ORDER BY id)) FROM zz.notes"
}
[ "$(snapshot source_db)" = "$(snapshot target_db)" ] || fail "generated columns differ after restore"
echo "ok - generated columns restored as the source computed them"

check=$(q -d target_db -c "
	SELECT count(*), count(*) FILTER (WHERE created_at = shardid.id_time(id) AND shard = shardid.id_shard(id)),
	       count(*) FILTER (WHERE shard = 7), (SELECT created_at FROM public.posts WHERE body = 'edge')
	  FROM public.posts")
[ "$check" = "501|501|500|2021-03-04 05:06:07.089+00" ] || fail "restored posts: $check"
echo "ok - restored generated columns match the restored layout: $check"

# The expression index answers like a sequential scan.
window="shardid.id_time(id) >= now() - interval '1 day' AND shardid.id_time(id) < now() + interval '1 day'"
plan=$(q -d target_db -c "SET enable_seqscan = off" -c "EXPLAIN (COSTS OFF) SELECT count(*) FROM public.posts WHERE $window")
echo "$plan" | grep -q "posts_time" || fail "the expression index is not used: $plan"
by_index=$(q -d target_db -c "SET enable_seqscan = off" -c "SELECT count(*) FROM public.posts WHERE $window")
by_seq=$(q -d target_db -c "SET enable_indexscan = off" -c "SET enable_bitmapscan = off" \
	-c "SELECT count(*) FROM public.posts WHERE $window")
[ "$by_index" = 500 ] && [ "$by_seq" = 500 ] || fail "index scan $by_index rows, seq scan $by_seq rows, expected 500"
echo "ok - expression index on id_time(id) agrees with a seq scan (500 rows)"

err=$(psql -X -q -d target_db -v VERBOSITY=verbose <<<"SELECT shardid.configure('2021-01-01')" 2>&1 || true)
echo "$err" | grep -q "55000" || fail "configure() after restore was not refused: $err"
echo "ok - configure() refused after restore (55000)"
echo "stored_decodes_dump: all checks passed"
