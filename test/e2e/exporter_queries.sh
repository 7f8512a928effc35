#!/usr/bin/env bash
# test/e2e/exporter_queries.sh — the exporter query files work as shipped:
# examples/postgres_exporter/queries.yaml (every database with shardid) and
# router_queries.yaml (the router). Each query runs as a login role with
# pg_monitor and no other privilege but what router_setup.sql grants, against
# one database that is both a node (shards, generators) and a router (two
# nodes, one of them this database and one unreachable, a move in progress,
# a failed rebalance job), and returns exactly the columns the file declares
# as metrics, labels as text and gauges as numbers (empty for NULL: NaN).
# Then the sql_exporter collectors (examples/sql_exporter/*.collector.yml)
# hold the same queries, text for text, and one metric per value column named
# <query>_<column> with the query's labels. Reads the files' own layout (a
# top-level name per query, "query: |" and a block, "metrics:" with
# "- column:" and "usage:"; "- query_name:", "- metric_name:" and flow lists
# in the collectors). Starts its own server.
set -euo pipefail
cd "$(dirname "$0")/../.."
source test/lib/e2e.sh
dir=examples/postgres_exporter
yamls=("$dir/queries.yaml" "$dir/router_queries.yaml")
collectors=(examples/sql_exporter/*.collector.yml)

work=$(mktemp -d /tmp/shardid-exporter.XXXXXX)
trap 'rm -rf "$work"; pg_stop_all' EXIT
awk -v dir="$work" '
	/^[a-z_]+:$/ { name = substr($0, 1, length($0) - 1); print name > (dir "/queries"); next }
	/^  query: \|$/ { inquery = 1; next }
	inquery && /^    / { print substr($0, 5) > (dir "/" name ".sql"); next }
	{ inquery = 0 }
	/^    - [a-z_]+:$/ { metric = $2; sub(/:$/, "", metric); next }
	/^        usage: / { usage = $2; gsub(/"/, "", usage); print metric, usage > (dir "/" name ".metrics") }
' "${yamls[@]}"
[ -s "$work/queries" ] || fail "no query found in ${yamls[*]}"
expect "queries: one of each name" "$(sort "$work/queries" | uniq -d)" ""

pg_start exporter
trap 'rm -rf "$work"; pg_stop_all' EXIT # (pg_start set its own)
createdb app
q -d app >/dev/null <<SQL
CREATE EXTENSION shardid;
CREATE EXTENSION dblink;
SELECT shardid.create_shards(0, 1);
CREATE TABLE photos (id bigint PRIMARY KEY, caption text);
SELECT shardid.create_table('photos');
INSERT INTO shard_0001.photos (caption) SELECT 'burst' FROM generate_series(1, 5000);
CREATE ROLE exporter LOGIN IN ROLE pg_monitor;
-- the router: node a is this database (shards 0 and 1), node b unreachable;
-- shard 1 is being moved to b (no session runs it), a rebalance job failed
SELECT shardid.add_node('a', '$(connstr "$exporter_DIR")');
SELECT shardid.add_node('b', 'host=$exporter_DIR port=1 user=postgres dbname=app', force => true);
SELECT shardid.place_shards('a', 0, 1);
INSERT INTO shardid.shard_moves (shard, source, target, schema_name, mode, phase,
                                 tables_ready, tables_total, bytes_copied, bytes_total, lag_bytes)
    VALUES (1, 'a', 'b', 'shard_0001', 'online', 'copy', 0, 1, 8192, 65536, 0);
INSERT INTO shardid.rebalance_jobs (kind, options, state, moves_done, moves_planned, last_error, finished_at)
    VALUES ('rebalance', '{}', 'failed', 1, 3, 'failed in a test', now());
SQL
q -d app -f "$dir/router_setup.sql" >/dev/null

# value QUERY-OUTPUT COLUMN ROW — one field of psql's CSV output (no quoted
# commas in what these queries return).
value() { awk -F, -v col="$2" -v row="$3" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == col) c = i } NR == row + 1 { print $c }' <<<"$1"; }
# row_where QUERY-OUTPUT COLUMN VALUE — the number of the first row whose COLUMN is VALUE.
row_where() { awk -F, -v col="$2" -v val="$3" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == col) c = i } NR > 1 && $c == val { print NR - 1; exit }' <<<"$1"; }

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
r0=$(row_where "$gen" schema shard_0000) r1=$(row_where "$gen" schema shard_0001)
expect "shard_0001 label" "$(value "$gen" shard "$r1")" 1
expect "shard_0001 ids_per_ms" "$(value "$gen" ids_per_ms "$r1")" 1024
expect "shard_0001 max_drift_seconds" "$(value "$gen" max_drift_seconds "$r1")" 2.000000
[ -n "$(value "$gen" last_time_seconds "$r1")" ] || fail "shard_0001 has no last_time_seconds"
ok "shard_0001 last_time_seconds set"
expect "shard_0000 last_time_seconds (no ID yet)" "$(value "$gen" last_time_seconds "$r0")" ""
expect "layout in_use" "$(value "$(cat "$work/shardid_layout.csv")" in_use 1)" 1
node=$(cat "$work/shardid_node.csv")
expect "node shards" "$(value "$node" shards 1)" 2
[ "$(value "$node" bytes 1)" -gt 0 ] || fail "node bytes: $(value "$node" bytes 1)"
ok "node bytes ($(value "$node" bytes 1))"

# The router's: the move, the shards per node, the failed job, the problems.
moves=$(cat "$work/shardid_moves.csv")
expect "moves: shard 1 in phase copy, no session, no error" \
	"$(value "$moves" shard 1) $(value "$moves" phase 1) $(value "$moves" running 1) $(value "$moves" error 1) $(value "$moves" bytes_total 1)" \
	"1 copy 0 0 65536"
placement=$(cat "$work/shardid_placement.csv")
ra=$(row_where "$placement" node a) rb=$(row_where "$placement" node b)
expect "placement a: shards frozen moving_out moving_in" \
	"$(value "$placement" shards "$ra") $(value "$placement" frozen "$ra") $(value "$placement" moving_out "$ra") $(value "$placement" moving_in "$ra")" "2 0 1 0"
expect "placement b: shards frozen moving_out moving_in" \
	"$(value "$placement" shards "$rb") $(value "$placement" frozen "$rb") $(value "$placement" moving_out "$rb") $(value "$placement" moving_in "$rb")" "0 0 0 1"
rebalance=$(cat "$work/shardid_rebalance.csv")
expect "rebalance: kind state failed running moves" \
	"$(value "$rebalance" kind 1) $(value "$rebalance" state 1) $(value "$rebalance" failed 1) $(value "$rebalance" running 1) $(value "$rebalance" moves_done 1)/$(value "$rebalance" moves_planned 1)" \
	"rebalance failed 1 0 1/3"
cluster=$(cat "$work/shardid_cluster.csv")
expect "cluster: node_unreachable" "$(value "$cluster" problems "$(row_where "$cluster" kind node_unreachable)")" 1
expect "cluster: problems in all" "$(awk -F, 'NR > 1 { n += $2 } END { print n }' <<<"$cluster")" 1
# Without router_setup.sql's grants the exporter is refused, as documented.
q -d app -c "REVOKE EXECUTE ON FUNCTION shardid_exporter.check_cluster() FROM pg_monitor" >/dev/null
if psql -X -q -v ON_ERROR_STOP=1 -U exporter -d app -f "$work/shardid_cluster.sql" >/dev/null 2>&1; then
	fail "shardid_cluster ran without router_setup.sql's grant"
fi
ok "shardid_cluster needs router_setup.sql's grant"

# The sql_exporter collectors: the same queries and metrics.
awk -v dir="$work" '
	/^  - query_name: / { name = $3; inquery = 0; next }
	/^    query: \|$/ { inquery = 1; next }
	inquery && /^      / { print substr($0, 7) > (dir "/sx_" name ".sql"); next }
	{ inquery = 0 }
	/^  - metric_name: / { metric = $3; type = ""; labels = "-"; values = ""; next }
	/^    type: / { type = $2; next }
	/^    key_labels: \[/ { labels = substr($0, index($0, "[") + 1); sub(/\]$/, "", labels); gsub(/, /, ",", labels); next }
	/^    values: \[/ { values = substr($0, index($0, "[") + 1); sub(/\]$/, "", values); next }
	/^    query_ref: / { print metric, type, labels, values, $2 > (dir "/sx_metrics") }
' "${collectors[@]}"
while read -r name; do
	[ -s "$work/sx_$name.sql" ] || fail "sql_exporter: no query $name"
	cmp -s "$work/$name.sql" "$work/sx_$name.sql" ||
		fail "sql_exporter: query $name differs: $(diff "$work/$name.sql" "$work/sx_$name.sql" || true)"
	labels=$(awk '$2 == "LABEL" { l = l (l == "" ? "" : ",") $1 } END { print (l == "" ? "-" : l) }' "$work/$name.metrics")
	awk -v q="$name" -v l="$labels" '$2 != "LABEL" { print q "_" $1, tolower($2), l, $1, q }' "$work/$name.metrics"
done <"$work/queries" | sort >"$work/metrics_expected"
sort "$work/sx_metrics" >"$work/metrics_sx"
cmp -s "$work/metrics_expected" "$work/metrics_sx" ||
	fail "sql_exporter: metrics differ from the postgres_exporter files: $(diff "$work/metrics_expected" "$work/metrics_sx" || true)"
ok "sql_exporter: $(wc -l <"$work/metrics_sx") metrics of $(wc -l <"$work/queries") queries, as in the postgres_exporter files"
