#!/usr/bin/env bash
# test/e2e/apps.sh — the shard maps for applications (clients/python/
# shardid_router.py, clients/js/shardid-router.mjs) and the ORM integrations
# built on the Python one (shardid_sqlalchemy.py, shardid_django.py) on a
# router and two data nodes (16 shards), with Debian's packages
# (python3-psycopg(-pool), python3-sqlalchemy, python3-django, nodejs, node-pg):
#   1. both shard maps' unit tests (fakes) and live tests (the router's
#      placement, inserts and lookups by ID, errors raised unchanged, a
#      frozen shard waited for, and given up after the deadline); the ORM
#      integrations' unit tests and their example apps;
#   2. four writers, through the Python shard map, SQLAlchemy, Django and the
#      JavaScript shard map, insert into a shard of SHARDID_APPS_MB megabytes
#      (default 10) and into other shards, reading every row back by its ID,
#      while bin/shardid-move-shard moves that shard online from a to b, then
#      back with --drop-old: every insert a writer saw succeed is on the
#      final node exactly once, no other row is there, the writers saw no
#      error (only retries, on the moving shard only), and each of them ran
#      across both moves; meanwhile a reader runs ShardMap.fan_out() over
#      every shard, pass after pass, with a map reloaded only by the moved
#      shard's errors: each pass sees every shard once, without an error.
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
source test/lib/e2e.sh
source test/lib/apps.sh
PATH=$(pg_config --bindir):$PATH
export PATH
MB=${SHARDID_APPS_MB:-10}

JS=0
apps_js_available && JS=1
apps_need python3 python3-psycopg python3-psycopg-pool python3-psycopg2 python3-sqlalchemy python3-django
[ $JS = 0 ] || apps_need nodejs node-pg

apps_cluster
work=$(mktemp -d /tmp/shardid-apps.XXXXXX)
trap 'pg_stop_all; rm -rf "$work"' EXIT
if [ $JS = 1 ]; then
	apps_js_dir "$work/js"
	cp test/e2e/apps/writer.mjs "$work/js/"
fi
export PYTHONPATH=$top/clients/python
export SHARDID_LIVE="{\"router\": \"$R\", \"nodes\": $NODES}"

# --- 1. unit and live tests ---------------------------------------------------
echo "--- python $("$PYTHON" --version | cut -d' ' -f2), psycopg $("$PYTHON" -c 'import psycopg, psycopg_pool; print(psycopg.__version__, "pool", psycopg_pool.__version__)')"
(cd clients/python && "$PYTHON" -m unittest -v test_shardid_router) >"$work/python.log" 2>&1 ||
	{ cat "$work/python.log"; fail "python shard map tests"; }
grep -q "skipped" "$work/python.log" && { grep skipped "$work/python.log"; fail "python shard map tests were skipped"; }
ok "python shard map: $(tail -n 3 "$work/python.log" | grep -E '^Ran') (unit and live)"

if [ $JS = 1 ]; then
	echo "--- node $("$NODE" --version), node-pg $(dpkg-query -W -f='${Version}' node-pg)"
	(cd "$work/js" && "$NODE" --test --test-reporter=tap shardid-router.test.mjs) >"$work/node.log" 2>&1 ||
		{ cat "$work/node.log"; fail "js shard map tests"; }
	grep -q "^# skipped 0$" "$work/node.log" || { cat "$work/node.log"; fail "js live tests were skipped"; }
	ok "js shard map: $(grep -E '^# (pass|fail)' "$work/node.log" | tr '\n' ' ')(unit and live)"
fi

echo "--- sqlalchemy $("$PYTHON" -c 'import sqlalchemy; print(sqlalchemy.__version__)'), django $("$PYTHON" -c 'import django; print(django.get_version())')"
(cd clients/python && "$PYTHON" -m unittest -v test_shardid_orm) >"$work/orm.log" 2>&1 ||
	{ cat "$work/orm.log"; fail "ORM integration tests"; }
grep -q "skipped" "$work/orm.log" && { grep skipped "$work/orm.log"; fail "ORM integration tests were skipped"; }
ok "ORM integrations: $(grep -E '^Ran' "$work/orm.log")"

# the example apps: posts of users 3, 10, 19 (shards 3, 10, 3)
export SHARDID_ROUTER=$R SHARDID_NODES=$NODES
out=$("$PYTHON" clients/python/examples/sqlalchemy_app.py) || fail "sqlalchemy example: $out"
echo "# sqlalchemy_app.py: $out"
"$PYTHON" - "$out" <<'PY' || fail "sqlalchemy example"
import json, sys
o = json.loads(sys.argv[1])
ids = o["ids"]
assert o["shards"] == [3, 10, 3], o["shards"]
assert o["by_id"] == {ids[0]: [3, "sqlalchemy 3", "a"], ids[1]: [10, "sqlalchemy 10", "b"], ids[2]: [19, "sqlalchemy 19", "a"]}, o["by_id"]
assert o["in_list"] == sorted(ids) and o["fan_out"] == sorted(ids), o
assert all(int(i) > 2**53 for i in ids)
PY
ok "sqlalchemy example: inserts in the users' shards, get() by ID, IN by ID, fan-out"
out=$("$PYTHON" clients/python/examples/django_app/app.py) || fail "django example: $out"
echo "# django_app/app.py: $out"
"$PYTHON" - "$out" <<'PY' || fail "django example"
import json, sys
o = json.loads(sys.argv[1])
ids = o["ids"]
assert o["shards"] == [3, 10, 3] and o["nodes"] == ["a", "b", "a"], o
assert o["found"] == {i: {"id": i, "user_id": u, "body": f"django {u}"} for i, u in zip(ids, (3, 10, 19))}, o["found"]
assert [s for _, s in o["bulk"]] == [3, 3, 3] and all(int(i) > 2**53 for i, _ in o["bulk"]), o["bulk"]
PY
ok "django example: inserts and bulk_create in the users' shards, lookups by ID (django $(echo "$out" | sed 's/.*"django": "\([^"]*\)".*/\1/'))"
expect "rows the examples wrote, on their nodes" \
	"$(q -d "$A" <<<"SELECT count(*) FROM shard_0003.posts WHERE body ~ '^(sqlalchemy|django)'")/$(q -d "$B" <<<"SELECT count(*) FROM shard_0010.posts WHERE body ~ '^(sqlalchemy|django)'")" "7/2"

# --- 2. writers through the shard maps and ORMs while shard 3 moves ----------
rows=$((MB * 1000))
q -d "$A" <<<"INSERT INTO shard_0003.posts (user_id, body) SELECT 3, repeat(md5(g::text), 30) FROM generate_series(1, $rows) g" >/dev/null
echo "# shard 3: $rows rows, $(q -d "$A" <<<"SELECT pg_size_pretty(pg_total_relation_size('shard_0003.posts'))") on node a"

# each writer: shard 3 (moving) every other insert, shards 1 (a) and 10 (b) between
writers=(map sqlalchemy django)
pids=()
for w in "${writers[@]}"; do
	"$PYTHON" test/e2e/apps/writer.py "$w" "$R" "$NODES" 3,1,3,10 "$work/stop" "$work/$w.out" >"$work/$w.log" 2>&1 &
	pids+=($!)
done
if [ $JS = 1 ]; then
	(cd "$work/js" && exec "$NODE" writer.mjs "$R" "$NODES" 3,10,3,1 "$work/stop" "$work/js.out") >"$work/js.log" 2>&1 &
	pids+=($!)
	writers+=(js)
fi
outs=()
for w in "${writers[@]}"; do outs+=("$work/$w.out"); done
# and a reader: fan_out() over every shard, its map read again only on move errors
"$PYTHON" test/e2e/apps/fanout_reader.py "$R" "$NODES" "$work/stop" "$work/reader.out" >"$work/reader.log" 2>&1 &
reader=$!
passes() { { wc -l <"$work/reader.out"; } 2>/dev/null || echo 0; }
# (a writer slower to start has no file yet: not an error under pipefail)
acked() { { cat "${outs[@]}" 2>/dev/null || true; } | wc -l; }
for _ in $(seq 100); do [ "$(acked)" -ge 100 ] && break; sleep 0.1; done
[ "$(acked)" -ge 100 ] || { cat "$work"/*.log; fail "the writers did not start"; }

# move MOVE-ARGS... — run the move tool, timed; fail if it fails
move() {
	local t0 t1
	t0=$(date +%s%N)
	"$top/bin/shardid-move-shard" --router "$R" "$@" >"$work/move.log" 2>&1 || { cat "$work/move.log"; fail "move $*"; }
	t1=$(date +%s%N)
	echo "# moved ($*) in $(((t1 - t0) / 1000000)) ms"
}
sleep 1
n1=$(acked) p1=$(passes)
move --shard 3 --to b
sleep 1
n2=$(acked) p2=$(passes)
move --shard 3 --to a --drop-old
sleep 1
n3=$(acked) p3=$(passes)
touch "$work/stop"
for i in "${!writers[@]}"; do
	wait "${pids[$i]}" || { cat "$work/${writers[$i]}.log"; fail "the ${writers[$i]} writer failed"; }
	cat "$work/${writers[$i]}.log"
done
wait "$reader" || { cat "$work/reader.log"; fail "the fan-out reader failed"; }
cat "$work/reader.log"
expect "placement of shard 3 after both moves" "$(q -d "$R" <<<"SELECT node FROM shardid.placement WHERE shard = 3")" a
[ "$n1" -lt "$n2" ] && [ "$n2" -lt "$n3" ] || fail "the writers stopped during a move ($n1, $n2, $n3 acknowledged)"
for w in "${writers[@]}"; do
	per=$(awk '{ n[$2]++; r[$2] += $3 } END { printf "%d/%d/%d %d/%d/%d", n[3], n[1], n[10], r[3], r[1], r[10] }' "$work/$w.out")
	read -r counts retries <<<"$per"
	echo "# $w writer: inserts to shards 3/1/10: $counts, retries $retries"
	[ "${retries%%/*}" -gt 0 ] || fail "the $w writer never retried on the moving shard: did it see the moves?"
	expect "$w writer: no retry on the other shards" "${retries#*/}" "0/0"
done

# every acknowledged insert on its final node exactly once, nothing else there
ids_on() { q -d "$1" <<<"SELECT id FROM $2.posts WHERE body ~ '^(map|sqlalchemy|django|js) writer [0-9]+\$'" | sort; }
check() { # SHARD NODE-CONNSTR SCHEMA
	awk -v s="$1" '$2 == s { print $1 }' "${outs[@]}" | sort >"$work/acked.$1"
	ids_on "$2" "$3" >"$work/on.$1"
	expect "shard $1: acknowledged inserts missing on the node, duplicated, not acknowledged" \
		"$(comm -23 "$work/acked.$1" "$work/on.$1" | wc -l) $(uniq -d "$work/on.$1" | wc -l) $(comm -13 "$work/acked.$1" "$work/on.$1" | wc -l)" "0 0 0"
}
check 3 "$A" shard_0003
check 1 "$A" shard_0001
check 10 "$B" shard_0010
expect "shard 3 on node a: the rows loaded before the moves" \
	"$(q -d "$A" <<<"SELECT count(*) FROM shard_0003.posts WHERE length(body) = 960")" "$rows"
expect "node b: shard 3 unregistered, its copy dropped (--drop-old)" \
	"$(q -d "$B" <<<"SELECT count(*) FROM shardid.shard_registry WHERE shard = 3")/$(q -d "$B" <<<"SELECT count(*) FROM pg_namespace WHERE nspname ~ '^shard_0003'")" "0/0"
expect "node a: the first move's retired copy refuses writes" \
	"$(q -d "$A" <<<"SELECT count(*) FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname LIKE 'shard_0003_moved_%' AND g.tgname = 'shardid_retired'")" 1
# the reader: every pass saw each of the 16 shards once (it checks that
# itself), passes ran across both moves, and its stale map was corrected by
# the moved shard's errors alone: once per move at least (the first move's
# retired copy on a is renamed, the second's on b dropped)
[ "$p1" -gt 0 ] && [ "$p1" -lt "$p2" ] && [ "$p2" -lt "$p3" ] || fail "the fan-out reader stopped during a move ($p1, $p2, $p3 passes)"
read -r _ reader_retries reader_node < <(tail -n 1 "$work/reader.out")
[ "$reader_retries" -ge 2 ] || fail "the fan-out reader retried $reader_retries times: did its stale map see the moves?"
expect "fan-out reader: shard 3's node in its map after both moves" "$reader_node" a
ok "fan-out reader: $(passes) passes over 16 shards in batches of 4, $reader_retries retries on the moved shard"
slowest=$(cat "${outs[@]}" | awk '$2 == 3 && $4 > m { m = $4 } END { printf "%d", m }')
echo "# longest insert into the moving shard, retries included: $slowest ms"
[ $JS = 1 ] || apps_js_skipped "the JavaScript shard map's tests and writer"
echo "apps: all checks passed (writers: ${writers[*]})"
