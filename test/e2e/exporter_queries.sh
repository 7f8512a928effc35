#!/usr/bin/env bash
# test/e2e/exporter_queries.sh — the postgres_exporter queries file
# (examples/postgres_exporter/queries.yaml) works as shipped: each query runs
# as a login role with pg_monitor and no other privilege, against a database
# with generators, and returns exactly the columns the file declares as
# metrics, labels as text and gauges as numbers (empty for NULL: NaN).
# Reads the file's own layout (a top-level name per query, "query: |" and a
# block, "metrics:" with "- column:" and "usage:"). Starts its own server.
set -euo pipefail
cd "$(dirname "$0")/../.."
source test/lib/e2e.sh
yaml=examples/postgres_exporter/queries.yaml

work=$(mktemp -d /tmp/shardid-exporter.XXXXXX)
trap 'rm -rf "$work"; pg_stop_all' EXIT
awk -v dir="$work" '
	/^[a-z_]+:$/ { name = substr($0, 1, length($0) - 1); print name > (dir "/queries"); next }
	/^  query: \|$/ { inquery = 1; next }
	inquery && /^    / { print substr($0, 5) > (dir "/" name ".sql"); next }
	{ inquery = 0 }
	/^    - [a-z_]+:$/ { metric = $2; sub(/:$/, "", metric); next }
	/^        usage: / { usage = $2; gsub(/"/, "", usage); print metric, usage > (dir "/" name ".metrics") }
' "$yaml"
[ -s "$work/queries" ] || fail "no query found in $yaml"

pg_start exporter
createdb app
q -d app >/dev/null <<'SQL'
CREATE EXTENSION shardid;
SELECT shardid.create_shards(0, 1);
CREATE TABLE photos (id bigint PRIMARY KEY, caption text);
SELECT shardid.create_table('photos');
INSERT INTO shard_0001.photos (caption) SELECT 'burst' FROM generate_series(1, 5000);
CREATE ROLE exporter LOGIN IN ROLE pg_monitor;
SQL

# value QUERY-OUTPUT COLUMN ROW — one field of psql's CSV output (no quoted
# commas in what these queries return).
value() { awk -F, -v col="$2" -v row="$3" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == col) c = i } NR == row + 1 { print $c }' <<<"$1"; }

while read -r name; do
	[ -s "$work/$name.sql" ] || fail "$name: no query"
	[ -s "$work/$name.metrics" ] || fail "$name: no metrics"
	out=$(psql -X -q --csv -v ON_ERROR_STOP=1 -U exporter -d app -f "$work/$name.sql" 2>&1) ||
		fail "$name: the query failed as a pg_monitor role: $out"
	rows=$(($(wc -l <<<"$out") - 1))
	[ "$rows" -ge 1 ] || fail "$name: no rows"
	columns=$(head -n 1 <<<"$out" | tr ',' '\n' | sort)
	declared=$(cut -d' ' -f1 "$work/$name.metrics" | sort)
	expect "$name: columns are the declared metrics" "$(echo $columns)" "$(echo $declared)"
	while read -r metric usage; do
		case $usage in
			LABEL) ;;
			GAUGE | COUNTER)
				for r in $(seq "$rows"); do
					v=$(value "$out" "$metric" "$r")
					[[ -z "$v" || "$v" =~ ^-?[0-9]+(\.[0-9]+)?$ ]] || fail "$name.$metric: '$v' is not a number"
				done ;;
			*) fail "$name.$metric: unknown usage $usage" ;;
		esac
	done <"$work/$name.metrics"
	ok "$name: $rows rows, every metric column present and typed"
	printf '%s\n' "$out" >"$work/$name.csv"
done <"$work/queries"

# The values: shard 1's generator issued IDs, shard 0's none yet.
gen=$(cat "$work/shardid_generators.csv")
row_of() { awk -F, -v s="$1" 'NR > 1 && $1 == s { print NR - 1 }' <<<"$gen"; }
r0=$(row_of shard_0000) r1=$(row_of shard_0001)
expect "shard_0001 label" "$(value "$gen" shard "$r1")" 1
expect "shard_0001 ids_per_ms" "$(value "$gen" ids_per_ms "$r1")" 1024
expect "shard_0001 max_drift_seconds" "$(value "$gen" max_drift_seconds "$r1")" 2.000000
[ -n "$(value "$gen" last_time_seconds "$r1")" ] || fail "shard_0001 has no last_time_seconds"
ok "shard_0001 last_time_seconds set"
expect "shard_0000 last_time_seconds (no ID yet)" "$(value "$gen" last_time_seconds "$r0")" ""
expect "layout in_use" "$(value "$(cat "$work/shardid_layout.csv")" in_use 1)" 1
