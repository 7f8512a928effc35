#!/usr/bin/env bash
# test/e2e/move_review.sh — the defects an adversarial review found in the
# shell tool's moves (issue 20), each reproduced against CALL move_shard():
#   1. a shard administrator's code run by the move with a superuser's
#      rights: an ENABLE ALWAYS trigger on its shard (refused, diverged), on
#      the target's copy during the copy, and a CHECK constraint of its
#      template (both fire, never as a superuser); offline: the rows are
#      written as the owner, so both run as the owner (issue 27);
#   2. a cancel racing the repoint: either outcome is whole (the router
#      points at a node that holds every row), never a repointed move undone;
#   3. a node down in the cut-over: the target (the source writable again at
#      once, the rest finished by abort_move() later) and the source (its
#      freeze lapses: writable when it is back, with nobody re-running);
#   4. the source crashing mid-copy with a table-sync slot: dropped later,
#      by name, none left;
#   5. the target unreachable mid-copy: reported as such, not as DDL; the
#      source's slots dropped at once;
#   6. a replication error during the copy: the move fails within seconds.
# Runs on every major; 15 applies the copy as a role of the move, 16+ as
# the tables' owners.
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
source test/lib/e2e.sh
PATH=$(pg_config --bindir):$PATH
export PATH
source test/lib/moves.sh
major=$(sql "$A" <<<"SELECT current_setting('server_version_num')::int / 10000")
echo "# PostgreSQL $major"
ms() { date +%s%3N; }
node_dir() { [ "$1" = a ] && echo "$node_a_DIR" || echo "$node_b_DIR"; }
stop_node() { as_postgres "$(pg_bindir)/pg_ctl" -D "$(node_dir "$1")/data" -m immediate -w stop >/dev/null; }
start_node() { as_postgres "$(pg_bindir)/pg_ctl" -D "$(node_dir "$1")/data" -l "$(node_dir "$1")/server.log" -w start >/dev/null; }

# --- 1. a shard administrator ---------------------------------------------------
# Databases adm on both servers are nodes a2 and b2; in them a role with only
# the README's shard-administrator grants owns a template, shards 20 and 21,
# and functions that record who runs them and make their owner superuser
# when they can.
sql "$A" >/dev/null <<<"CREATE ROLE shard_admin LOGIN"
sql "$B" >/dev/null <<<"CREATE ROLE shard_admin LOGIN"
for n in a b; do
	d=$(node_dir $n)
	createdb -h "$d" -p "$(cat "$d/port")" -U postgres adm
	sql "host=$d port=$(cat "$d/port") user=postgres dbname=adm" >/dev/null <<-'EOF'
	CREATE EXTENSION shardid;
	GRANT CREATE ON DATABASE adm TO shard_admin;
	GRANT INSERT, UPDATE, DELETE ON shardid.shard_registry, shardid.sharded_tables TO shard_admin;
	CREATE SCHEMA adm AUTHORIZATION shard_admin;
	SET ROLE shard_admin;
	CREATE TABLE adm.log (what text, by_role name, superuser boolean, at timestamptz DEFAULT clock_timestamp());
	GRANT USAGE ON SCHEMA adm TO PUBLIC;
	GRANT INSERT ON adm.log TO PUBLIC;
	CREATE FUNCTION adm.seize(what text) RETURNS boolean LANGUAGE plpgsql AS $$
	BEGIN
	    INSERT INTO adm.log (what, by_role, superuser) VALUES (what, current_user, (SELECT rolsuper FROM pg_roles WHERE rolname = current_user));
	    IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
	        ALTER ROLE shard_admin SUPERUSER;
	    END IF;
	    RETURN true;
	END $$;
	CREATE FUNCTION adm.on_write() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN PERFORM adm.seize('trigger'); RETURN NEW; END $$;
	CREATE TABLE adm.notes (id bigint PRIMARY KEY, body text NOT NULL, CONSTRAINT notes_seize CHECK (adm.seize('check')));
	EOF
done
A2="host=$node_a_DIR port=$(cat "$node_a_DIR/port") user=postgres dbname=adm"
B2="host=$node_b_DIR port=$(cat "$node_b_DIR/port") user=postgres dbname=adm"
sql "$A2" >/dev/null <<<"SET ROLE shard_admin; SELECT shardid.create_shard(20); SELECT shardid.create_shard(21); SELECT shardid.create_table('adm.notes');
	INSERT INTO shard_0020.notes (body) SELECT 'n' || g FROM generate_series(1, 200) g; INSERT INTO shard_0021.notes (body) SELECT 'n' || g FROM generate_series(1, 200) g"
sql "$B2" >/dev/null <<<"SET ROLE shard_admin; SELECT shardid.create_table('adm.notes')"
sql "$R" >/dev/null <<<"SELECT shardid.add_node('a2', '$A2'); SELECT shardid.add_node('b2', '$B2'); SELECT shardid.place_shards('a2', 20, 21)"
sql "$A2" >/dev/null <<<"TRUNCATE adm.log"
admin_super() { sql "$A" <<<"SELECT rolsuper FROM pg_roles WHERE rolname = 'shard_admin'"; }
log_of() { sql "$1" <<<"SELECT count(*) || ' ' || count(*) FILTER (WHERE superuser) FROM adm.log WHERE what = '$2'"; }
adm_leftovers() {
	local c
	echo "$(leftovers)$(for c in "$A2" "$B2"; do echo -n " $(sql "$c" <<<"SELECT (SELECT count(*) FROM pg_publication) + (SELECT count(*) FROM pg_subscription) + (SELECT count(*) FROM pg_trigger WHERE tgname = 'shardid_move_frozen')")"; done)"
}
adm_clean="$clean 0 0"

# (a) the review's case: an ENABLE ALWAYS trigger on the shard's table. The
# target's copy comes from the templates, so the trigger is a difference.
sql "$A2" >/dev/null <<<"SET ROLE shard_admin; CREATE TRIGGER seize BEFORE INSERT OR UPDATE ON shard_0020.notes FOR EACH ROW EXECUTE FUNCTION adm.on_write(); ALTER TABLE shard_0020.notes ENABLE ALWAYS TRIGGER seize"
move_fails 20 b2
[[ $out == *'table notes: trigger seize: CREATE TRIGGER seize BEFORE INSERT OR UPDATE ON shard_0020.notes FOR EACH ROW EXECUTE FUNCTION adm.on_write() (enabled always) on node "a2" only'* ]] ||
	fail "trigger on the source: $out"
expect "an ENABLE ALWAYS trigger on the shard: refused, named; shard_admin no superuser; nothing left" \
	"$(admin_super) $(adm_leftovers)" "f $adm_clean"
sql "$A2" >/dev/null <<<"DROP TRIGGER seize ON shard_0020.notes"

# (b) the trigger put on the target's copy while it copies (its owner may):
# the writes it is fired by are applied as a non-superuser.
start_paused 20 b2 copy
for _ in $(seq 200); do [ "$(sql "$B2" <<<"SELECT count(*) FROM shard_0020.notes")" = 200 ] && break; sleep 0.1; done
sql "$B2" >/dev/null <<<"SET ROLE shard_admin; CREATE TRIGGER seize BEFORE INSERT OR UPDATE ON shard_0020.notes FOR EACH ROW EXECUTE FUNCTION adm.on_write(); ALTER TABLE shard_0020.notes ENABLE ALWAYS TRIGGER seize"
sql "$A2" >/dev/null <<<"SET ROLE shard_admin; INSERT INTO shard_0020.notes (body) SELECT 'late ' || g FROM generate_series(1, 10) g"
for _ in $(seq 200); do [ "$(sql "$B2" <<<"SELECT count(*) FROM shard_0020.notes")" = 210 ] && break; sleep 0.1; done
fired=$(log_of "$B2" trigger)
release_pause 20
wait $bg && fail "a move with a trigger added to the target succeeded" || true
grep -q 'table notes: trigger seize: .* on node "b2" only' "$router_DIR/bg.log" || { cat "$router_DIR/bg.log"; fail "trigger on the target not named"; }
expect "a trigger on the target's copy: fired by the apply (10 rows), never as a superuser" "$fired" "10 0"
echo "# the trigger ran as: $(sql "$B2" <<<"SELECT string_agg(DISTINCT by_role, ', ') FROM adm.log WHERE what = 'trigger'")"
expect "a trigger on the target's copy: the move refused it, rolled back; shard_admin no superuser; nothing left" \
	"$(admin_super) $(sql "$B" <<<"SELECT rolsuper FROM pg_roles WHERE rolname = 'shard_admin'") $(adm_leftovers)" "f f $adm_clean"

# (c) a CHECK constraint of the template calls the administrator's function:
# the copy and the apply run it, as the owner (16+) or the move's role (15).
sql "$B2" >/dev/null <<<"TRUNCATE adm.log"
start_paused 21 b2 copy
sql "$A2" >/dev/null <<<"SET ROLE shard_admin; UPDATE shard_0021.notes SET body = body || '.' WHERE id IN (SELECT id FROM shard_0021.notes ORDER BY id LIMIT 5)"
release_pause 21
wait $bg || { cat "$router_DIR/bg.log"; fail "the move of shard 21 failed"; }
expect "a template's CHECK with the administrator's code: shard 21 moved, its rows on b2" \
	"$(where 21 | cut -d' ' -f1) $(sql "$B2" <<<"SELECT count(*) FROM shard_0021.notes")" "b2 200"
checks=$(log_of "$B2" check)
[ "${checks%% *}" -ge 200 ] || fail "the CHECK did not run during the copy ($checks)"
expect "the CHECK ran for every row copied, never as a superuser" "${checks#* }" 0
echo "# the CHECK ran as: $(sql "$B2" <<<"SELECT string_agg(DISTINCT by_role, ', ') FROM adm.log WHERE what = 'check'") ($checks)"
expect "shard_admin no superuser on either node; nothing left" \
	"$(admin_super) $(sql "$B" <<<"SELECT rolsuper FROM pg_roles WHERE rolname = 'shard_admin'") $(adm_leftovers)" "f f $adm_clean"

# (d) offline: the rows are written as the tables' owner, in a
# security-restricted operation with session_replication_role = replica
# (issue 27): the template's CHECK of the administrator's runs as the
# owner, never as a superuser; a trigger put on the target's copy fires only
# if ENABLE ALWAYS, as the owner, and the move refuses it and rolls back.
sql "$A2" >/dev/null <<<"TRUNCATE adm.log"
psql -X -q -v ON_ERROR_STOP=1 -d "$R" -c "CALL shardid.move_shard(21, 'a2', offline => true)" >/dev/null 2>&1 || fail "offline move of 21 did not start"
expect "offline: frozen, waiting for its rows" "$(sql "$R" <<<"SELECT phase || ' ' || mode FROM shardid.shard_moves WHERE shard = 21")" "frozen offline"
sql "$A2" >/dev/null <<<"SET ROLE shard_admin; CREATE TRIGGER seize BEFORE INSERT ON shard_0021.notes FOR EACH ROW EXECUTE FUNCTION adm.on_write(); ALTER TABLE shard_0021.notes ENABLE ALWAYS TRIGGER seize"
out=$("$top/bin/shardid-move-shard" --router "$R" --shard 21 --to a2 --offline 2>&1) && fail "offline move with a trigger added to the target succeeded"
[[ $out == *'trigger seize'*'on node "a2" only'* ]] || fail "offline trigger: $out"
checks=$(log_of "$A2" check) fired=$(log_of "$A2" trigger)
[ "${checks%% *}" -ge 200 ] && [ "${fired%% *}" -ge 200 ] || fail "offline: the CHECK ($checks) or the ENABLE ALWAYS trigger ($fired) did not run for the rows"
expect "offline, the CHECK and an ENABLE ALWAYS trigger on the target's copy: run as the owner, never as a superuser; the move refused the trigger; shard_admin no superuser; nothing left" \
	"${checks#* } ${fired#* } $(admin_super) $(where 21 | cut -d' ' -f1) $(adm_leftovers)" "0 0 f b2 $adm_clean"
echo "# offline, the CHECK and the trigger ran as: $(sql "$A2" <<<"SELECT string_agg(DISTINCT by_role, ', ') FROM adm.log")"
out=$("$top/bin/shardid-move-shard" --router "$R" --shard 21 --to a2 --offline 2>&1) || fail "clean offline move of 21: $out"
expect "offline, with the administrator's CHECK: moved (its rows on a2), the CHECK never run as a superuser; nothing left" \
	"$(where 21 | cut -d' ' -f1) $(sql "$A2" <<<"SELECT count(*) FROM shard_0021.notes") $(sql "$A2" <<<"SELECT count(*) FILTER (WHERE superuser) FROM adm.log") $(admin_super) $(adm_leftovers)" "a2 200 0 f $adm_clean"

# --- 2. a cancel racing the repoint ------------------------------------------------
# The repoint waits for the router's placement lock; the lock is let go and
# the CALL cancelled at the same moment. Whichever wins, the shard is whole
# where the router points; a repointed move is never undone.
sql "$A" >/dev/null <<<"INSERT INTO shard_0005.posts (user_id, body) SELECT 5, 'r ' || g FROM generate_series(1, 500) g"
n5() { sql "$R" <<<"SELECT count(*) FROM shard_ids(ARRAY[5])"; }
rows5=$(n5)
outcomes=
for i in 1 2 3 4 5 6; do
	from=$(placed 5) to=$(other "$(placed 5)")
	start_paused 5 "$to" caught_up
	psql -X -q -d "$R" -c "BEGIN; LOCK shardid.shard_placement IN EXCLUSIVE MODE; SELECT pg_sleep(900)" >/dev/null 2>&1 &
	locker=$!
	for _ in $(seq 100); do [ -n "$(sql "$R" <<<"SELECT pid FROM pg_locks WHERE relation = 'shardid.shard_placement'::regclass AND mode = 'ExclusiveLock' AND granted")" ] && break; sleep 0.05; done
	release_pause 5
	for _ in $(seq 100); do [ -n "$(sql "$R" <<<"SELECT pid FROM pg_locks WHERE relation = 'shardid.shard_placement'::regclass AND pid = $mpid AND NOT granted")" ] && break; sleep 0.05; done
	sql "$R" >/dev/null <<<"SELECT pg_cancel_backend(pid) FROM pg_locks WHERE relation = 'shardid.shard_placement'::regclass AND mode = 'ExclusiveLock' AND granted"
	[ $((i % 2)) = 0 ] && sleep 0.00$i
	sql "$R" >/dev/null <<<"SELECT pg_cancel_backend($mpid)"
	wait $locker 2>/dev/null || true
	wait $bg 2>/dev/null || true
	phase=$(sql "$R" <<<"SELECT phase FROM shardid.shard_moves WHERE shard = 5")
	if [ "$phase" = repointed ]; then
		move 5 "$to" ", drop_old => true"
		outcomes="$outcomes repointed"
	else
		outcomes="$outcomes ${phase:-rolled_back}"
	fi
	here=$(placed 5)
	expect "race $i: the shard is whole where the router points ($here), writable, nothing left" \
		"$(where 5 | tr ' ' '\n' | grep -c ":1") $(n5) $(writable 5) $(leftovers)" "1 $rows5 5 $clean"
	rows5=$((rows5 + 1))
done
echo "# race outcomes:$outcomes"

# --- 3. a node down in the cut-over ---------------------------------------------------
# (a) the target: the source is writable again first, at once.
from=$(placed 5) to=$(other "$(placed 5)")
start_paused 5 "$to" frozen
expect "frozen: a write refused" "$(refused 5)" 25006
stop_node "$to"
t0=$(ms)
sql "$R" >/dev/null <<<"SELECT pg_cancel_backend($mpid)"
for _ in $(seq 200); do [ -z "$(refused 5)" ] && break; sleep 0.01; done
t1=$(ms)
wait $bg && fail "a move with its target down succeeded" || true
release_pause 5
rows5=$((rows5 + 1))
echo "# target down in the cut-over: the source took writes again $((t1 - t0)) ms after the cancel"
[ $((t1 - t0)) -lt 2000 ] || fail "the source was writable only $((t1 - t0)) ms after the cancel"
expect "target down: the rollback left the target's part, named" \
	"$(sql "$R" <<<"SELECT phase || ' ' || (last_error LIKE '%subscription shardid_move_5_% on node \"$to\"%')::text FROM shardid.shard_moves WHERE shard = 5")" "aborting true"
expect "target down: on the source, nothing of the move (publication, slots, freeze)" \
	"$(sql "$(conn_of "$from")" <<<"SELECT (SELECT count(*) FROM pg_publication) + (SELECT count(*) FROM pg_replication_slots) + (SELECT count(*) FROM pg_trigger WHERE tgname = 'shardid_move_frozen')")" 0
start_node "$to"
psql -X -q -v ON_ERROR_STOP=1 -d "$R" -c "CALL shardid.abort_move(5)" >/dev/null || fail "abort_move after the target came back failed"
expect "target back, abort_move(): on $from, all rows, nothing left" "$(where 5 | cut -d' ' -f1) $(n5) $(leftovers)" "$from $rows5 $clean"
# (b) the source crashes: when it is back, its freeze has lapsed.
from=$(placed 5) to=$(other "$(placed 5)")
start_paused 5 "$to" frozen
stop_node "$from"
start_node "$from"
expect "source crashed in the cut-over and back: writable with nobody re-running" "$(writable 5)" 5
rows5=$((rows5 + 1))
stop_paused cancel 5
expect "source crashed, the CALL cancelled: rolled back, all rows, nothing left" "$(where 5 | cut -d' ' -f1) $(n5) $(leftovers)" "$from $rows5 $clean"

# --- 4. the source crashes mid-copy with a table-sync slot --------------------------
# Shard 7 is large enough that its table-sync worker copies for seconds,
# holding its slot on the source meanwhile; the source crashes then.
sql "$A" >/dev/null <<<"INSERT INTO shard_0007.posts (user_id, body) SELECT 7, repeat(md5(g::text), 30) FROM generate_series(1, 100000) g"
start_paused 7 b subscribe ", node_timeout => '2 s'"
release_pause 7
for _ in $(seq 400); do [ -n "$(sql "$A" <<<"SELECT slot_name FROM pg_replication_slots WHERE slot_name ~ '^pg_[0-9]+_sync_'")" ] && break; sleep 0.05; done
sync_slot=$(sql "$A" <<<"SELECT slot_name FROM pg_replication_slots WHERE slot_name ~ '^pg_[0-9]+_sync_'")
[ -n "$sync_slot" ] || fail "no table-sync slot appeared"
stop_node a
wait $bg && fail "a move across a source crash succeeded" || true
grep -q 'node "a" (the source of the move) has been unreachable for' "$router_DIR/bg.log" || { cat "$router_DIR/bg.log"; fail "source crash not reported as such"; }
start_node a
expect "after the crash the table-sync slot $sync_slot is still on the source" \
	"$(sql "$A" <<<"SELECT count(*) FROM pg_replication_slots WHERE slot_name = '$sync_slot'")" 1
psql -X -q -v ON_ERROR_STOP=1 -d "$R" -c "CALL shardid.abort_move(7)" >/dev/null || fail "abort_move after the source came back failed"
expect "source back, abort_move(): the table-sync slot dropped with the rest, nothing left" \
	"$(sql "$A" <<<"SELECT count(*) FROM pg_replication_slots") $(where 7) $(leftovers)" "0 a a:1 b:0 $clean"

# --- 5. the target unreachable mid-copy ------------------------------------------------
from=$(placed 5) to=$(other "$(placed 5)")
start_paused 5 "$to" copy ", node_timeout => '3 s'"
stop_node "$to"
t0=$(ms)
release_pause 5
wait $bg && fail "a move with its target down succeeded" || true
t1=$(ms)
grep -q "node \"$to\" (the target of the move) has been unreachable for 00:00:0[3-9] during the copy" "$router_DIR/bg.log" ||
	{ cat "$router_DIR/bg.log"; fail "target down mid-copy not reported as such"; }
! grep -q 'changed on' "$router_DIR/bg.log" || fail "target down mid-copy reported as DDL"
ok "target down mid-copy: reported as unreachable after $((t1 - t0)) ms, not as a change of definitions"
expect "target down mid-copy: the source keeps no slot (no WAL held for it), is writable" \
	"$(sql "$(conn_of "$from")" <<<"SELECT count(*) FROM pg_replication_slots") $(writable 5)" "0 5"
rows5=$((rows5 + 1))
start_node "$to"
psql -X -q -v ON_ERROR_STOP=1 -d "$R" -c "CALL shardid.abort_move(5)" >/dev/null || fail "abort_move after the target came back failed"
expect "target back, abort_move(): nothing left" "$(where 5 | cut -d' ' -f1) $(n5) $(leftovers)" "$from $rows5 $clean"

# --- 6. a replication error during the copy ----------------------------------------------
from=$(placed 5) to=$(other "$(placed 5)")
start_paused 5 "$to" copy
for _ in $(seq 200); do [ "$(sql "$(conn_of "$to")" <<<"SELECT count(*) FROM shard_0005.posts")" = "$rows5" ] && break; sleep 0.1; done
id=$(sql "$(conn_of "$from")" <<<"SELECT shardid.make_id(now(), 5, 999)")
sql "$(conn_of "$to")" >/dev/null <<<"INSERT INTO shard_0005.posts VALUES ($id, 5, 'only on the target')"
sql "$(conn_of "$from")" >/dev/null <<<"INSERT INTO shard_0005.posts VALUES ($id, 5, 'conflicts on the target')"
# the subscription stops at the error (disable_on_error); the move notices
for _ in $(seq 200); do [ "$(sql "$(conn_of "$to")" <<<"SELECT count(*) FROM pg_subscription WHERE NOT subenabled")" = 1 ] && break; sleep 0.05; done
expect "the apply failed on the conflicting row, the subscription stopped" "$(sql "$(conn_of "$to")" <<<"SELECT count(*) FROM pg_subscription WHERE NOT subenabled")" 1
t0=$(ms)
release_pause 5
wait $bg && fail "a move across a replication error succeeded" || true
t1=$(ms)
grep -q "replicating shard 5 to node \"$to\" failed: its subscription shardid_move_5_[0-9]* stopped at an error" "$router_DIR/bg.log" ||
	{ cat "$router_DIR/bg.log"; fail "replication error not reported"; }
echo "# a replication error failed the move $((t1 - t0)) ms into its copy phase"
[ $((t1 - t0)) -lt 5000 ] || fail "the move failed $((t1 - t0)) ms after the replication error"
ok "a replication error during the copy failed the move promptly ($((t1 - t0)) ms)"
expect "replication error: rolled back, nothing left" "$(placed 5) $(leftovers)" "$from $clean"

echo "move_review: all checks passed"
