#!/usr/bin/env bash
# test/e2e/layout_dump.sh — the layout travels with pg_dump: a database with a
# configured, frozen layout restored into another keeps the layout, stays
# frozen (a later data-only restore of another layout is refused), and its
# generators continue above the dumped IDs.
set -euo pipefail
cd "$(dirname "$0")/../.."
source test/lib/e2e.sh
pg_start layout-dump

createdb source_db
createdb target_db
q -d source_db >/dev/null <<'SQL'
CREATE EXTENSION shardid;
SELECT shardid.configure('2020-02-02 02:02:02.202+00', 11, 12);
CREATE SEQUENCE public.gen;
CREATE TABLE public.items (id bigint PRIMARY KEY DEFAULT shardid.next_id(7, 'public.gen'), v int);
INSERT INTO public.items (v) SELECT g FROM generate_series(1, 3000) g;
SQL

pg_dump -d source_db | q -d target_db >/dev/null

src=$(q -d source_db -c "SELECT epoch, shard_bits, seq_bits, in_use FROM shardid.layout()")
dst=$(q -d target_db -c "SELECT epoch, shard_bits, seq_bits, in_use FROM shardid.layout()")
[ "$src" = "$dst" ] || fail "layout differs after restore: '$src' vs '$dst'"
case "$dst" in
	"2020-02-02 02:02:02.202+00|11|12|t") echo "ok - restored layout: $dst" ;;
	*) fail "unexpected restored layout: $dst" ;;
esac

state=$(q -d target_db -c "SELECT count(*) FROM shardid.layout_config")
[ "$state" = 1 ] || fail "layout_config holds $state rows after restore, expected 1"
echo "ok - one layout row after restore"

err=$(psql -X -q -d target_db -c "\\set VERBOSITY verbose" \
	-c "SELECT shardid.configure('2021-01-01')" 2>&1 || true)
echo "$err" | grep -q "55000" || fail "configure() after restore was not refused with 55000: $err"
echo "ok - configure() refused after restore (55000)"

# A data-only restore of another database's layout into one that has issued
# IDs is refused by the trigger on layout_config, as is emptying the table
# first: the restored database keeps its layout.
createdb other_db
q -d other_db -c "CREATE EXTENSION shardid" -c "SELECT shardid.configure('2021-01-01', 12, 11)" >/dev/null
err=$(pg_dump -d other_db --data-only -t shardid.layout_config |
	psql -X -q -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -d target_db 2>&1 || true)
echo "$err" | grep -q "ERROR:  55000: the layout cannot change" ||
	fail "a data-only restore of another layout was not refused with 55000: $err"
err=$(psql -X -q -v VERBOSITY=verbose -d target_db -c "TRUNCATE shardid.layout_config" 2>&1 || true)
echo "$err" | grep -q "ERROR:  55000: the layout cannot change" || fail "TRUNCATE of the layout was not refused: $err"
now=$(q -d target_db -c "SELECT epoch, shard_bits, seq_bits, in_use FROM shardid.layout()")
[ "$now" = "$dst" ] || fail "the layout changed under a data-only restore: '$now', was '$dst'"
echo "ok - a data-only restore of another layout, and TRUNCATE, refused (55000); layout kept"

max_src=$(q -d source_db -c "SELECT max(id) FROM public.items")
q -d target_db -c "INSERT INTO public.items (v) SELECT g FROM generate_series(1, 3000) g"
check=$(q -d target_db -c "
	SELECT count(*) FILTER (WHERE id > $max_src), bool_and(shardid.id_shard(id) = 7), count(DISTINCT id)
	  FROM public.items WHERE v IS NOT NULL")
[ "$check" = "3000|t|6000" ] || fail "after restore: new IDs above / shard / distinct = $check"
echo "ok - 3000 new IDs above $max_src, all on shard 7, 6000 distinct"
echo "layout_dump: all checks passed"
