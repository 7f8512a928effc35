#!/usr/bin/env bash
# test/majors/logical_upgrade_19.sh [OLD NEW] — docs/upgrades.md's upgrade to
# PostgreSQL 19 with logical replication, without and with sequence
# replication, from PostgreSQL OLD (18, Debian forky's) to NEW (19, forky +
# experimental), in their Debian root (test/lib/roots.sh: one for both). Every server
# listens on 127.0.0.1; clients run on this host.
# majors: 18 19
#
# Without sequences (the recipe for 18 -> 19): the old server has a
# configured layout, four logical shards with two sharded tables, shard 2's
# generator an hour ahead of the clock, and a writer inserting while the new
# server copies the shard schemas (FOR TABLES IN SCHEMA) and catches up.
# After the cut-over and sync_generators(), every new ID of every shard is
# above every copied one, and every row arrived exactly once.
#
# With sequences: 18 has no FOR ALL SEQUENCES (the old server refuses it), so
# sequence replication starts with a 19 publisher: the upgraded server
# publishes FOR ALL TABLES, ALL SEQUENCES to a second 19 server (the next
# major's upgrade, or new hardware) while a writer inserts. There next_id()
# refuses the synchronised generators (55000) until the cut-over (REFRESH
# SEQUENCES, DROP SUBSCRIPTION, sync_generators()), after which every
# generator issues above every copied ID.
#
# Run as root (test/matrix runs it after the per-major suites, with the
# majors of its "# majors:" line as arguments).
set -euo pipefail
cd "$(dirname "$0")/../.."
OLD=${1:-18}
NEW=${2:-19}
[ "$NEW" -ge 19 ] || { echo "logical_upgrade_19.sh: sequence replication needs a PostgreSQL 19 server, not $NEW" >&2; exit 2; }
source test/lib/checks.sh
source test/majors/lib/server.sh
source test/lib/roots.sh
command -v psql >/dev/null || fail "no psql on this host"
export PGUSER=postgres
work=$(mktemp -d /tmp/shardid-upgrade-19.XXXXXX)

# Servers inside roots: "MAJOR DIR" of each one started, stopped on exit.
servers=()
stop_servers() {
	local s m dir
	for s in "${servers[@]}"; do
		m=${s%% *}
		dir=${s#* }
		if [ -f "$(root_dir "$m")$dir/data/postmaster.pid" ]; then
			root_run "$m" runuser -u postgres -- "/usr/lib/postgresql/$m/bin/pg_ctl" \
				-D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
		fi
		rm -rf "$(root_dir "$m")${dir:?}"
	done
	servers=()
}
# (set again once the roots are entered: root_enter sets its own EXIT trap)
cleanup() { stop_servers; root_leave_all; rm -rf "$work"; }
trap cleanup EXIT

# prepare_root MAJOR — the root entered, shardid built and installed there.
prepare_root() {
	root_ensure "$1"
	root_enter "$1"
	root_copy_checkout "$1"
	root_run "$1" bash -c "cd /build/shardid && SHARDID_PG=$1 && source test/lib/deps.sh &&
		install_deps >/dev/null && make -s clean >/dev/null && make -s >/dev/null && make -s install >/dev/null"
}

# start_server MAJOR NAME [SETTING...] — a server in that major's root on a
# free port of 127.0.0.1 (left in $port), with an empty database app.
start_server() {
	local m=$1 name=$2 dir opts s
	shift 2
	dir=/tmp/shardid-$name
	port=$(pg_free_port)
	rm -rf "$(root_dir "$m")$dir"
	mkdir -p "$(root_dir "$m")$dir"
	root_run "$m" chown postgres: "$dir"
	servers+=("$m $dir")
	root_run "$m" runuser -u postgres -- "/usr/lib/postgresql/$m/bin/initdb" -D "$dir/data" \
		-U postgres -A trust --no-sync >/dev/null
	opts="-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c fsync=off"
	for s in "$@"; do opts+=" -c $s"; done
	root_run "$m" runuser -u postgres -- "/usr/lib/postgresql/$m/bin/pg_ctl" -D "$dir/data" \
		-l "$dir/server.log" -w -o "$opts" start >/dev/null
	[ "$(q -h 127.0.0.1 -p "$port" -d postgres -c 'SHOW server_version_num')" -ge $((m * 10000)) ] ||
		fail "the server on port $port is not PostgreSQL $m"
	q -h 127.0.0.1 -p "$port" -d postgres -c 'CREATE DATABASE app'
}

# dump PORT ARGS... — the new major's pg_dump of database app on PORT.
dump() {
	local port=$1
	shift
	root_run "$NEW" "/usr/lib/postgresql/$NEW/bin/pg_dump" -h 127.0.0.1 -p "$port" -U postgres -d app "$@"
}

# wait_until DB-FUNCTION SQL WHAT — poll until SQL returns t (60 s).
wait_until() {
	local i
	for i in $(seq 1 300); do
		[ "$("$1" -c "$2")" = t ] && return 0
		sleep 0.2
	done
	fail "timed out waiting until $3"
}

# cut_over PUBLISHER-FUNCTION PUBLISHER-PORT SUBSCRIBER-FUNCTION NAME —
# writes stop on the publisher, the subscriber confirms its WAL position.
cut_over() {
	local pub=$1 port=$2 name=$4 lsn
	"$pub" -c "ALTER DATABASE app SET default_transaction_read_only = on" >/dev/null
	"$pub" -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
	           WHERE datname = 'app' AND backend_type = 'client backend' AND pid <> pg_backend_pid()" >/dev/null
	lsn=$("$pub" -c 'SELECT pg_current_wal_lsn()')
	wait_until "$pub" "SELECT confirmed_flush_lsn >= '$lsn' FROM pg_replication_slots WHERE slot_name = '$name'" \
		"the subscriber confirms $lsn"
	echo "$lsn"
}

# same_rows PUB SUB — every shard table holds the same IDs on both.
same_rows() {
	local t s o n
	for t in photos comments; do
		for s in 0 1 2 3; do
			o=$("$1" -c "SELECT count(*) || ' ' || md5(string_agg(id::text, ',' ORDER BY id)) FROM shard_000$s.$t")
			n=$("$2" -c "SELECT count(*) || ' ' || md5(string_agg(id::text, ',' ORDER BY id)) FROM shard_000$s.$t")
			[ "$o" = "$n" ] || fail "shard_000$s.$t differs after the cut-over: $o on the publisher, $n on the subscriber"
		done
	done
}

# issues_above DB-FUNCTION LABEL — 20 new rows per table and shard, each
# shard's new IDs above every ID it held, and of its shard.
issues_above() {
	local db=$1 s r
	for s in 0 1 2 3; do
		"$db" -c "INSERT INTO shard_000$s.photos (user_id, caption) SELECT g, '$2' FROM generate_series(1, 20) AS g;
		          INSERT INTO shard_000$s.comments (photo_id, body) SELECT g, '$2' FROM generate_series(1, 20) AS g;" >/dev/null
		r=$("$db" -c "WITH ids AS (SELECT id, caption AS what FROM shard_000$s.photos
		                           UNION ALL SELECT id, body FROM shard_000$s.comments)
		              SELECT (SELECT min(id) FROM ids WHERE what = '$2') > (SELECT max(id) FROM ids WHERE what <> '$2')
		                 AND (SELECT bool_and(shardid.id_shard(id) = $s) FROM ids WHERE what = '$2')
		                 AND (SELECT count(*) FROM ids WHERE what = '$2') = 40")
		[ "$r" = t ] || fail "shard $s: the IDs of '$2' are not all above the copied ones"
	done
	[ "$("$db" -c "SELECT min(shardid.id_time(id)) > now() + interval '50 minutes' FROM shard_0002.photos WHERE caption = '$2'")" = t ] ||
		fail "shard 2's new IDs did not continue from its state an hour ahead"
}

# writer DB-FUNCTION LOG TAG — 300 single-row inserts, in the background.
writer() {
	(
		for i in $(seq 1 300); do
			"$1" -c "INSERT INTO shard_000$((i % 4)).photos (user_id, caption) VALUES ($i, '$3') RETURNING id" || exit 1
		done
	) >"$2" 2>&1 &
	writer_pid=$!
}

prepare_root "$OLD"
prepare_root "$NEW"
trap cleanup EXIT
start_server "$OLD" old "wal_level=logical"
OLD_PORT=$port
start_server "$NEW" new "wal_level=logical"
NEW_PORT=$port
old() { q -h 127.0.0.1 -p "$OLD_PORT" -d app "$@"; }
new() { q -h 127.0.0.1 -p "$NEW_PORT" -d app "$@"; }

# --- the application on PostgreSQL $OLD -------------------------------------------
old <<'SQL' >/dev/null
CREATE EXTENSION shardid;
SELECT shardid.configure('2020-01-01 00:00:00+00', shard_bits => 12, seq_bits => 11);
SELECT shardid.create_shards(0, 3);
CREATE TABLE public.photos (id bigint PRIMARY KEY, user_id bigint NOT NULL, caption text);
CREATE TABLE public.comments (id bigint PRIMARY KEY, photo_id bigint NOT NULL, body text);
SELECT shardid.create_table('public.photos');
SELECT shardid.create_table('public.comments');
-- shard 2's generator an hour ahead of the clock (a burst, a fast clock)
SELECT pg_catalog.setval('shard_0002.id_seq',
       (shardid.make_id(now() + interval '1 hour', 0, 0) >> 23) << 11);
SQL
for s in 0 1 2 3; do
	old -c "INSERT INTO shard_000$s.photos (user_id, caption) SELECT g, 'before' FROM generate_series(1, 200) AS g;
	        INSERT INTO shard_000$s.comments (photo_id, body) SELECT g, 'before' FROM generate_series(1, 100) AS g;" >/dev/null
done
echo "ok - PostgreSQL $OLD: layout 12/11 bits, 4 shards, 1200 rows, shard 2 an hour ahead"

# --- without sequences: PostgreSQL $OLD -> $NEW -----------------------------------
err=$(old -c "CREATE PUBLICATION shardid_all FOR ALL TABLES, ALL SEQUENCES" 2>&1 || true)
case "$err" in
	*"syntax error"*) ok "PostgreSQL $OLD refuses FOR ALL SEQUENCES: its sequences cannot be replicated" ;;
	*) fail "PostgreSQL $OLD accepted or failed otherwise on FOR ALL SEQUENCES: $err" ;;
esac

# 1. schema, then the layout, registry and marker, on the new server
dump "$OLD_PORT" --schema-only >"$work/schema.sql"
dump "$OLD_PORT" --data-only -t shardid.layout_config -t shardid.shard_registry \
	-t shardid.sharded_tables -t shardid.ids_issued >"$work/shardid-config.sql"
new -f "$work/schema.sql" >/dev/null
new -f "$work/shardid-config.sql" >/dev/null
expect "1. layout on PostgreSQL $NEW" "$(new -c 'SELECT row(l.*) FROM shardid.layout() AS l')" \
	"$(old -c 'SELECT row(l.*) FROM shardid.layout() AS l')"
expect "1. shards on PostgreSQL $NEW" "$(new -c 'SELECT count(*) FROM shardid.shards')" 4

# 2. publication of the shard schemas; 3. subscription while the application writes
old -c "SELECT pg_catalog.format('CREATE PUBLICATION shardid_upgrade FOR TABLES IN SCHEMA %s',
               pg_catalog.string_agg(pg_catalog.quote_ident(schema), ', ' ORDER BY shard))
          FROM shardid.shards" >"$work/publication.sql"
old -f "$work/publication.sql" >/dev/null
writer old "$work/writer-old.log" during
new -c "CREATE SUBSCRIPTION shardid_upgrade
            CONNECTION 'host=127.0.0.1 port=$OLD_PORT dbname=app user=postgres'
            PUBLICATION shardid_upgrade" >/dev/null
wait $writer_pid || fail "the writer failed: $(tail -n 3 "$work/writer-old.log")"
ok "2-3. publication of the shard schemas, subscription while 300 rows were written"

# 4. catch-up: an 18 publisher gives no sequence to synchronise
wait_until new "SELECT count(*) = 8 AND bool_and(srsubstate = 'r') FROM pg_subscription_rel" "8 tables are copied"
expect "4. sequences the subscription synchronises" \
	"$(new -c "SELECT count(*) FROM pg_subscription_rel AS r JOIN pg_class AS c ON c.oid = r.srrelid WHERE c.relkind = 'S'")" 0

# 5. cut-over
lsn=$(cut_over old "$OLD_PORT" new shardid_upgrade)
new -c 'DROP SUBSCRIPTION shardid_upgrade' >/dev/null
old -c 'BEGIN READ WRITE; DROP PUBLICATION shardid_upgrade; COMMIT;' >/dev/null
same_rows old new
expect "5. rows written during the copy" "$(new -c "SELECT count(*) FROM shard_0001.photos WHERE caption = 'during'")" 75
expect "5. replication slots left on PostgreSQL $OLD" \
	"$(q -h 127.0.0.1 -p "$OLD_PORT" -d postgres -c 'SELECT count(*) FROM pg_replication_slots')" 0
ok "5. cut-over at $lsn: every row of the 8 shard tables, none twice"

# 6. the generators, raised above the copied rows
below=$(new -c "BEGIN;
	INSERT INTO shard_0002.photos (user_id, caption) VALUES (0, 'probe')
	    RETURNING id < (SELECT max(id) FROM shard_0002.photos);
	ROLLBACK;" | head -n 1)
expect "without sync_generators(), shard 2 would issue below its copied IDs" "$below" t
expect "6. sync_generators()" "$(new -c "SELECT string_agg(action, ',') FROM shardid.sync_generators()")" \
	raised,raised,raised,raised
expect "6. a second sync_generators() returns rows" "$(new -c 'SELECT count(*) FROM shardid.sync_generators()')" 0
err=$(psql -X -q -h 127.0.0.1 -p "$NEW_PORT" -d app -v VERBOSITY=verbose -c "SELECT shardid.configure('2021-01-01')" 2>&1 || true)
case "$err" in *"55000: the layout cannot change"*) ;; *) fail "configure() on the upgraded server: $err" ;; esac

# 7. the application on PostgreSQL $NEW
issues_above new after-upgrade
ok "7. PostgreSQL $NEW: every shard issues above its copied IDs (shard 2 still an hour ahead); layout frozen"

# --- with sequences: PostgreSQL $NEW -> $NEW, FOR ALL TABLES, ALL SEQUENCES -------
start_server "$NEW" next
NEXT_PORT=$port
next() { q -h 127.0.0.1 -p "$NEXT_PORT" -d app "$@"; }

# the schema, and the layout before subscribing: the publisher's copy of
# layout_config is then the row already there (the other configuration
# tables, shardid.ids_issued and the generators come by replication)
dump "$NEW_PORT" --schema-only --no-publications --no-subscriptions >"$work/schema-next.sql"
dump "$NEW_PORT" --data-only -t shardid.layout_config >"$work/layout-next.sql"
next -f "$work/schema-next.sql" >/dev/null
next -f "$work/layout-next.sql" >/dev/null
new -c "CREATE PUBLICATION shardid_all FOR ALL TABLES, ALL SEQUENCES" >/dev/null
writer new "$work/writer-new.log" during-next
next -c "CREATE SUBSCRIPTION shardid_all
             CONNECTION 'host=127.0.0.1 port=$NEW_PORT dbname=app user=postgres'
             PUBLICATION shardid_all" >/dev/null
wait $writer_pid || fail "the writer failed: $(tail -n 3 "$work/writer-new.log")"
wait_until next "SELECT count(*) > 0 AND bool_and(srsubstate = 'r') FROM pg_subscription_rel" \
	"every table and sequence is synchronised"
gens=$(next -c "SELECT count(*) FROM pg_subscription_rel AS r JOIN pg_class AS c ON c.oid = r.srrelid
                 JOIN pg_namespace AS n ON n.oid = c.relnamespace
                WHERE c.relkind = 'S' AND n.nspname LIKE 'shard\_%'")
expect "the 4 shard generators are synchronised" "$gens" 4
err=$(psql -X -q -h 127.0.0.1 -p "$NEXT_PORT" -d app -v VERBOSITY=verbose \
	-c "INSERT INTO shard_0002.photos (user_id, caption) VALUES (0, 'too early')" 2>&1 || true)
case "$err" in
	*"55000: sequence shard_0002.id_seq is synchronized by logical replication"*'subscription "shardid_all"'*) ;;
	*) fail "next_id() on a synchronised generator: $err" ;;
esac
ok "while subscribed, next_id() refuses the synchronised generators (55000, the subscription named)"

lsn=$(cut_over new "$NEW_PORT" next shardid_all)
next -c 'ALTER SUBSCRIPTION shardid_all REFRESH SEQUENCES' >/dev/null
wait_until next "SELECT bool_and(srsubstate = 'r') FROM pg_subscription_rel" "REFRESH SEQUENCES is done"
next -c 'DROP SUBSCRIPTION shardid_all' >/dev/null
new -c 'BEGIN READ WRITE; DROP PUBLICATION shardid_all; COMMIT;' >/dev/null
same_rows new next
expect "the registry came by replication" "$(next -c 'SELECT count(*) FROM shardid.shards')" 4
for s in 0 1 2 3; do
	expect "shard $s's generator holds its publisher's last state" \
		"$(next -c "SELECT last_value FROM shard_000$s.id_seq")" "$(new -c "SELECT last_value FROM shard_000$s.id_seq")"
done
expect "sync_generators() after REFRESH SEQUENCES returns rows" "$(next -c 'SELECT count(*) FROM shardid.sync_generators()')" 0
issues_above next after-next
ok "with FOR ALL SEQUENCES, cut-over at $lsn: every shard issues above its copied IDs"
echo "logical_upgrade_19: all checks passed"
