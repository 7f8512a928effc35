#!/usr/bin/env bash
# test/majors/logical_upgrade.sh [OLD NEW] — "Upgrade to a new PostgreSQL
# major with logical replication" (README), step by step, from PostgreSQL
# OLD on this host (15, Debian 12's) to PostgreSQL NEW in its Debian root
# (test/lib/roots.sh; 17, trixie's, by default). Both servers listen on
# 127.0.0.1; the new server subscribes to the old one.
# majors: 15 17
#
# The old server has a configured layout, four logical shards with two
# sharded tables, one generator an hour ahead of the clock, and a writer
# that keeps inserting while the new server copies and catches up. After
# the cut-over and sync_generators(), every new ID of every shard is above
# every replicated one, and every row arrived exactly once.
#
# Run as root (test/matrix runs it after the per-major suites, with the
# majors of its "# majors:" line as arguments).
set -euo pipefail
cd "$(dirname "$0")/../.."
OLD=${1:-15}
NEW=${2:-17}
[ "$OLD" = 15 ] || { echo "logical_upgrade.sh: the old server is this host's PostgreSQL 15, not $OLD" >&2; exit 2; }
export SHARDID_PG=$OLD
source test/lib/deps.sh
source test/lib/checks.sh
source test/majors/lib/server.sh
source test/lib/roots.sh
install_deps
make -s clean >/dev/null
make -s >/dev/null
make -s install >/dev/null

# --- the old server: PostgreSQL $OLD on the host --------------------------------
pg_start old "listen_addresses = '127.0.0.1'" "wal_level = logical"
OLD_PORT=$PGPORT
old() { q -h 127.0.0.1 -p "$OLD_PORT" -d app "$@"; }

# --- the new server: PostgreSQL $NEW in its root --------------------------------
root_ensure $NEW
root_enter $NEW
ROOT=$(root_dir $NEW)
NEW_PORT=$(pg_free_port)
NEW_DIR=/tmp/shardid-upgrade-new
stop_new() {
	if [ -f "$ROOT$NEW_DIR/data/postmaster.pid" ]; then
		root_run $NEW runuser -u postgres -- /usr/lib/postgresql/$NEW/bin/pg_ctl \
			-D $NEW_DIR/data -m fast -w stop >/dev/null 2>&1 || true
	fi
	rm -rf "${ROOT:?}$NEW_DIR"
}
cleanup() { stop_new; pg_stop_all; root_leave_all; }
trap cleanup EXIT

root_copy_checkout $NEW
root_run $NEW bash -c "cd /build/shardid && SHARDID_PG=$NEW && source test/lib/deps.sh &&
	install_deps && make -s clean >/dev/null && make -s >/dev/null && make -s install >/dev/null"
rm -rf "${ROOT:?}$NEW_DIR"
mkdir -p "$ROOT$NEW_DIR"
root_run $NEW chown postgres: $NEW_DIR
root_run $NEW runuser -u postgres -- /usr/lib/postgresql/$NEW/bin/initdb -D $NEW_DIR/data \
	-U postgres -A trust --no-sync >/dev/null
root_run $NEW runuser -u postgres -- /usr/lib/postgresql/$NEW/bin/pg_ctl -D $NEW_DIR/data \
	-l $NEW_DIR/server.log -w -o "-c listen_addresses=127.0.0.1 -c port=$NEW_PORT -c unix_socket_directories=$NEW_DIR -c fsync=off" \
	start >/dev/null
new() { q -h 127.0.0.1 -p "$NEW_PORT" -d app "$@"; }
[ "$(q -h 127.0.0.1 -p "$NEW_PORT" -d postgres -c 'SHOW server_version_num')" -ge $((NEW * 10000)) ] ||
	fail "the new server is not PostgreSQL $NEW"

# --- the application on the old server -----------------------------------------
q -h 127.0.0.1 -p "$OLD_PORT" -d postgres -c 'CREATE DATABASE app'
old <<'SQL' >/dev/null
CREATE EXTENSION shardid;
SELECT shardid.configure('2020-01-01 00:00:00+00', shard_bits => 12, seq_bits => 11);
SELECT shardid.create_shards(0, 3);
CREATE TABLE public.photos (id bigint PRIMARY KEY, user_id bigint NOT NULL, caption text);
CREATE TABLE public.comments (id bigint PRIMARY KEY, photo_id bigint NOT NULL, body text);
SELECT shardid.create_table('public.photos');
SELECT shardid.create_table('public.comments');
-- shard 2's generator runs an hour ahead of the clock (a fast clock on the
-- old primary, or a long burst): its IDs are an hour in the future
SELECT pg_catalog.setval('shard_0002.id_seq',
       (shardid.make_id(now() + interval '1 hour', 0, 0) >> 23) << 11);
SQL
for s in 0 1 2 3; do
	old -c "INSERT INTO shard_000$s.photos (user_id, caption) SELECT g, 'before' FROM generate_series(1, 200) AS g;
	        INSERT INTO shard_000$s.comments (photo_id, body) SELECT g, 'before' FROM generate_series(1, 100) AS g;"
done
[ "$(old -c "SELECT min(shardid.id_time(id)) > now() + interval '50 minutes' FROM shard_0002.photos")" = t ] ||
	fail "shard 2's IDs are not an hour ahead"

# --- 1. schema, layout and shard registry on the new server --------------------
q -h 127.0.0.1 -p "$NEW_PORT" -d postgres -c 'CREATE DATABASE app'
root_run $NEW /usr/lib/postgresql/$NEW/bin/pg_dump -h 127.0.0.1 -p "$OLD_PORT" -U postgres -d app \
	--schema-only >"$old_DIR/schema.sql"
root_run $NEW /usr/lib/postgresql/$NEW/bin/pg_dump -h 127.0.0.1 -p "$OLD_PORT" -U postgres -d app \
	--data-only -t shardid.layout_config -t shardid.shard_registry -t shardid.sharded_tables \
	-t shardid.ids_issued >"$old_DIR/shardid-config.sql"
# Debian 12's PostgreSQL 15.20 stores a column option "pg_attver" on every
# column, which later majors refuse: those lines are dropped.
sed -E -i '/^ALTER TABLE ONLY .* ALTER COLUMN .* SET \(pg_attver=[0-9]+\);$/d' "$old_DIR/schema.sql"
new -f "$old_DIR/schema.sql" >/dev/null
new -f "$old_DIR/shardid-config.sql" >/dev/null
[ "$(new -c 'SELECT row(l.*) FROM shardid.layout() AS l')" = "$(old -c 'SELECT row(l.*) FROM shardid.layout() AS l')" ] ||
	fail "the layout did not travel: $(new -c 'SELECT row(l.*) FROM shardid.layout() AS l')"
[ "$(new -c 'SELECT count(*) FROM shardid.shards')" = 4 ] || fail "the shard registry did not travel"
echo "ok - 1. schema, layout ($(new -c 'SELECT shard_bits || '"'"'/'"'"' || seq_bits FROM shardid.layout()') bits) and 4 shards on PostgreSQL $NEW"

# --- 2. publication of the shard schemas on the old server ---------------------
old -c "SELECT pg_catalog.format('CREATE PUBLICATION shardid_upgrade FOR TABLES IN SCHEMA %s',
               pg_catalog.string_agg(pg_catalog.quote_ident(schema), ', ' ORDER BY shard))
          FROM shardid.shards" >"$old_DIR/publication.sql"
old -f "$old_DIR/publication.sql" >/dev/null
echo "ok - 2. publication: $(cat "$old_DIR/publication.sql")"

# --- 3. subscription on the new server, while the application writes ----------
writer_log=$old_DIR/writer.log
(
	for i in $(seq 1 300); do
		s=$((i % 4))
		old -c "INSERT INTO shard_000$s.photos (user_id, caption) VALUES ($i, 'during') RETURNING id" || exit 1
	done
) >"$writer_log" 2>&1 &
writer=$!
new -c "CREATE SUBSCRIPTION shardid_upgrade
            CONNECTION 'host=127.0.0.1 port=$OLD_PORT dbname=app user=postgres'
            PUBLICATION shardid_upgrade" >/dev/null
wait $writer || fail "the writer failed: $(tail -n 3 "$writer_log")"
echo "ok - 3. subscription created while $(wc -l <"$writer_log") rows were written"

# --- 4. catch-up ---------------------------------------------------------------
for _ in $(seq 1 300); do
	[ "$(new -c "SELECT count(*) FROM pg_subscription_rel WHERE srsubstate <> 'r'")" = 0 ] && break
	sleep 0.2
done
[ "$(new -c "SELECT count(*) FROM pg_subscription_rel WHERE srsubstate <> 'r'")" = 0 ] ||
	fail "the initial copy did not finish"
echo "ok - 4. initial copy of $(new -c 'SELECT count(*) FROM pg_subscription_rel') tables done"

# --- 5. cut-over: writes stop on the old server, the new one confirms its WAL --
old -c "ALTER DATABASE app SET default_transaction_read_only = on" >/dev/null
old -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE datname = 'app' AND backend_type = 'client backend' AND pid <> pg_backend_pid()" >/dev/null
lsn=$(old -c 'SELECT pg_current_wal_lsn()')
for _ in $(seq 1 300); do
	[ "$(old -c "SELECT confirmed_flush_lsn >= '$lsn' FROM pg_replication_slots WHERE slot_name = 'shardid_upgrade'")" = t ] && break
	sleep 0.2
done
[ "$(old -c "SELECT confirmed_flush_lsn >= '$lsn' FROM pg_replication_slots WHERE slot_name = 'shardid_upgrade'")" = t ] ||
	fail "the new server did not confirm $lsn"
new -c 'DROP SUBSCRIPTION shardid_upgrade' >/dev/null
old -c 'BEGIN READ WRITE; DROP PUBLICATION shardid_upgrade; COMMIT;' >/dev/null
for t in photos comments; do
	for s in 0 1 2 3; do
		o=$(old -c "SELECT count(*) || ' ' || md5(string_agg(id::text, ',' ORDER BY id)) FROM shard_000$s.$t")
		n=$(new -c "SELECT count(*) || ' ' || md5(string_agg(id::text, ',' ORDER BY id)) FROM shard_000$s.$t")
		[ "$o" = "$n" ] || fail "shard_000$s.$t differs after the cut-over: old $o, new $n"
	done
done
[ "$(new -c "SELECT count(*) FROM shard_0001.photos WHERE caption = 'during'")" = 75 ] ||
	fail "rows written during the copy are missing"
echo "ok - 5. cut-over at $lsn: every row of the 8 shard tables on the new server, none twice"
[ "$(q -h 127.0.0.1 -p "$OLD_PORT" -d postgres -c "SELECT count(*) FROM pg_replication_slots")" = 0 ] ||
	fail "a replication slot was left on the old server"

# The defect sync_generators() fixes: the new server's generators start from
# the clock, below the replicated IDs of shard 2 (rolled back; the state it
# consumed is raised past anyway).
below=$(new -c "BEGIN;
	INSERT INTO shard_0002.photos (user_id, caption) VALUES (0, 'probe')
	    RETURNING id < (SELECT max(id) FROM shard_0002.photos);
	ROLLBACK;" | head -n 1)
[ "$below" = t ] || fail "expected an unsynced generator to issue below the replicated IDs"
echo "ok - without sync_generators(), shard 2's next ID is below its replicated ones"

# --- 6. sync_generators() on the new server ------------------------------------
# (it returns a row per generator raised, and per DEFAULT it did not trust)
raised=$(new -c "SELECT string_agg(action, ',') FROM shardid.sync_generators()")
[ "$raised" = raised,raised,raised,raised ] || fail "sync_generators() returned '$raised', expected 4 generators raised"
[ "$(new -c 'SELECT count(*) FROM shardid.sync_generators()')" = 0 ] || fail "a second sync_generators() raised again"
echo "ok - 6. sync_generators() raised 4 generators"

# --- 7. the application writes to the new server -------------------------------
for s in 0 1 2 3; do
	new -c "INSERT INTO shard_000$s.photos (user_id, caption) SELECT g, 'after' FROM generate_series(1, 20) AS g;
	        INSERT INTO shard_000$s.comments (photo_id, body) SELECT g, 'after' FROM generate_series(1, 20) AS g;" >/dev/null
	r=$(new -c "WITH ids AS (SELECT id, caption AS what FROM shard_000$s.photos
	                         UNION ALL SELECT id, body FROM shard_000$s.comments)
	            SELECT (SELECT min(id) FROM ids WHERE what = 'after') > (SELECT max(id) FROM ids WHERE what <> 'after')
	               AND (SELECT bool_and(shardid.id_shard(id) = $s) FROM ids WHERE what = 'after')
	               AND (SELECT count(*) FROM ids WHERE what = 'after') = 40")
	[ "$r" = t ] || fail "shard $s: new IDs are not all above the replicated ones"
done
[ "$(new -c "SELECT min(shardid.id_time(id)) > now() + interval '50 minutes' FROM shard_0002.photos WHERE caption = 'after'")" = t ] ||
	fail "shard 2's new IDs did not continue from its state an hour ahead"
echo "ok - 7. 160 new rows on PostgreSQL $NEW: every shard's new IDs above all its replicated ones"
echo "logical_upgrade: all checks passed"
