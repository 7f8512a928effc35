# shellcheck shell=bash
# test/majors/lib/upgrade.sh — the steps of docs/upgrades.md's upgrade with
# logical replication, written once for logical_upgrade.sh (15 -> 17) and
# logical_upgrade_19.sh (18 -> 19, then 19 -> 19 with sequences). Source it
# after lib/checks.sh, lib/server.sh and lib/roots.sh, with NEW set to the
# new major (its pg_dump dumps every server).
#
# A "database" below is a shell function running q (checks.sh) against
# database app of one server over 127.0.0.1, such as
#   old() { q -h 127.0.0.1 -p "$OLD_PORT" -d app "$@"; }
# Every server listens on 127.0.0.1; clients run on this host.

# built_by_matrix MAJOR — whether test/matrix's leg of MAJOR passed
# (SHARDID_BUILT_FOR): its root, or the host for 15, holds this checkout's
# build and the packages already.
built_by_matrix() { [[ " ${SHARDID_BUILT_FOR:-} " == *" $1 "* ]]; }

# prepare_root MAJOR — the root entered, shardid built (a job per core) and
# installed there (with the packages of the TAP tier every major runs at
# most: these tests need no more), unless built_by_matrix.
prepare_root() {
	root_ensure "$1"
	root_enter "$1"
	! built_by_matrix "$1" || return 0
	root_copy_checkout "$1"
	root_run "$1" bash -c "cd /build/shardid && SHARDID_PG=$1 && SHARDID_DEPS_TIERS=every && source lib/deps.sh &&
		install_deps >/dev/null && make -s clean >/dev/null && make -s -j\$(nproc) >/dev/null && make -s install >/dev/null"
}

# start_root_server MAJOR NAME [SETTING...] — a server of lib/server.sh in
# that major's root, on 127.0.0.1 (its port left in $port), with an empty
# database app. SETTINGs are postgresql.conf lines. The caller's EXIT trap
# (its cleanup, which calls pg_stop_all) stays in place of pg_start's.
start_root_server() {
	local m=$1 name=$2 caller_trap rc=0
	shift 2
	caller_trap=$(trap -p EXIT)
	pg_start --root "$m" "$name" "listen_addresses = '127.0.0.1'" "$@" || rc=$?
	eval "${caller_trap:-trap pg_stop_all EXIT}"
	[ $rc = 0 ] || fail "PostgreSQL $m did not start in its root"
	port=$PGPORT
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

# wait_until DB SQL WHAT — poll until SQL returns t (60 s).
wait_until() {
	local i
	for i in $(seq 1 300); do
		[ "$("$1" -c "$2")" = t ] && return 0
		sleep 0.2
	done
	fail "timed out waiting until $3"
}

# app_create DB — the application: a layout of 12 shard and 11 sequence
# bits, four logical shards with two sharded tables, shard 2's generator an
# hour ahead of the clock (a fast clock on the old primary, or a long
# burst), 200 photos and 100 comments per shard.
app_create() {
	local db=$1 s
	"$db" >/dev/null <<'SQL'
CREATE EXTENSION shardid;
SELECT shardid.configure('2020-01-01 00:00:00+00', shard_bits => 12, seq_bits => 11);
SELECT shardid.create_shards(0, 3);
CREATE TABLE public.photos (id bigint PRIMARY KEY, user_id bigint NOT NULL, caption text);
CREATE TABLE public.comments (id bigint PRIMARY KEY, photo_id bigint NOT NULL, body text);
SELECT shardid.create_table('public.photos');
SELECT shardid.create_table('public.comments');
SELECT pg_catalog.setval('shard_0002.id_seq',
       (shardid.make_id(now() + interval '1 hour', 0, 0) >> 23) << 11);
SQL
	for s in 0 1 2 3; do
		"$db" -c "INSERT INTO shard_000$s.photos (user_id, caption) SELECT g, 'before' FROM generate_series(1, 200) AS g;
		          INSERT INTO shard_000$s.comments (photo_id, body) SELECT g, 'before' FROM generate_series(1, 100) AS g;" >/dev/null
	done
	expect "shard 2's IDs are an hour ahead" \
		"$("$db" -c "SELECT min(shardid.id_time(id)) > now() + interval '50 minutes' FROM shard_0002.photos")" t
}

# copy_schema OLD-DB OLD-PORT NEW-DB DIR — step 1: the schema, then the
# layout, the shard registry, the sharded tables and the marker, on the new
# server (files in DIR).
copy_schema() {
	dump "$2" --schema-only >"$4/schema.sql"
	dump "$2" --data-only -t shardid.layout_config -t shardid.shard_registry \
		-t shardid.sharded_tables -t shardid.ids_issued >"$4/shardid-config.sql"
	# Debian 12's PostgreSQL 15.20 stores a column option "pg_attver" on
	# every column, which later majors refuse: those lines are dropped.
	sed -E -i '/^ALTER TABLE ONLY .* ALTER COLUMN .* SET \(pg_attver=[0-9]+\);$/d' "$4/schema.sql"
	"$3" -f "$4/schema.sql" >/dev/null
	"$3" -f "$4/shardid-config.sql" >/dev/null
	expect "1. layout on PostgreSQL $NEW" "$("$3" -c 'SELECT row(l.*) FROM shardid.layout() AS l')" \
		"$("$1" -c 'SELECT row(l.*) FROM shardid.layout() AS l')"
	expect "1. shards on PostgreSQL $NEW" "$("$3" -c 'SELECT count(*) FROM shardid.shards')" 4
}

# publish_shards DB DIR — step 2: a publication of every shard schema
# (FOR TABLES IN SCHEMA), written by the server from its registry.
publish_shards() {
	"$1" -c "SELECT pg_catalog.format('CREATE PUBLICATION shardid_upgrade FOR TABLES IN SCHEMA %s',
	               pg_catalog.string_agg(pg_catalog.quote_ident(schema), ', ' ORDER BY shard))
	          FROM shardid.shards" >"$2/publication.sql"
	"$1" -f "$2/publication.sql" >/dev/null
	ok "2. publication: $(cat "$2/publication.sql")"
}

# writer DB LOG TAG — single-row inserts into the four shards in turn, in
# one session, 50 a second, in the background ($writer_pid), until
# writer_stop (and 40 of them at least); LOG gets each new ID.
writer() {
	writer_log=$2
	rm -f "$writer_log.stop"
	(
		i=0
		while [ $i -lt 40 ] || [ ! -e "$writer_log.stop" ]; do
			i=$((i + 1))
			echo "INSERT INTO shard_000$((i % 4)).photos (user_id, caption) VALUES ($i, '$3') RETURNING id;"
			sleep 0.02
		done
	) | "$1" >"$writer_log" 2>&1 &
	writer_pid=$!
}

# writer_stop — the writer stopped and waited for; writer_rows is the
# number of rows it wrote (shard_0001 got every fourth, from the first).
writer_stop() {
	touch "$writer_log.stop"
	wait "$writer_pid" || fail "the writer failed: $(tail -n 3 "$writer_log")"
	writer_rows=$(wc -l <"$writer_log")
}

# subscribe DB PUBLISHER-PORT NAME — a subscription NAME to the publication
# NAME of database app on PUBLISHER-PORT.
subscribe() {
	"$1" -c "CREATE SUBSCRIPTION $3
	             CONNECTION 'host=127.0.0.1 port=$2 dbname=app user=postgres'
	             PUBLICATION $3" >/dev/null
}

# cut_over PUBLISHER-DB NAME — writes stop on the publisher
# and the subscriber confirms its WAL position (printed).
cut_over() {
	local pub=$1 name=$2 lsn
	"$pub" -c "ALTER DATABASE app SET default_transaction_read_only = on" >/dev/null
	"$pub" -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
	           WHERE datname = 'app' AND backend_type = 'client backend' AND pid <> pg_backend_pid()" >/dev/null
	lsn=$("$pub" -c 'SELECT pg_current_wal_lsn()')
	wait_until "$pub" "SELECT confirmed_flush_lsn >= '$lsn' FROM pg_replication_slots WHERE slot_name = '$name'" \
		"the subscriber confirms $lsn"
	echo "$lsn"
}

# copy_while_writing OLD-DB OLD-PORT NEW-DB DIR — steps 3 and 4: the new
# server subscribes to publication shardid_upgrade and copies the 8 shard
# tables while a writer inserts on the old one, from before the
# subscription until every table is copied.
copy_while_writing() {
	writer "$1" "$4/writer.log" during
	subscribe "$3" "$2" shardid_upgrade
	wait_until "$3" "SELECT count(*) = 8 AND bool_and(srsubstate = 'r') FROM pg_subscription_rel" "8 tables are copied"
	writer_stop
	ok "3. subscription created while rows were written ($writer_rows, from before it until the copy was done)"
	ok "4. initial copy of 8 tables done"
}

# cut_over_checked OLD-DB OLD-PORT NEW-DB — step 5: the cut-over from the
# old server, subscription and publication dropped; every row of the 8
# shard tables on the new server, none twice, and no slot left behind.
cut_over_checked() {
	local lsn
	lsn=$(cut_over "$1" shardid_upgrade)
	"$3" -c 'DROP SUBSCRIPTION shardid_upgrade' >/dev/null
	"$1" -c 'BEGIN READ WRITE; DROP PUBLICATION shardid_upgrade; COMMIT;' >/dev/null
	same_rows "$1" "$3"
	expect "5. rows written during the copy" "$("$3" -c "SELECT count(*) FROM shard_0001.photos WHERE caption = 'during'")" \
		$(((writer_rows + 3) / 4))
	expect "5. replication slots left on the old server" \
		"$(q -h 127.0.0.1 -p "$2" -d postgres -c 'SELECT count(*) FROM pg_replication_slots')" 0
	ok "5. cut-over at $lsn: every row of the 8 shard tables on the new server, none twice"
}

# same_rows PUBLISHER-DB SUBSCRIBER-DB — every shard table holds the same IDs on both.
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

# sync_checked DB — step 6: shard 2's generator would issue below its copied
# IDs (a probe, rolled back; the state it consumed is raised past anyway),
# sync_generators() raises the 4 generators, and a second call raises none.
sync_checked() {
	local below
	below=$("$1" -c "BEGIN;
		INSERT INTO shard_0002.photos (user_id, caption) VALUES (0, 'probe')
		    RETURNING id < (SELECT max(id) FROM shard_0002.photos);
		ROLLBACK;" | head -n 1)
	expect "without sync_generators(), shard 2 would issue below its copied IDs" "$below" t
	expect "6. sync_generators()" "$("$1" -c "SELECT string_agg(action, ',') FROM shardid.sync_generators()")" \
		raised,raised,raised,raised
	expect "6. a second sync_generators() returns rows" "$("$1" -c 'SELECT count(*) FROM shardid.sync_generators()')" 0
}

# issues_above DB LABEL — 20 new rows per table and shard, each shard's new
# IDs above every ID it held, and of its shard; shard 2's still an hour ahead.
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
