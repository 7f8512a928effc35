#!/usr/bin/env bash
# test/e2e/rebalance.sh — CALL shardid.rebalance() over real nodes: a router
# (dblink; PL/Proxy where installed) and data nodes a, b with wal_level = logical, then c,
# just added and empty. Node a holds shard 0, about 10 MB, and seven small
# shards; b four small ones:
#   1. by_size and by_count plan differently (by count a looks like any
#      node; by size it is the full one); the CLI's dry run prints the
#      by_size plan and changes nothing;
#   2. CALL shardid.rebalance(max_moves => 1) makes one move; the session of
#      the next is terminated mid-move; the CLI resumes that move first and
#      makes the rest, printing each; then the nodes are balanced (rebalance_plan()
#      is empty, the spread of sizes fell), every shard is registered on
#      exactly its node with its rows, writes through the router reach the
#      moved shards, and no publication, subscription, slot or move row is
#      left;
#   3. pg_cron on the router runs the docs' one-step job (every minute here)
#      in the application database: it moves a shard to node d, just added
#      (without a pg_cron package for the major, the step is CALLed directly).
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
source test/lib/e2e.sh
PATH=$(pg_config --bindir):$PATH
export PATH
major=$(pg_config --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')

# pg_cron for part 3, Debian's package of this major (none for 19 yet:
# then part 3 makes the job's one step itself, and says so)
cron_pkg=postgresql-$major-cron cron=
if dpkg-query -W -f='${Status}' "$cron_pkg" 2>/dev/null | grep -q "ok installed"; then
	cron=1
elif [ "$(id -u)" = 0 ] && apt-cache show "$cron_pkg" >/dev/null 2>&1; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$cron_pkg" >/dev/null ||
		fail "cannot install $cron_pkg"
	cron=1
fi

logical=("wal_level = logical" "max_wal_senders = 20" "max_replication_slots = 20" "max_logical_replication_workers = 8"
	"wal_sender_timeout = 5s" "wal_receiver_status_interval = 1s")
for n in a b c d; do pg_start "node_$n" "${logical[@]}"; done
if [ -n "$cron" ]; then
	pg_start router "shared_preload_libraries = 'pg_cron'" "cron.database_name = 'postgres'"
	# pg_cron connects to run a job: through the router's own socket directory
	echo "cron.host = '$router_DIR'" >>"$router_DIR/data/postgresql.conf"
	as_postgres "$(pg_bindir)/pg_ctl" -D "$router_DIR/data" -w -l "$router_DIR/server.log" restart >/dev/null
else
	pg_start router
fi
A=$(connstr "$node_a_DIR") B=$(connstr "$node_b_DIR") C=$(connstr "$node_c_DIR") D=$(connstr "$node_d_DIR")
R=$(connstr "$router_DIR")
createdb_app "$node_a_DIR" "$node_b_DIR" "$node_c_DIR" "$node_d_DIR" "$router_DIR"

# --- nodes: a holds 0-7 (0 is big), b 8-11; c and d have the template only --
node_setup() {
	sql "$1" <<-EOF
	CREATE EXTENSION shardid;
	CREATE TABLE public.posts (id bigint PRIMARY KEY, user_id bigint NOT NULL, body text NOT NULL);
	CREATE FUNCTION public.insert_post(i_shard integer, i_body text) RETURNS bigint LANGUAGE plpgsql AS \$\$
	DECLARE new_id bigint;
	BEGIN
	    EXECUTE format('INSERT INTO %I.posts (user_id, body) VALUES (\$1, \$2) RETURNING id', shardid.shard_schema(i_shard))
	       INTO new_id USING i_shard, i_body;
	    RETURN new_id;
	END \$\$;
	EOF
}
for c in "$A" "$B" "$C" "$D"; do node_setup "$c" >/dev/null; done
sql "$A" >/dev/null <<<"SELECT shardid.create_shards(0, 7)"
sql "$B" >/dev/null <<<"SELECT shardid.create_shards(8, 11)"
for c in "$A" "$B" "$C" "$D"; do sql "$c" >/dev/null <<<"SELECT shardid.create_table('public.posts')"; done
sql "$A" >/dev/null <<'EOF'
INSERT INTO shard_0000.posts (user_id, body) SELECT g, repeat('x', 200) FROM generate_series(1, 40000) AS g;
DO $$ BEGIN
    FOR s IN 1 .. 7 LOOP
        EXECUTE format('INSERT INTO %I.posts (user_id, body) SELECT g, repeat(''x'', 200) FROM generate_series(1, 400) AS g', shardid.shard_schema(s));
    END LOOP;
END $$;
EOF
sql "$B" >/dev/null <<'EOF'
DO $$ BEGIN
    FOR s IN 8 .. 11 LOOP
        EXECUTE format('INSERT INTO %I.posts (user_id, body) SELECT g, repeat(''x'', 200) FROM generate_series(1, 400) AS g', shardid.shard_schema(s));
    END LOOP;
END $$;
EOF
# Sizes settle before anything is planned: autovacuum would otherwise add
# the tables' visibility and free space maps between two plans, and the
# by_size plans compared below could differ.
for c in "$A" "$B"; do sql "$c" >/dev/null <<<"VACUUM"; done
# writes routed through PL/Proxy where it is installed, else over dblink
if have_extension plproxy; then
	sql "$R" >/dev/null <<<"CREATE EXTENSION plproxy"
	routing=$(cat <<-'SQL'
	CREATE FUNCTION public.insert_post(i_shard integer, i_body text) RETURNS bigint AS $$
	    CLUSTER 'shardid'; RUN ON i_shard;
	$$ LANGUAGE plproxy;
	SQL
	)
else
	echo "# router: no PL/Proxy for PostgreSQL $major, routing over dblink"
	routing="$(router_dblink_sql)
	$(cat <<-'SQL'
	CREATE FUNCTION public.insert_post(i_shard integer, i_body text) RETURNS bigint LANGUAGE sql AS $$
	    SELECT t.id FROM public.dblink(public.shard_connstr(i_shard),
	                                   format('SELECT public.insert_post(%s, %L)', i_shard, i_body)) AS t(id bigint)
	$$;
	SQL
	)"
fi
sql "$R" >/dev/null <<EOF
CREATE EXTENSION dblink;
CREATE EXTENSION shardid;
SELECT shardid.add_node('a', '$A');
SELECT shardid.add_node('b', '$B');
SELECT shardid.place_shards('a', 0, 7);
SELECT shardid.place_shards('b', 8, 11);
SELECT shardid.add_node('c', '$C');
$routing
EOF
# the pause point used below (test/lib/move_pause.sql, not part of the extension)
sql "$R" >/dev/null <test/lib/move_pause.sql

# rows SHARD — the shard's rows, on the node that registers it (every node asked)
rows() {
	local c n total=0
	for c in "$A" "$B" "$C" "$D"; do
		n=$(psql -X -q -At -d "$c" -v s="$1" <<<"SELECT CASE WHEN EXISTS (SELECT FROM shardid.shard_registry WHERE shard = :s)
		    THEN (xpath('/row/c/text()', query_to_xml(format('SELECT count(*) AS c FROM %I.posts', shardid.shard_schema(:s)), false, true, '')))[1]::text::int
		    ELSE 0 END")
		total=$((total + n))
	done
	echo "$total"
}
# loads — each node's total shard size, as rebalance_plan('by_size') sees it
loads() { sql "$R" <<<"SELECT string_agg(n.node || '=' || COALESCE(s.bytes, 0), ' ' ORDER BY n.node) FROM shardid.nodes n
                        LEFT JOIN (SELECT node, sum(bytes) AS bytes FROM shardid.shard_sizes() GROUP BY node) s USING (node)"; }
spread() { sql "$R" <<<"SELECT max(COALESCE(s.bytes, 0)) - min(COALESCE(s.bytes, 0)) FROM shardid.nodes n
                         LEFT JOIN (SELECT node, sum(bytes) AS bytes FROM shardid.shard_sizes() GROUP BY node) s USING (node)"; }
# leftovers — publications, subscriptions, slots on every node; move rows
leftovers() {
	local c out=
	for c in "$A" "$B" "$C" "$D"; do
		out+=$(sql "$c" <<<"SELECT (SELECT count(*) FROM pg_publication) + (SELECT count(*) FROM pg_subscription)
		                          + (SELECT count(*) FROM pg_replication_slots)")
	done
	echo "nodes=$out moves=$(sql "$R" <<<"SELECT count(*) FROM shardid.shard_moves")"
}
clean="nodes=0000 moves=0"
placement() { sql "$R" <<<"SELECT string_agg(shard || ':' || node, ' ' ORDER BY shard) FROM shardid.shard_placement"; }

# --- 1. plans ------------------------------------------------------------------
before=$(placement)
rows_before=$(for s in $(seq 0 11); do echo -n "$(rows "$s") "; done)
by_size=$(sql "$R" <<<"SELECT string_agg(shard || ':' || source || '>' || target, ' ' ORDER BY step) FROM shardid.rebalance_plan()")
by_count=$(sql "$R" <<<"SELECT string_agg(shard || ':' || source || '>' || target, ' ' ORDER BY step) FROM shardid.rebalance_plan('by_count')")
echo "# loads before: $(loads)"
echo "# by_size plan:  $by_size"
psql -X -q -d "$R" -c "SELECT * FROM shardid.rebalance_plan()" | sed 's/^/#   /'
echo "# by_count plan: $by_count"
expect "by_count: the four highest shards of a to c" "$by_count" "7:a>c 6:a>c 5:a>c 4:a>c"
[[ " $by_size " != *" 0:"* ]] || fail "by_size plans to move the big shard 0: $by_size"
[ "$(wc -w <<<"$by_size")" -ge 7 ] && ! grep -qv '^[1-7]:a>[bc]$' <<<"${by_size// /$'\n'}" ||
	fail "by_size: expected the seven small shards of a to leave it: $by_size"
ok "by_size moves a's seven small shards and leaves its big one"
out=$("$top/bin/shardid-rebalance" --router "host=$router_DIR port=1 dbname=app" --dry-run 2>&1) &&
	fail "shardid-rebalance with an unreachable router succeeded"
[[ $out == *'cannot connect to the router: '*'.s.PGSQL.1'* ]] || fail "unreachable router: $out"
ok "CLI: an unreachable router is reported with libpq's reason"
dry=$("$top/bin/shardid-rebalance" --router "$R" --dry-run 2>/dev/null)
expect "dry run prints the by_size plan" "$(sed -E 's/^move shard ([0-9]+) from ([a-z]+) to ([a-z]+)$/\1:\2>\3/' <<<"$dry" | paste -sd ' ')" "$by_size"
expect "dry run changes nothing" "$(placement)" "$before"

# --- 2. rebalance ----------------------------------------------------------------
spread_before=$(spread)
out=$(sql "$R" <<<"CALL shardid.rebalance(max_moves => 1)" 2>&1) || { echo "$out"; fail "CALL shardid.rebalance(max_moves => 1) failed"; }
sed 's/^/#   /' <<<"$out"
first=${by_size%% *}
expect "max_moves => 1: one move, the plan's first" "$(grep -c '^NOTICE:  rebalance: shard' <<<"$out") $(grep -o 'rebalance: shard [0-9]* from node "[a-z]*" to node "[a-z]*"' <<<"$out")" \
	"1 rebalance: shard ${first%%:*} from node \"a\" to node \"${first##*>}\""
expect "max_moves => 1: placed on its target" "$(sql "$R" <<<"SELECT node FROM shardid.shard_placement WHERE shard = ${first%%:*}")" "${first##*>}"
# The next move's session is terminated while the move waits at caught_up
# (the test hook shardid_test.move_pause, loaded above): the move is left
# in progress, and the next rebalance resumes it first.
read -r s t <<<"$(sql "$R" <<<"SELECT shard, target FROM shardid.rebalance_plan(max_moves => 1)" | tr '|' ' ')"
coproc HOLD { psql -X -q -At -d "$R"; }
echo "SELECT pg_advisory_lock(hashtext('shardid_test.move_pause'), $s)::text;" >&"${HOLD[1]}"
read -r _ <&"${HOLD[0]}"
psql -X -q -d "$R" -c "SET shardid_test.move_pause = 'caught_up'" -c "CALL shardid.rebalance(max_moves => 1)" \
	>/dev/null 2>&1 &
bg=$!
for _ in $(seq 1 300); do
	[ "$(sql "$R" <<<"SELECT phase FROM shardid.shard_moves WHERE shard = $s")" = caught_up ] && break
	sleep 0.1
done
sql "$R" >/dev/null <<<"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'CALL shardid.rebalance%'"
wait $bg && fail "the terminated rebalance succeeded"
echo "SELECT pg_advisory_unlock(hashtext('shardid_test.move_pause'), $s);" >&"${HOLD[1]}"
# shellcheck disable=SC1083,SC2093  # closes the coprocess descriptor bash put in HOLD[1]
exec {HOLD[1]}>&-
wait $HOLD_PID || true
expect "terminated mid-move: the move of shard $s to $t is left in progress" \
	"$(sql "$R" <<<"SELECT target || ' ' || phase FROM shardid.shard_moves WHERE shard = $s")" "$t caught_up"
t0=$(date +%s)
made=$("$top/bin/shardid-rebalance" --router "$R" 2>"$router_DIR/rebalance.log") ||
	{ cat "$router_DIR/rebalance.log"; fail "shardid-rebalance failed"; }
echo "# CLI moves ($(($(date +%s) - t0)) s):"; sed 's/^/#   /' <<<"$made"
grep -q '^shardid-rebalance: balanced (moves made: [0-9]*)$' "$router_DIR/rebalance.log" ||
	{ cat "$router_DIR/rebalance.log"; fail "the CLI did not end balanced"; }
expect "the CLI resumed the move left in progress first" "$(head -n 1 <<<"$made")" "move shard $s to $t (resumed)"
rest=$(tail -n +2 <<<"$made")
[ -n "$rest" ] && ! grep -qv '^move shard [1-7] from a to [bc]$' <<<"$rest" || fail "CLI moves: $made"
ok "then $(wc -l <<<"$rest") more moves, small shards of a only"
echo "# loads after: $(loads)"
expect "balanced: rebalance_plan() is empty" "$(sql "$R" <<<"SELECT count(*) FROM shardid.rebalance_plan()")" 0
spread_after=$(spread)
[ "$spread_after" -lt "$spread_before" ] || fail "spread $spread_before -> $spread_after"
ok "spread of node sizes $spread_before -> $spread_after bytes"
expect "shard 0 stayed on a" "$(sql "$R" <<<"SELECT node FROM shardid.shard_placement WHERE shard = 0")" a
expect "every shard registered once, on its node" \
	"$(for s in $(seq 0 11); do n=$(sql "$R" <<<"SELECT node FROM shardid.shard_placement WHERE shard = $s"); c=
		for x in a b c d; do v=${x^^}; c+=$(sql "${!v}" <<<"SELECT count(*) FROM shardid.shard_registry WHERE shard = $s"); done
		echo -n "$n$c "; done)" \
	"$(for s in $(seq 0 11); do n=$(sql "$R" <<<"SELECT node FROM shardid.shard_placement WHERE shard = $s"); c=
		for x in a b c d; do [ "$x" = "$n" ] && c+=1 || c+=0; done; echo -n "$n$c "; done)"
expect "every shard kept its rows" "$(for s in $(seq 0 11); do echo -n "$(rows "$s") "; done)" "$rows_before"
expect "writes through the router reach every shard" \
	"$(sql "$R" <<<"SELECT string_agg(shardid.id_shard(public.insert_post(s, 'after'))::text, ' ' ORDER BY s) FROM generate_series(0, 11) AS s")" \
	"0 1 2 3 4 5 6 7 8 9 10 11"
expect "nothing left behind" "$(leftovers)" "$clean"
out=$("$top/bin/shardid-rebalance" --router "$R" 2>&1) || fail "a balanced rebalance failed: $out"
expect "called again: nothing to move" "$out" "shardid-rebalance: balanced: nothing to move"

# --- 3. pg_cron: one step a minute ----------------------------------------------------
sql "$R" >/dev/null <<<"SELECT shardid.add_node('d', '$D')"
expect "node d added: a plan to it" "$(sql "$R" <<<"SELECT count(*) > 0 FROM shardid.rebalance_plan() WHERE target = 'd'")" t
if [ -n "$cron" ]; then
	psql -X -q -At -v ON_ERROR_STOP=1 -h "$router_DIR" -p "$(cat "$router_DIR/port")" -U postgres -d postgres >/dev/null <<-'EOF'
	CREATE EXTENSION pg_cron;
	SELECT cron.schedule_in_database('shardid-rebalance', '* * * * *',
	                                 'CALL shardid.rebalance(max_moves => 1)', 'app');
	EOF
	cronq() { psql -X -q -At -v ON_ERROR_STOP=1 -h "$router_DIR" -p "$(cat "$router_DIR/port")" -U postgres -d postgres; }
	t0=$(date +%s) status=
	while [ $(($(date +%s) - t0)) -lt 150 ]; do
		status=$(cronq <<<"SELECT status || ': ' || return_message FROM cron.job_run_details
		                    WHERE status IN ('succeeded', 'failed') ORDER BY start_time LIMIT 1")
		[ -z "$status" ] || break
		sleep 2
	done
	cronq >/dev/null <<<"SELECT cron.unschedule('shardid-rebalance')"
	expect "pg_cron ran the job" "$status" "succeeded: CALL"
else
	echo "# SKIP pg_cron: the archive has no $cron_pkg; the job's step is CALLed here instead"
	sql "$R" >/dev/null <<<"CALL shardid.rebalance(max_moves => 1)"
fi
expect "the job moved one shard to d" "$(sql "$R" <<<"SELECT count(*) FROM shardid.shard_placement WHERE node = 'd'")" 1
expect "nothing left behind after the job" "$(leftovers)" "$clean"

echo "rebalance: all checks passed"
