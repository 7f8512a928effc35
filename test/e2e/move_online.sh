#!/usr/bin/env bash
# test/e2e/move_online.sh — online shard moves, CALL shardid.move_shard() on
# a router with dblink (PL/Proxy where installed), and two data nodes with wal_level = logical:
#   1. a shard of SHARDID_MOVE_MB megabytes (default 300; 20 for a quick
#      run) moves while a writer inserts through the router: every
#      acknowledged row is on the target exactly once, the longest pause
#      between two successful writes to the shard is under 1.5 s, writes to
#      other shards never fail; the refused window and the pauses are
#      reported;
#   2. interruptions in every phase (the test hook shardid_test.move_pause
#      stops the CALL there): pg_cancel_backend of the calling backend rolls
#      back (once repointed: the next CALL finishes), pg_terminate_backend
#      keeps the phase, then the next CALL finishes or abort_move() rolls
#      back; a lease freeze lapses with the terminated session; the target
#      restarted during the copy; DDL during the copy (a column, UNIQUE,
#      CHECK, a default, an index, a grant, a sequence) named and rolled
#      back; after each, the shard is writable where it is placed and no
#      publication, subscription, slot (table-sync ones too), role, frozen
#      trigger, half copy or move row is left;
#   3. schema names: a quote, a semicolon and capitals; the review's
#      injection payload; 63 bytes of two-byte characters, moved twice;
#   4. refusals: wal_level (and the offline path of the CLI), a table
#      without replica identity, resuming to another node, abort without a
#      move; the CLI: bad arguments, an unreachable router, SIGINT, SIGKILL
#      of its process group, --shard 05;
#   5. shardid-rebalance (through the CLI): a dry run that changes nothing,
#      then the planned moves onto an empty node.
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
source test/lib/e2e.sh
PATH=$(pg_config --bindir):$PATH
export PATH
MB=${SHARDID_MOVE_MB:-300}

source test/lib/moves.sh

# --- refusals -----------------------------------------------------------------
out=$("$top/bin/shardid-move-shard" --router 2>&1) && fail "--router without a value accepted"
[[ $out == *'--router needs a value'* ]] || fail "missing value: $out"
ok "CLI: --router without a value: usage"
out=$("$top/bin/shardid-move-shard" --router "host=$router_DIR port=1 dbname=app" --shard 1 --to b 2>&1) &&
	fail "unreachable router accepted"
[[ $out == *'cannot connect to the router'* ]] || fail "unreachable router: $out"
ok "CLI: unreachable router reported as such"
sql "$A" >/dev/null <<<"CREATE TABLE shard_0001.nokey (x int)"
move_fails 1 b
[[ $out == *55000*'shard 1 on node "a" has diverged from its templates: table nokey: permanent on node "a" only'* ]] || fail "extra table: $out"
ok "a table that no template makes refused up front, named"
sql "$A" >/dev/null <<<"DROP TABLE shard_0001.nokey"
sql "$A" >/dev/null <<<"ALTER TABLE shard_0001.posts REPLICA IDENTITY NOTHING"
move_fails 1 b
[[ $out == *'tables of shard 1 have no replica identity'*'shard_0001.posts'* ]] || fail "replica identity: $out"
ok "table without a replica identity refused up front"
sql "$A" >/dev/null <<<"ALTER TABLE shard_0001.posts REPLICA IDENTITY DEFAULT"
expect "nothing left by the refusals" "$(leftovers)" "$clean"

# --- 1. a large shard moves under a writer ----------------------------------------
rows=$((MB * 1000))
t0=$(date +%s)
sql "$A" >/dev/null <<<"INSERT INTO shard_0003.posts (user_id, body) SELECT 3, repeat(md5(g::text), 30) FROM generate_series(1, $rows) g"
size=$(sql "$A" <<<"SELECT pg_size_pretty(pg_total_relation_size('shard_0003.posts'))")
echo "# shard 3: $rows rows, $size on node a (loaded in $(($(date +%s) - t0)) s)"
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
# progress is visible from another session while it copies
(for _ in $(seq 6000); do sql "$R" <<<"SELECT to_char(clock_timestamp(), 'SSSSS.MS') || ' ' || phase || ' ' || coalesce(tables_ready::text, '-') || '/' || coalesce(tables_total::text, '-') || ' ' || coalesce(bytes_copied::text, '-') || ' ' || coalesce(bytes_total::text, '-') || ' ' || coalesce(lag_bytes::text, '-') || ' ' || (moved_by IS NOT NULL) FROM shardid.move_progress WHERE shard = 3"; sleep 0.05; done) >"$router_DIR/progress.log" 2>/dev/null &
watcher=$!
move 3 b
kill $watcher 2>/dev/null || true
echo "$out" | sed 's/^/# /'
t1=$(date +%s%N)
sleep 1
sql "$R" <<<"INSERT INTO stop_writer VALUES (true)" >/dev/null
wait "$writer" || { cat "$router_DIR/writer.log"; fail "the writer failed"; }
wait "$writer2" || { cat "$router_DIR/writer2.log"; fail "the other writer failed"; }
after=$(sql "$R" <<<"SELECT count(*) FROM written")
[ "$before" -ge 50 ] && [ "$after" -gt $((before + 50)) ] || fail "the writer did not run across the move ($before, $after)"
ok "the writer ran across the move ($before rows before, $after at the end)"
# (a small shard may be copied between two looks: then its figures at least)
if [ "$MB" -ge 100 ]; then seen='copy 0/1'; else seen='[a-z_]* [01]/1'; fi
grep -Eq "^[0-9.]* $seen [0-9]+ [0-9]+ [0-9-]+ true\$" "$router_DIR/progress.log" ||
	{ cat "$router_DIR/progress.log"; fail "move_progress showed no copy in progress"; }
ok "move_progress showed the copy: $(grep ' copy ' "$router_DIR/progress.log" | tail -n 1 | cut -d' ' -f2-)"
# when each phase was first seen, and the table first ready, in s from the start
awk -v t0="$(awk 'NR == 1 { print $1 }' "$router_DIR/progress.log")" '
	!($2 in seen) { seen[$2] = 1; printf "%s %.1f s, ", $2, $1 - t0 }
	$2 == "copy" && $3 == "1/1" && !r { r = 1; printf "table ready %.1f s, ", $1 - t0 }' "$router_DIR/progress.log" | sed 's/, $//; s/^/# phases seen: /'; echo
expect "shard 3: placement and registries" "$(where 3)" "b a:0 b:1"
expect "every acknowledged shard-3 row on the target exactly once (missing, duplicated, extra)" \
	"$(sql "$R" <<<"WITH t AS (SELECT * FROM shard_ids(ARRAY[3])), w AS (SELECT id FROM written WHERE shardid.id_shard(id) = 3)
	  SELECT (SELECT count(*) FROM w WHERE id NOT IN (SELECT * FROM t)) || ' ' || (SELECT count(*) - count(DISTINCT t) FROM t) || ' ' ||
	         (SELECT count(*) FROM t) - (SELECT count(*) FROM w) - $rows")" "0 0 0"
expect "rows of shard 3 on node b: loaded + written" "$(sql "$B" <<<"SELECT count(*) FROM shard_0003.posts")" \
	"$((rows + $(sql "$R" <<<"SELECT count(*) FROM written WHERE shardid.id_shard(id) = 3")))"
refused_ms=$(sed -n 's/.*writes refused for \([0-9]*\) ms.*/\1/p' <<<"$out")
pause=$(sql "$R" <<<"SELECT round(extract(epoch FROM max(gap)) * 1000) FROM (SELECT at - lag(at) OVER (ORDER BY n) AS gap FROM written WHERE shardid.id_shard(id) = 3) t")
other=$(sql "$R" <<<"SELECT round(extract(epoch FROM max(gap)) * 1000) FROM (SELECT at, at - lag(at) OVER (ORDER BY n) AS gap FROM written WHERE shardid.id_shard(id) <> 3) t WHERE at > '$move_start'")
other_before=$(sql "$R" <<<"SELECT round(extract(epoch FROM max(gap)) * 1000) FROM (SELECT at, at - lag(at) OVER (ORDER BY n) AS gap FROM written WHERE shardid.id_shard(id) <> 3) t WHERE at <= '$move_start'")
echo "# shard of $size moved in $(((t1 - t0) / 1000000)) ms; writes refused for ${refused_ms} ms (freeze to repoint); longest pause between writes: shard 3 ${pause} ms, other shards ${other} ms (${other_before} ms in the second before the move); retries $(sql "$R" <<<"SELECT sum(retries) FROM written")"
[ -n "$refused_ms" ] || fail "no refused window reported: $out"
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
sql "$A" >/dev/null <<<"INSERT INTO shard_0005.posts (user_id, body) SELECT 5, 'row ' || g FROM generate_series(1, 2000) g"
n5() { sql "$R" <<<"SELECT count(*) FROM shard_ids(ARRAY[5])"; }
rows5=$(n5)
# the privileges given on a travel with the shard
acl5() { sql "$(conn_of "$(placed 5)")" <<<"SELECT has_table_privilege('app', 'shard_0005.posts', 'INSERT') || ' ' || has_table_privilege('app', 'shard_0005.posts', 'DELETE') || ' ' || has_sequence_privilege('app', 'shard_0005.id_seq', 'USAGE')"; }
expect "privileges of app on shard 5 (INSERT, DELETE, sequence USAGE)" "$(acl5)" "true false true"
for ph in schema subscribe copy frozen caught_up; do
	start_paused 5 b $ph
	if [ $ph = frozen ] || [ $ph = caught_up ]; then
		expect "paused in $ph: a write to shard 5 refused at once" "$(refused 5)" 25006
	fi
	stop_paused cancel 5
	grep -q 'rolled back' "$router_DIR/bg.log" || { cat "$router_DIR/bg.log"; fail "cancel in $ph: no rollback"; }
	expect "cancel in phase $ph: rolled back, shard 5 on a" "$(where 5) $(sql "$B" <<<"SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0005'")" "a a:1 b:0 0"
	expect "cancel in phase $ph: nothing left behind" "$(leftovers)" "$clean"
	expect "cancel in phase $ph: shard 5 writable" "$(writable 5)" 5
	rows5=$((rows5 + 1))
done
# Cancelled once repointed: the target serves the shard; the next CALL finishes.
start_paused 5 b repointed
stop_paused cancel 5
grep -q 'again to finish' "$router_DIR/bg.log" || { cat "$router_DIR/bg.log"; fail "cancel in repointed: no advice"; }
expect "cancel in phase repointed: served by b, the move row kept" "$(placed 5) $(sql "$R" <<<"SELECT phase FROM shardid.shard_moves WHERE shard = 5")" "b repointed"
out=$(psql -X -q -d "$R" -c "CALL shardid.abort_move(5)" 2>&1) && fail "abort of a repointed move accepted"
[[ $out == *'already served by node "b": the move cannot be aborted'* ]] || fail "abort of a repointed move: $out"
ok "abort_move() of a repointed move refused"
move 5 b ", drop_old => true"
expect "cancel in phase repointed, CALL again: shard 5 on b only, all rows" "$(where 5) $(n5)" "b a:0 b:1 $rows5"
expect "cancel in phase repointed, CALL again: nothing left behind" "$(leftovers)" "$clean"
expect "cancel in phase repointed, CALL again: writable, privileges kept" "$(writable 5) $(acl5)" "5 true false true"
rows5=$((rows5 + 1))
# Terminated: the row keeps the phase; the next CALL resumes.
for ph in schema subscribe copy frozen caught_up repointed; do
	from=$(placed 5) to=$(other "$(placed 5)")
	start_paused 5 "$to" $ph
	stop_paused terminate 5
	phase=${ph/subscribe/copy}
	expect "terminate in phase $ph: the phase is kept" "$(sql "$R" <<<"SELECT phase FROM shardid.shard_moves WHERE shard = 5")" "$phase"
	case $ph in
		frozen) # the lease froze it: it lapsed with the session, nothing is routed elsewhere
			expect "terminate in phase frozen: shard 5 writable on $from at once" "$(writable 5)" 5
			rows5=$((rows5 + 1)) ;;
		caught_up) # sealed for the repoint: frozen until the next CALL
			expect "terminate in phase caught_up: writes still refused" "$(refused 5)" 25006 ;;
	esac
	move 5 "$to" ", drop_old => true"
	[[ $out == *"resuming the online move of shard 5"*"(phase $phase)"* ]] || fail "CALL after terminate in $ph: $out"
	expect "terminate in phase $ph, CALL again: shard 5 on $to, all rows there" "$(where 5 | cut -d' ' -f1) $(n5)" "$to $rows5"
	expect "terminate in phase $ph, CALL again: nothing left behind" "$(leftovers)" "$clean"
	expect "terminate in phase $ph, CALL again: writable, privileges kept" "$(writable 5) $(acl5)" "5 true false true"
	rows5=$((rows5 + 1))
done
# Terminated, then abort_move()
for ph in copy frozen caught_up; do
	from=$(placed 5) to=$(other "$(placed 5)")
	start_paused 5 "$to" $ph
	stop_paused terminate 5
	move_fails 5 "$from"
	[[ $out == *"is being moved to node \"$to\" (phase $ph)"* ]] || fail "resume elsewhere: $out"
	psql -X -q -v ON_ERROR_STOP=1 -d "$R" -c "CALL shardid.abort_move(5)" >/dev/null 2>&1 || fail "abort_move after terminate in $ph failed"
	expect "terminate in phase $ph, abort_move(): shard 5 stays on $from, no copy on $to" \
		"$(where 5 | cut -d' ' -f1) $(sql "$(conn_of "$to")" <<<"SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0005'")" "$from 0"
	expect "terminate in phase $ph, abort_move(): nothing left behind" "$(leftovers)" "$clean"
	expect "terminate in phase $ph, abort_move(): writable" "$(writable 5)" 5
	rows5=$((rows5 + 1))
done
out=$(psql -X -q -d "$R" -c "CALL shardid.abort_move(5)" 2>&1) && fail "abort_move without a move succeeded"
[[ $out == *'no move of shard 5 is in progress'* ]] || fail "abort_move without a move: $out"
ok "abort_move() without a move in progress refused"
# A session runs the move: abort_move() from another is refused, not mixed in.
start_paused 5 "$(other "$(placed 5)")" copy
out=$(psql -X -q -v VERBOSITY=verbose -d "$R" -c "CALL shardid.abort_move(5)" 2>&1) && fail "abort_move beside a running move accepted"
[[ $out == *55006*"is being moved by another session (backend $mpid)"* ]] || fail "abort beside a running move: $out"
ok "abort_move() while another session runs the move: 55006, naming its backend"
stop_paused cancel 5
expect "cancelled after the refused abort: nothing left behind" "$(leftovers)" "$clean"

# DDL on the source during the copy: named, the move rolls back.
ddl_case() { # NAME DDL UNDO EXPECTED-TEXT
	local from to
	from=$(placed 5) to=$(other "$(placed 5)")
	start_paused 5 "$to" copy
	sql "$(conn_of "$from")" >/dev/null <<<"$2"
	release_pause 5
	wait $bg && fail "a move across DDL ($1) succeeded" || true
	grep -qF "$4" "$router_DIR/bg.log" || { cat "$router_DIR/bg.log"; fail "DDL ($1) not named: $4"; }
	grep -q "the tables of shard 5 changed on node \"$from\" during the" "$router_DIR/bg.log" || { cat "$router_DIR/bg.log"; fail "DDL ($1) not reported"; }
	expect "DDL during the copy ($1): rolled back, shard 5 stays on $from" "$(placed 5)" "$from"
	expect "DDL during the copy ($1): nothing left behind" "$(leftovers)" "$clean"
	sql "$(conn_of "$from")" >/dev/null <<<"$3"
}
ddl_case column "ALTER TABLE shard_0005.posts ADD COLUMN mood text" "ALTER TABLE shard_0005.posts DROP COLUMN mood" \
	'table posts: column mood: text on node'
ddl_case unique "ALTER TABLE shard_0005.posts ADD CONSTRAINT posts_body_key UNIQUE (id, body)" "ALTER TABLE shard_0005.posts DROP CONSTRAINT posts_body_key" \
	'table posts: constraint posts_body_key: UNIQUE (id, body) on node'
ddl_case check "ALTER TABLE shard_0005.posts ADD CONSTRAINT posts_body_check CHECK (body <> '')" "ALTER TABLE shard_0005.posts DROP CONSTRAINT posts_body_check" \
	"table posts: constraint posts_body_check: CHECK ((body <> ''::text)) on node"
ddl_case default "ALTER TABLE shard_0005.posts ALTER COLUMN body SET DEFAULT 'none'" "ALTER TABLE shard_0005.posts ALTER COLUMN body DROP DEFAULT" \
	"table posts: column body: text NOT NULL DEFAULT 'none'::text on node"
ddl_case index "CREATE INDEX posts_user_idx ON shard_0005.posts (user_id)" "DROP INDEX shard_0005.posts_user_idx" \
	'table posts: index posts_user_idx: CREATE INDEX posts_user_idx ON shard_0005.posts USING btree (user_id) on node'
ddl_case grant "GRANT DELETE ON shard_0005.posts TO app" "REVOKE DELETE ON shard_0005.posts FROM app" \
	'table posts: privileges: '
ddl_case sequence "CREATE SEQUENCE shard_0005.other_seq" "DROP SEQUENCE shard_0005.other_seq" \
	'sequence other_seq: permanent on node'
# The target restarts during the copy: the subscription reconnects, the move completes.
from=$(placed 5) to=$(other "$(placed 5)")
start_paused 5 "$to" copy ", node_timeout => '60 s'"
as_postgres "$(pg_bindir)/pg_ctl" -D "$([ "$to" = a ] && echo "$node_a_DIR" || echo "$node_b_DIR")/data" -m fast -w restart >/dev/null
release_pause 5
wait $bg || { cat "$router_DIR/bg.log"; fail "the move across a target restart failed"; }
expect "target restarted during the copy: shard 5 on $to, all rows" "$(placed 5) $(n5)" "$to $rows5"
expect "target restarted: nothing left behind" "$(leftovers)" "$clean"

# --- 3. schema names --------------------------------------------------------------
sql "$R" >/dev/null <<<"SELECT insert_post(u, 'odd ' || u) FROM generate_series(6, 6 + 16 * 99, 16) u"
out=$("$top/bin/shardid-move-shard" --router "$R" --shard 6 --to b 2>&1) || { echo "$out"; fail "moving the oddly named shard failed"; }
expect "odd schema moved (CLI): placement, rows on b under its name" \
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
move 4 b
expect "payload schema moved; shard_admin is no superuser on either node" \
	"$(where 4) $(sql "$A" <<<"SELECT rolsuper FROM pg_roles WHERE rolname = 'shard_admin'") $(sql "$B" <<<"SELECT rolsuper FROM pg_roles WHERE rolname = 'shard_admin'")" "b a:0 b:1 f f"
expect "payload schema: writable through the router, nothing left behind" "$(writable 20) $(leftovers)" "4 $clean"

# 63 bytes of two-byte characters: the retired names are cut at a character
# boundary, keep their suffix, and differ from move to move.
LONG=$(printf 'é%.0s' $(seq 31))x
psql -X -q -At -v ON_ERROR_STOP=1 -d "$A" -v long="$LONG" >/dev/null <<'EOF'
SELECT shardid.detach_shard(2);
ALTER SCHEMA shard_0002 RENAME TO :"long";
SELECT shardid.attach_shard(2, :'long');
EOF
expect "the long schema name is 63 bytes" "$(sql "$A" <<<"SELECT octet_length(schema_name) FROM shardid.shard_registry WHERE shard = 2")" 63
move 2 b
move 2 a
move 2 b
expect "long name: moved there and back and there" "$(where 2)" "b a:0 b:1"
expect "long name: retired copies on a and b: distinct, whole characters, 63 bytes at most, suffix kept" \
	"$(for c in "$A" "$B"; do sql "$c" <<<"SELECT count(*) || ' ' || count(DISTINCT nspname) || ' ' || bool_and(octet_length(nspname) <= 63 AND nspname ~ '^é+_moved_[0-9]+\$') FROM pg_namespace WHERE nspname LIKE 'éé%_moved_%'"; done | tr '\n' ' ')" "2 2 true 1 1 true "
expect "long name: writable, nothing left behind" "$(writable 18) $(leftovers)" "2 $clean"

# --- 4. the CLI: SIGINT, SIGKILL, --shard 05 ------------------------------------------------
cli_paused() { # SHARD-ARG TO PHASE — the CLI in the background ($cli), paused
	hold_pause "$((10#$1))"
	# (a script's background jobs ignore SIGINT unless told otherwise)
	PGOPTIONS="-c shardid_test.move_pause=$3" setsid env --default-signal=INT,TERM "$top/bin/shardid-move-shard" --router "$R" --shard "$1" --to "$2" --drop-old \
		>"$router_DIR/cli.log" 2>&1 &
	cli=$!
	for _ in $(seq 600); do
		mpid=$(sql "$R" <<<"SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND classid = $pause_key::oid AND objid = $((10#$1))")
		[ -n "$mpid" ] && return 0
		kill -0 $cli 2>/dev/null || break
		sleep 0.05
	done
	cat "$router_DIR/cli.log"
	fail "the CLI did not reach phase $3"
}
for sig in INT TERM; do
	from=$(placed 5) to=$(other "$(placed 5)")
	cli_paused 5 "$to" copy
	kill -$sig $cli
	wait $cli && fail "CLI after SIG$sig exited 0" || true
	release_pause 5
	grep -q 'rolled back' "$router_DIR/cli.log" || { cat "$router_DIR/cli.log"; fail "CLI SIG$sig: no rollback"; }
	expect "CLI SIG$sig in phase copy: the CALL was cancelled, rolled back" "$(placed 5) $(leftovers)" "$from $clean"
done
from=$(placed 5) to=$(other "$(placed 5)")
cli_paused 05 "$to" copy
expect "CLI --shard 05: the move's objects are named for shard 5" \
	"$(sql "$(conn_of "$from")" <<<"SELECT string_agg(slot_name, ' ') ~ '^shardid_move_5_[0-9]+\$' FROM pg_replication_slots")" t
kill -KILL -- -$cli
wait $cli 2>/dev/null || true
for _ in $(seq 100); do [ -z "$(sql "$R" <<<"SELECT pid FROM pg_stat_activity WHERE pid = $mpid")" ] && break; sleep 0.1; done
release_pause 5
expect "CLI killed (SIGKILL of its process group): its session ended, the phase is kept" \
	"$(sql "$R" <<<"SELECT count(*) FROM pg_stat_activity WHERE pid = $mpid") $(sql "$R" <<<"SELECT phase FROM shardid.shard_moves WHERE shard = 5")" "0 copy"
"$top/bin/shardid-move-shard" --router "$R" --shard 5 --abort >"$router_DIR/cli.log" 2>&1 || { cat "$router_DIR/cli.log"; fail "CLI --abort --shard 5 failed"; }
expect "CLI --abort --shard 5 after --shard 05: rolled back, nothing left behind" "$(placed 5) $(leftovers)" "$from $clean"
out=$("$top/bin/shardid-move-shard" --router "$R" --shard 5 --abort 2>&1) && fail "CLI --abort without a move exited 0"
[[ $out == *'no move of shard 5 is in progress'* ]] || fail "CLI --abort without a move: $out"
ok "CLI --abort without a move: exit 1, said so"

# --- 5. wal_level ------------------------------------------------------------------
pg_start node_c
C=$(connstr "$node_c_DIR")
createdb -h "$node_c_DIR" -p "$(cat "$node_c_DIR/port")" -U postgres app
node_setup "$C" >/dev/null
sql "$C" >/dev/null <<<"SELECT shardid.create_shard(9); SELECT shardid.create_table('public.posts'); INSERT INTO shard_0009.posts (user_id, body) SELECT 9, 'c ' || g FROM generate_series(1, 50) g"
sql "$R" >/dev/null <<<"SELECT shardid.add_node('c', '$C'); DELETE FROM shardid.shard_placement WHERE shard = 9; SELECT shardid.place_shards('c', 9, 9)"
sql "$B" >/dev/null <<<"SET client_min_messages = warning; DROP SCHEMA shard_0009 CASCADE; SELECT shardid.detach_shard(9)"
move_fails 9 a
[[ $out == *'node "c" has wal_level = replica: an online move needs wal_level = logical there'* ]] || fail "wal_level: $out"
ok "online move from a node without wal_level=logical refused"
out=$("$top/bin/shardid-move-shard" --router "$R" --shard 9 --to a --offline 2>&1) || { echo "$out"; fail "offline move failed"; }
expect "offline move from c (CLI): shard 9 on a with its rows, writable" "$(where 9) $(sql "$A" <<<"SELECT count(*) FROM shard_0009.posts") $(writable 25)" "a a:1 b:0 50 9"
expect "offline move: nothing left behind" "$(leftovers)" "$clean"

# --- 6. rebalance: node c is empty ------------------------------------------------
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
	"$(for s in $(seq 0 15); do c=0; for x in "$A" "$B" "$C"; do c=$((c + $(sql "$x" <<<"SELECT count(*) FROM shardid.shard_registry WHERE shard = $s"))); done; echo -n "$c"; done)" 1111111111111111
expect "rebalanced: balanced now, nothing more to move" "$("$top/bin/shardid-rebalance" --router "$R" --strategy by_count --dry-run 2>&1)" "shardid-rebalance: balanced: nothing to move"
expect "rebalance: nothing left behind" "$(leftovers)" "$clean"

echo "move_online: all checks passed"
