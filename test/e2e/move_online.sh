#!/usr/bin/env bash
# test/e2e/move_online.sh — online shard moves (bin/shardid-move-shard) on a
# PL/Proxy router and two data nodes with wal_level = logical:
#   1. a shard of SHARDID_MOVE_MB megabytes (default 300; 20 for a quick
#      run) moves while a writer inserts through the router: every
#      acknowledged row is on the target exactly once, the longest pause
#      between two successful writes to the shard is under 1.5 s, writes to
#      other shards never fail; the pauses are reported;
#   2. interruptions in every phase: SIGINT rolls back (or, once repointed,
#      the re-run finishes), SIGKILL then a re-run finishes or --abort rolls
#      back, the target restarted during the copy; after each, the shard is
#      writable where it is placed and no publication, subscription, slot,
#      frozen trigger or half copy is left on either node;
#   3. a shard whose schema name has a quote, a semicolon and capitals;
#   4. refusals: wal_level, a table without replica identity, bad arguments,
#      an unreachable router, resuming to another node, DDL during the copy;
#      the --offline path;
#   5. shardid-rebalance: a dry run that changes nothing, then the planned
#      moves onto an empty node.
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
source test/lib/e2e.sh
export PATH=$(pg_config --bindir):$PATH
MB=${SHARDID_MOVE_MB:-300}


logical=("wal_level = logical" "max_wal_senders = 20" "max_replication_slots = 20" "max_logical_replication_workers = 8"
	"wal_sender_timeout = 5s" "wal_receiver_status_interval = 1s")
pg_start node_a "${logical[@]}"
pg_start node_b "${logical[@]}"
pg_start router
A=$(connstr "$node_a_DIR")
B=$(connstr "$node_b_DIR")
R=$(connstr "$router_DIR")
sql() { psql -X -q -At -v ON_ERROR_STOP=1 -d "$1"; }
for d in "$node_a_DIR" "$node_b_DIR" "$router_DIR"; do
	createdb -h "$d" -p "$(cat "$d/port")" -U postgres app
done
ODD="Odd'; DROP TABLE x;--Shard"

# --- 16 shards: 0-7 on a (6 in a schema with an odd name), 8-15 on b -------
node_setup() {
	sql "$1" <<-EOF
	CREATE EXTENSION shardid;
	CREATE TABLE public.posts (id bigint PRIMARY KEY, user_id bigint NOT NULL, body text NOT NULL);
	CREATE FUNCTION public.user_shard(i_user bigint) RETURNS integer LANGUAGE sql IMMUTABLE AS 'SELECT (i_user % 16)::integer';
	CREATE FUNCTION public.insert_post(i_user bigint, i_body text) RETURNS bigint LANGUAGE plpgsql AS \$\$
	DECLARE new_id bigint;
	BEGIN
	    EXECUTE format('INSERT INTO %I.posts (user_id, body) VALUES (\$1, \$2) RETURNING id',
	                   shardid.shard_schema(public.user_shard(i_user))) INTO new_id USING i_user, i_body;
	    RETURN new_id;
	END \$\$;
	CREATE FUNCTION public.shard_ids(i_shards integer[]) RETURNS SETOF bigint LANGUAGE plpgsql AS \$\$
	BEGIN
	    RETURN QUERY EXECUTE (SELECT string_agg(format('SELECT p.id FROM %I.posts AS p', shardid.shard_schema(s)), ' UNION ALL ')
	                            FROM unnest(i_shards) AS s);
	END \$\$;
	EOF
}
node_setup "$A" >/dev/null
node_setup "$B" >/dev/null
sql "$A" >/dev/null <<EOF
SELECT shardid.create_shards(0, 5);
SELECT shardid.create_shard(7);
SELECT shardid.create_table('public.posts');
CREATE SCHEMA "${ODD//\"/\"\"}";
CREATE SEQUENCE "${ODD//\"/\"\"}".id_seq;
SELECT shardid.attach_shard(6, '${ODD//\'/\'\'}');
EOF
sql "$B" >/dev/null <<<"SELECT shardid.create_shards(8, 15); SELECT shardid.create_table('public.posts');"
sql "$R" >/dev/null <<EOF
CREATE EXTENSION plproxy;
CREATE EXTENSION shardid;
SELECT shardid.add_node('a', '$A');
SELECT shardid.add_node('b', '$B');
SELECT shardid.place_shards('a', 0, 7);
SELECT shardid.place_shards('b', 8, 15);
CREATE FUNCTION public.user_shard(i_user bigint) RETURNS integer LANGUAGE sql IMMUTABLE AS 'SELECT (i_user % 16)::integer';
CREATE FUNCTION public.insert_post(i_user bigint, i_body text) RETURNS bigint AS \$\$
    CLUSTER 'shardid'; RUN ON public.user_shard(i_user);
\$\$ LANGUAGE plproxy;
CREATE FUNCTION public.shard_ids(i_shards integer[]) RETURNS SETOF bigint AS \$\$
    CLUSTER 'shardid'; SPLIT i_shards; RUN ON i_shards;
\$\$ LANGUAGE plproxy;
-- Every ID the application was given, when, and after how many retries.
CREATE TABLE public.written (n bigserial PRIMARY KEY, id bigint NOT NULL UNIQUE, user_id bigint NOT NULL,
                             at timestamptz NOT NULL DEFAULT clock_timestamp(), retries integer NOT NULL DEFAULT 0);
CREATE TABLE public.stop_writer (stop boolean NOT NULL);
-- Writes to i_users in turn until stop_writer has a row; retries a write
-- refused with 25006 (frozen for the cut-over, or the retired copy).
CREATE PROCEDURE public.writer(i_users bigint[], i_pause float8) LANGUAGE plpgsql AS \$\$
DECLARE
    u bigint; new_id bigint; tries integer; i integer := 0;
BEGIN
    WHILE NOT EXISTS (SELECT FROM public.stop_writer) LOOP
        i := i + 1;
        u := i_users[1 + i % array_length(i_users, 1)];
        tries := 0;
        LOOP
            BEGIN
                new_id := public.insert_post(u, 'writer ' || i);
                EXIT;
            EXCEPTION WHEN read_only_sql_transaction THEN
                tries := tries + 1;
                IF tries > 5000 THEN RAISE; END IF;
            END;
            COMMIT;
            PERFORM pg_sleep(0.001);
        END LOOP;
        INSERT INTO public.written (id, user_id, retries) VALUES (new_id, u, tries);
        COMMIT;
        PERFORM pg_sleep(i_pause);
    END LOOP;
END \$\$;
EOF
move=("$top/bin/shardid-move-shard" --router "$R")

# leftovers — what a move may leave behind, on both nodes: publications,
# subscriptions, slots, frozen triggers, and the router's move rows
leftovers() {
	echo "pub=$(sql "$A" <<<"SELECT count(*) FROM pg_publication")+$(sql "$B" <<<"SELECT count(*) FROM pg_publication")" \
		"sub=$(sql "$A" <<<"SELECT count(*) FROM pg_subscription")+$(sql "$B" <<<"SELECT count(*) FROM pg_subscription")" \
		"slots=$(sql "$A" <<<"SELECT count(*) FROM pg_replication_slots")+$(sql "$B" <<<"SELECT count(*) FROM pg_replication_slots")" \
		"frozen=$(sql "$A" <<<"SELECT count(*) FROM pg_trigger WHERE tgname = 'shardid_move_frozen'")+$(sql "$B" <<<"SELECT count(*) FROM pg_trigger WHERE tgname = 'shardid_move_frozen'")" \
		"moves=$(sql "$R" <<<"SELECT count(*) FROM shardid.shard_moves")"
}
clean="pub=0+0 sub=0+0 slots=0+0 frozen=0+0 moves=0"
# where SHARD — node of the placement / nodes registering it
where() {
	echo "$(sql "$R" <<<"SELECT node FROM shardid.shard_placement WHERE shard = $1")" \
		"a:$(sql "$A" <<<"SELECT count(*) FROM shardid.shard_registry WHERE shard = $1")" \
		"b:$(sql "$B" <<<"SELECT count(*) FROM shardid.shard_registry WHERE shard = $1")"
}
# writable SHARD — a write through the router lands on the shard
writable() { sql "$R" <<<"SELECT shardid.id_shard(insert_post($1, 'check'))"; }

# --- refusals -----------------------------------------------------------------
out=$("$top/bin/shardid-move-shard" --router 2>&1) && fail "--router without a value accepted"
[[ $out == *'--router needs a value'* ]] || fail "missing value: $out"
ok "--router without a value: usage"
out=$("$top/bin/shardid-move-shard" --router "host=$router_DIR port=1 dbname=app" --shard 1 --to b 2>&1) &&
	fail "unreachable router accepted"
[[ $out == *'cannot connect to the router'* ]] || fail "unreachable router: $out"
ok "unreachable router reported as such"
sql "$A" >/dev/null <<<"CREATE TABLE shard_0001.nokey (x int)"
out=$("${move[@]}" --shard 1 --to b 2>&1) && fail "move of a table without replica identity accepted"
[[ $out == *'neither a primary key nor a replica identity: shard_0001.nokey'* ]] || fail "replica identity: $out"
ok "table without primary key or replica identity refused up front"
sql "$A" >/dev/null <<<"DROP TABLE shard_0001.nokey"
expect "nothing left by the refusals" "$(leftovers)" "$clean"

# --- 1. a large shard moves under a writer ----------------------------------------
rows=$((MB * 1000))
t0=$(date +%s)
sql "$A" >/dev/null <<<"INSERT INTO shard_0003.posts (user_id, body) SELECT 3, repeat(md5(g::text), 30) FROM generate_series(1, $rows) g"
size=$(sql "$A" <<<"SELECT pg_size_pretty(pg_total_relation_size('shard_0003.posts'))")
echo "# shard 3: $rows rows, $size on node a (loaded in $(($(date +%s) - t0)) s)"
# users 3 and 19 are shard 3; 1, 10, 12 other shards (1 on a, 10 and 12 on b)
# Two writers, each its own router backend: shard 3 (users 3, 19), and
# other shards (1 on a; 10 and 12 on b), which must never wait for shard 3.
psql -X -q -v ON_ERROR_STOP=1 -d "$R" -c "CALL writer(ARRAY[3, 19]::bigint[], 0.002)" >"$router_DIR/writer.log" 2>&1 &
writer=$!
psql -X -q -v ON_ERROR_STOP=1 -d "$R" -c "CALL writer(ARRAY[1, 10, 12]::bigint[], 0.002)" >"$router_DIR/writer2.log" 2>&1 &
writer2=$!
for _ in $(seq 100); do [ "$(sql "$R" <<<"SELECT count(*) FROM written")" -ge 50 ] && break; sleep 0.1; done
before=$(sql "$R" <<<"SELECT count(*) FROM written")
sleep 1
move_start=$(sql "$R" <<<"SELECT clock_timestamp()")
t0=$(date +%s%N)
"${move[@]}" --shard 3 --to b 2>&1 | tee "$router_DIR/move.log"
[ "${PIPESTATUS[0]}" = 0 ] || fail "the move of shard 3 failed"
t1=$(date +%s%N)
sleep 1
sql "$R" <<<"INSERT INTO stop_writer VALUES (true)" >/dev/null
wait "$writer" || { cat "$router_DIR/writer.log"; fail "the writer failed"; }
wait "$writer2" || { cat "$router_DIR/writer2.log"; fail "the other writer failed"; }
after=$(sql "$R" <<<"SELECT count(*) FROM written")
[ "$before" -ge 50 ] && [ "$after" -gt $((before + 50)) ] || fail "the writer did not run across the move ($before, $after)"
ok "the writer ran across the move ($before rows before, $after at the end)"
expect "shard 3: placement and registries" "$(where 3)" "b a:0 b:1"
expect "every acknowledged shard-3 row on the target exactly once (missing, duplicated, extra)" \
	"$(sql "$R" <<<"WITH t AS (SELECT * FROM shard_ids(ARRAY[3])), w AS (SELECT id FROM written WHERE shardid.id_shard(id) = 3)
	  SELECT (SELECT count(*) FROM w WHERE id NOT IN (SELECT * FROM t)) || ' ' || (SELECT count(*) - count(DISTINCT t) FROM t) || ' ' ||
	         (SELECT count(*) FROM t) - (SELECT count(*) FROM w) - $rows")" "0 0 0"
expect "rows of shard 3 on node b: loaded + written" "$(sql "$B" <<<"SELECT count(*) FROM shard_0003.posts")" \
	"$((rows + $(sql "$R" <<<"SELECT count(*) FROM written WHERE shardid.id_shard(id) = 3")))"
pause=$(sql "$R" <<<"SELECT round(extract(epoch FROM max(gap)) * 1000) FROM (SELECT at - lag(at) OVER (ORDER BY n) AS gap FROM written WHERE shardid.id_shard(id) = 3) t")
other=$(sql "$R" <<<"SELECT round(extract(epoch FROM max(gap)) * 1000) FROM (SELECT at, at - lag(at) OVER (ORDER BY n) AS gap FROM written WHERE shardid.id_shard(id) <> 3) t WHERE at > '$move_start'")
other_before=$(sql "$R" <<<"SELECT round(extract(epoch FROM max(gap)) * 1000) FROM (SELECT at, at - lag(at) OVER (ORDER BY n) AS gap FROM written WHERE shardid.id_shard(id) <> 3) t WHERE at <= '$move_start'")
echo "# shard of $size moved in $(((t1 - t0) / 1000000)) ms; longest pause between writes: shard 3 ${pause} ms, other shards ${other} ms (${other_before} ms in the second before the move); retries $(sql "$R" <<<"SELECT sum(retries) FROM written")"
[ "$pause" -lt 1500 ] || fail "writes to shard 3 paused ${pause} ms"
ok "longest pause of writes to the moving shard under 1.5 s (${pause} ms)"
expect "writes to other shards never refused" "$(sql "$R" <<<"SELECT count(*) FROM written WHERE shardid.id_shard(id) <> 3 AND retries > 0")" 0
expect "shard-3 IDs increase in write order across the move" \
	"$(sql "$R" <<<"SELECT count(*) FILTER (WHERE id <= prev) FROM (SELECT id, lag(id) OVER (ORDER BY n) prev FROM written WHERE shardid.id_shard(id) = 3) t")" 0
expect "node a: old copy retired, refuses writes" \
	"$(sql "$A" <<<"SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0003'") $(sql "$A" <<<"SELECT count(*) FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname LIKE 'shard_0003_moved_%' AND g.tgname = 'shardid_retired'")" "0 1"
expect "nothing left behind" "$(leftovers)" "$clean"
expect "shard 3 takes writes on b" "$(writable 19)" 3

# --- 2. interruptions ---------------------------------------------------------------
pausefile=$router_DIR/paused
# start_paused SHARD TO PHASE [args] — run the move in the background, stopped at PHASE
start_paused() {
	local s=$1 to=$2 ph=$3; shift 3
	rm -f "$pausefile"
	# (a script's background jobs ignore SIGINT unless told otherwise)
	SHARDID_MOVE_PAUSE=$ph SHARDID_MOVE_PAUSE_FILE=$pausefile env --default-signal=INT,TERM \
		"${move[@]}" --shard "$s" --to "$to" --drop-old "$@" \
		>"$router_DIR/bg.log" 2>&1 &
	bg=$!
	for _ in $(seq 600); do [ -e "$pausefile" ] && return 0; kill -0 $bg 2>/dev/null || break; sleep 0.1; done
	cat "$router_DIR/bg.log"
	fail "the move did not reach phase $ph"
}
sql "$A" >/dev/null <<<"INSERT INTO shard_0005.posts (user_id, body) SELECT 5, 'row ' || g FROM generate_series(1, 2000) g"
n5() { sql "$R" <<<"SELECT count(*) FROM shard_ids(ARRAY[5])"; }
rows5=$(n5)
for ph in schema copy frozen caught_up; do
	start_paused 5 b $ph
	[ $ph != frozen ] || { err=$(psql -X -At -d "$R" -v VERBOSITY=verbose -c "SELECT insert_post(5, 'frozen')" 2>&1) && fail "frozen shard took a write"; [[ $err == *25006* ]] || fail "frozen write: $err"; ok "frozen: write refused at once with 25006"; }
	kill -INT $bg; wait $bg && fail "interrupted move exited 0" || true
	grep -q 'rolled back' "$router_DIR/bg.log" || { cat "$router_DIR/bg.log"; fail "SIGINT in $ph: no rollback"; }
	expect "SIGINT in phase $ph: rolled back, shard 5 on a" "$(where 5) $(sql "$B" <<<"SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0005'")" "a a:1 b:0 0"
	expect "SIGINT in phase $ph: nothing left behind" "$(leftovers)" "$clean"
	expect "SIGINT in phase $ph: shard 5 writable" "$(writable 5)" 5
	rows5=$((rows5 + 1))
done
# SIGINT once repointed: the shard is served by the target; the re-run finishes.
start_paused 5 b repointed
kill -INT $bg; wait $bg && fail "interrupted move exited 0" || true
grep -q 're-run the same command' "$router_DIR/bg.log" || { cat "$router_DIR/bg.log"; fail "SIGINT in repointed: no advice"; }
expect "SIGINT in phase repointed: served by b, the move row kept" "$(where 5 | cut -d' ' -f1) $(sql "$R" <<<"SELECT phase FROM shardid.shard_moves WHERE shard = 5")" "b repointed"
"${move[@]}" --shard 5 --to b --drop-old >/dev/null 2>&1 || fail "re-run after SIGINT in repointed failed"
expect "SIGINT in phase repointed, re-run: shard 5 on b only, all rows" "$(where 5) $(n5)" "b a:0 b:1 $rows5"
expect "SIGINT in phase repointed, re-run: nothing left behind" "$(leftovers)" "$clean"
expect "SIGINT in phase repointed, re-run: writable" "$(writable 5)" 5
rows5=$((rows5 + 1))
# SIGKILL: the row on the router keeps the phase; the re-run resumes.
for ph in schema copy frozen caught_up repointed; do
	case $(sql "$R" <<<"SELECT node FROM shardid.shard_placement WHERE shard = 5") in a) from=a to=b ;; *) from=b to=a ;; esac
	start_paused 5 $to $ph
	kill -KILL $bg; wait $bg 2>/dev/null || true
	expect "SIGKILL in phase $ph: the phase is kept" "$(sql "$R" <<<"SELECT phase FROM shardid.shard_moves WHERE shard = 5")" $ph
	out=$("${move[@]}" --shard 5 --to $to --drop-old 2>&1) || { echo "$out"; fail "re-run after SIGKILL in $ph failed"; }
	[[ $out == *"resuming the online move of shard 5"*"(phase $ph)"* ]] || fail "re-run after SIGKILL in $ph: $out"
	expect "SIGKILL in phase $ph, re-run: shard 5 on $to, all rows there" "$(where 5 | cut -d' ' -f1) $(n5)" "$to $rows5"
	expect "SIGKILL in phase $ph, re-run: nothing left behind" "$(leftovers)" "$clean"
	expect "SIGKILL in phase $ph, re-run: writable" "$(writable 5)" 5
	rows5=$((rows5 + 1))
done
# SIGKILL then --abort
for ph in copy frozen; do
	case $(sql "$R" <<<"SELECT node FROM shardid.shard_placement WHERE shard = 5") in a) from=a to=b ;; *) from=b to=a ;; esac
	start_paused 5 $to $ph
	kill -KILL $bg; wait $bg 2>/dev/null || true
	out=$("${move[@]}" --shard 5 --to $from 2>&1) && fail "resuming to another node accepted"
	[[ $out == *"is being moved to node \"$to\" (phase $ph)"* ]] || fail "resume elsewhere: $out"
	"${move[@]}" --shard 5 --abort >/dev/null 2>&1 || fail "--abort after SIGKILL in $ph failed"
	expect "SIGKILL in phase $ph, --abort: shard 5 stays on $from, no copy on $to" \
		"$(where 5 | cut -d' ' -f1) $(sql "$([ $to = a ] && echo "$A" || echo "$B")" <<<"SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0005'")" "$from 0"
	expect "SIGKILL in phase $ph, --abort: nothing left behind" "$(leftovers)" "$clean"
	expect "SIGKILL in phase $ph, --abort: writable" "$(writable 5)" 5
	rows5=$((rows5 + 1))
done
out=$("${move[@]}" --shard 5 --abort 2>&1) && fail "--abort without a move succeeded"
[[ $out == *'no move of shard 5 is in progress'* ]] || fail "--abort without a move: $out"
ok "--abort without a move in progress refused"
# DDL on the source during the copy: detected, the move rolls back.
start_paused 5 "$(case $(sql "$R" <<<"SELECT node FROM shardid.shard_placement WHERE shard = 5") in a) echo b ;; *) echo a ;; esac)" copy
from5=$(sql "$R" <<<"SELECT node FROM shardid.shard_placement WHERE shard = 5")
sql "$([ "$from5" = a ] && echo "$A" || echo "$B")" >/dev/null <<<"ALTER TABLE shard_0005.posts ADD COLUMN mood text"
rm -f "$pausefile"
wait $bg && fail "a move across DDL succeeded" || true
grep -q 'changed on "'"$from5"'" during the copy' "$router_DIR/bg.log" || { cat "$router_DIR/bg.log"; fail "DDL not detected"; }
expect "DDL during the copy: rolled back, shard 5 stays on $from5" "$(where 5 | cut -d' ' -f1)" "$from5"
expect "DDL during the copy: nothing left behind" "$(leftovers)" "$clean"
sql "$([ "$from5" = a ] && echo "$A" || echo "$B")" >/dev/null <<<"ALTER TABLE shard_0005.posts DROP COLUMN mood"
# The target restarts during the copy: the subscription reconnects, the move completes.
case $(sql "$R" <<<"SELECT node FROM shardid.shard_placement WHERE shard = 5") in a) to=b tdir=$node_b_DIR ;; *) to=a tdir=$node_a_DIR ;; esac
start_paused 5 $to copy
as_postgres "$(pg_bindir)/pg_ctl" -D "$tdir/data" -m fast -w restart >/dev/null
rm -f "$pausefile"
wait $bg || { cat "$router_DIR/bg.log"; fail "the move across a target restart failed"; }
expect "target restarted during the copy: shard 5 on $to, all rows" "$(where 5 | cut -d' ' -f1) $(n5)" "$to $rows5"
expect "target restarted: nothing left behind" "$(leftovers)" "$clean"

# --- 3. a schema named with a quote, a semicolon and capitals ----------------------------
sql "$R" >/dev/null <<<"SELECT insert_post(u, 'odd ' || u) FROM generate_series(6, 6 + 16 * 99, 16) u"
out=$("${move[@]}" --shard 6 --to b 2>&1) || { echo "$out"; fail "moving the oddly named shard failed"; }
expect "odd schema moved: placement, rows on b under its name" \
	"$(where 6) $(sql "$B" <<<"SELECT count(*) FROM \"${ODD//\"/\"\"}\".posts")" "b a:0 b:1 100"
expect "odd schema: the retired copy on a keeps the name's prefix" \
	"$(sql "$A" <<<"SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'Odd''; DROP TABLE x;--Shard_moved_%'")" 1
expect "odd schema: writable through the router" "$(writable 22)" 6
expect "odd schema: nothing left behind" "$(leftovers)" "$clean"

# The payload of the review: a shard administrator names a shard's schema so
# that pasting it into SQL would make them superuser. Nothing is pasted.
EVIL="x';COMMIT;ALTER ROLE shard_admin SUPERUSER;SELECT '"
for c in "$A" "$B"; do sql "$c" >/dev/null <<<"CREATE ROLE shard_admin NOSUPERUSER"; done
psql -X -q -At -v ON_ERROR_STOP=1 -d "$A" -v evil="$EVIL" >/dev/null <<'EOF'
SELECT shardid.detach_shard(4);
ALTER SCHEMA shard_0004 RENAME TO :"evil";
SELECT shardid.attach_shard(4, :'evil');
EOF
out=$("${move[@]}" --shard 4 --to b 2>&1) || { echo "$out"; fail "moving the shard named by the payload failed"; }
expect "payload schema moved; shard_admin is no superuser on either node" \
	"$(where 4) $(sql "$A" <<<"SELECT rolsuper FROM pg_roles WHERE rolname = 'shard_admin'") $(sql "$B" <<<"SELECT rolsuper FROM pg_roles WHERE rolname = 'shard_admin'")" "b a:0 b:1 f f"
expect "payload schema: writable through the router, nothing left behind" "$(writable 20) $(leftovers)" "4 $clean"

# --- 4. wal_level ------------------------------------------------------------------
pg_start node_c
C=$(connstr "$node_c_DIR")
createdb -h "$node_c_DIR" -p "$(cat "$node_c_DIR/port")" -U postgres app
node_setup "$C" >/dev/null
sql "$C" >/dev/null <<<"SELECT shardid.create_shard(9); SELECT shardid.create_table('public.posts')"
sql "$R" >/dev/null <<<"SELECT shardid.add_node('c', '$C'); DELETE FROM shardid.shard_placement WHERE shard = 9; SELECT shardid.place_shards('c', 9, 9)"
sql "$B" >/dev/null <<<"SET client_min_messages = warning; DROP SCHEMA shard_0009 CASCADE; SELECT shardid.detach_shard(9)"
out=$("${move[@]}" --shard 9 --to a 2>&1) && fail "online move from wal_level=replica accepted"
[[ $out == *'node "c" has wal_level = replica'* ]] || fail "wal_level: $out"
ok "online move from a node without wal_level=logical refused"
out=$("${move[@]}" --shard 9 --to a --offline 2>&1) || { echo "$out"; fail "offline move failed"; }
expect "offline move from c: shard 9 on a, writable" "$(where 9) $(writable 25)" "a a:1 b:0 9"
expect "offline move: nothing left behind" "$(leftovers)" "$clean"

# --- 5. rebalance: node c is empty ------------------------------------------------
counts() { sql "$R" <<<"SELECT string_agg(n.node || '=' || (SELECT count(*) FROM shardid.shard_placement p WHERE p.node = n.node), ' ' ORDER BY n.node) FROM shardid.nodes n"; }
before_counts=$(counts)
plan=$("$top/bin/shardid-rebalance" --router "$R" --strategy by_count --dry-run 2>/dev/null)
echo "# placement $before_counts; plan:"; sed 's/^/#   /' <<<"$plan"
expect "dry run: nothing moved" "$(counts)" "$before_counts"
[ -n "$plan" ] && ! grep -qv '^move shard [0-9]* from [ab] to c$' <<<"$plan" || fail "dry-run plan: $plan"
ok "dry run plans moves from a and b to c only ($(wc -l <<<"$plan") moves)"
made=$("$top/bin/shardid-rebalance" --router "$R" --strategy by_count --offline --drop-old 2>"$router_DIR/rebalance.log") ||
	{ cat "$router_DIR/rebalance.log"; fail "rebalance failed"; }
expect "rebalance made the planned moves" "$made" "$plan"
expect "rebalanced: shards per node at most one apart" \
	"$(sql "$R" <<<"SELECT max(c) - min(c) <= 1 FROM (SELECT count(p.shard) c FROM shardid.nodes n LEFT JOIN shardid.shard_placement p USING (node) GROUP BY n.node) t")" t
expect "rebalanced: every shard registered on exactly its node" \
	"$(for s in $(seq 0 15); do n=$(sql "$R" <<<"SELECT node FROM shardid.shard_placement WHERE shard = $s"); c=0; for x in "$A" "$B" "$C"; do c=$((c + $(sql "$x" <<<"SELECT count(*) FROM shardid.shard_registry WHERE shard = $s"))); done; echo -n "$c"; done)" 1111111111111111
expect "rebalanced: balanced now, nothing more to move" "$("$top/bin/shardid-rebalance" --router "$R" --strategy by_count --dry-run 2>&1)" "shardid-rebalance: balanced: nothing to move"
expect "rebalance: nothing left behind" "$(leftovers)" "$clean"

echo "move_online: all checks passed"
