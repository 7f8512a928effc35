# shellcheck shell=bash
# test/lib/moves.sh — the setting of the shard-move tests (test/e2e/move_*.sh):
# a router with dblink (and PL/Proxy where it is installed: writes are
# routed through it, else over dblink) and two data nodes with wal_level = logical,
# 16 shards (0-7 on a, 6 in a schema named with a quote, a semicolon and
# capitals; 8-15 on b), a writer procedure on the router, and helpers:
#   leftovers, where, writable, refused, other, conn_of, placed — state checks
#   hold_pause, release_pause, start_paused, stop_paused — a CALL stopped in a
#     phase by the test hook shardid_test.move_pause (test/lib/move_pause.sql)
#   move, move_fails — a CALL that must succeed or fail, its output in $out
# Source it after test/lib/e2e.sh; sets A, B, R (connect strings), sql().
logical=("wal_level = logical" "max_wal_senders = 20" "max_replication_slots = 20" "max_logical_replication_workers = 8"
	"wal_sender_timeout = 5s" "wal_receiver_status_interval = 1s")
pg_start node_a "${logical[@]}"
pg_start node_b "${logical[@]}"
pg_start router
A=$(connstr "$node_a_DIR")
B=$(connstr "$node_b_DIR")
R=$(connstr "$router_DIR")
createdb_app "$node_a_DIR" "$node_b_DIR" "$router_DIR"
ODD="Odd'; DROP TABLE x;--Shard"

# --- 16 shards: 0-7 on a (6 in a schema with an odd name), 8-15 on b -------
node_setup() {
	sql "$1" <<-EOF
	CREATE EXTENSION shardid;
	CREATE ROLE app;
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
-- privileges travel with the shard
GRANT USAGE ON SCHEMA shard_0005 TO app;
GRANT SELECT, INSERT ON shard_0005.posts TO app;
GRANT USAGE ON SEQUENCE shard_0005.id_seq TO app;
EOF
sql "$B" >/dev/null <<<"SELECT shardid.create_shards(8, 15); SELECT shardid.create_table('public.posts');"
# The router routes through PL/Proxy where it is installed, else (19) over
# dblink, to the connect string PL/Proxy would use (router_dblink_sql).
if have_extension plproxy; then
	echo "# router: PL/Proxy"
	sql "$R" >/dev/null <<<"CREATE EXTENSION plproxy"
	routing=$(cat <<-'SQL'
	CREATE FUNCTION public.insert_post(i_user bigint, i_body text) RETURNS bigint AS $$
	    CLUSTER 'shardid'; RUN ON public.user_shard(i_user);
	$$ LANGUAGE plproxy;
	CREATE FUNCTION public.shard_ids(i_shards integer[]) RETURNS SETOF bigint AS $$
	    CLUSTER 'shardid'; SPLIT i_shards; RUN ON i_shards;
	$$ LANGUAGE plproxy;
	SQL
	)
else
	echo "# router: no PL/Proxy for PostgreSQL $(pg_config --version | awk '{print $2}'), routing over dblink"
	routing="$(router_dblink_sql)
	$(cat <<-'SQL'
	CREATE FUNCTION public.insert_post(i_user bigint, i_body text) RETURNS bigint LANGUAGE sql AS $$
	    SELECT t.id FROM public.dblink(public.shard_connstr(public.user_shard(i_user)),
	                                   format('SELECT public.insert_post(%s, %L)', i_user, i_body)) AS t(id bigint)
	$$;
	CREATE FUNCTION public.shard_ids(i_shards integer[]) RETURNS SETOF bigint LANGUAGE sql AS $$
	    SELECT t.id FROM (SELECT public.shard_connstr(s) AS c, array_agg(s) AS ss FROM unnest(i_shards) AS s GROUP BY 1) AS g,
	           LATERAL public.dblink(g.c, format('SELECT public.shard_ids(%L)', g.ss)) AS t(id bigint)
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
SELECT shardid.place_shards('b', 8, 15);
CREATE FUNCTION public.user_shard(i_user bigint) RETURNS integer LANGUAGE sql IMMUTABLE AS 'SELECT (i_user % 16)::integer';
$routing
-- Every ID the application was given, when, and after how many retries.
CREATE TABLE public.written (n bigserial PRIMARY KEY, id bigint NOT NULL UNIQUE, user_id bigint NOT NULL,
                             at timestamptz NOT NULL DEFAULT clock_timestamp(), retries integer NOT NULL DEFAULT 0);
CREATE TABLE public.stop_writer (stop boolean NOT NULL);
-- Writes to i_users in turn until stop_writer has a row; retries a write
-- refused with 25006 (frozen for the cut-over, or the retired copy) or
-- 42704 (a call begun before the repoint reached the old node after its
-- copy was renamed: insert_post's shard_schema() no longer finds it).
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
            EXCEPTION WHEN read_only_sql_transaction OR undefined_object THEN
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
# the pause point of hold_pause/start_paused (not part of the extension)
sql "$R" >/dev/null <"$(dirname "${BASH_SOURCE[0]}")/move_pause.sql"

# leftovers — what a move may leave behind, on both nodes: publications,
# subscriptions, slots, roles of a move, frozen triggers, and the router's
# move rows
leftovers() {
	local a b
	a=$(sql "$A" <<<"SELECT (SELECT count(*) FROM pg_publication) || ' ' || (SELECT count(*) FROM pg_subscription) || ' ' ||
		(SELECT count(*) FROM pg_replication_slots) || ' ' || (SELECT count(*) FROM pg_roles WHERE rolname LIKE 'shardid_move%') || ' ' ||
		(SELECT count(*) FROM pg_trigger WHERE tgname = 'shardid_move_frozen')")
	b=$(sql "$B" <<<"SELECT (SELECT count(*) FROM pg_publication) || ' ' || (SELECT count(*) FROM pg_subscription) || ' ' ||
		(SELECT count(*) FROM pg_replication_slots) || ' ' || (SELECT count(*) FROM pg_roles WHERE rolname LIKE 'shardid_move%') || ' ' ||
		(SELECT count(*) FROM pg_trigger WHERE tgname = 'shardid_move_frozen')")
	read -r pa sa la ra fa <<<"$a"
	read -r pb sb lb rb fb <<<"$b"
	echo "pub=$pa+$pb sub=$sa+$sb slots=$la+$lb roles=$ra+$rb frozen=$fa+$fb moves=$(sql "$R" <<<"SELECT count(*) FROM shardid.shard_moves")"
}
# shellcheck disable=SC2034 # used by the scripts that source this
clean="pub=0+0 sub=0+0 slots=0+0 roles=0+0 frozen=0+0 moves=0"
# where SHARD — node of the placement / nodes registering it
where() {
	echo "$(sql "$R" <<<"SELECT node FROM shardid.shard_placement WHERE shard = $1")" \
		"a:$(sql "$A" <<<"SELECT count(*) FROM shardid.shard_registry WHERE shard = $1")" \
		"b:$(sql "$B" <<<"SELECT count(*) FROM shardid.shard_registry WHERE shard = $1")"
}
# writable SHARD-USER — a write through the router lands on the shard
writable() { sql "$R" <<<"SELECT shardid.id_shard(insert_post($1, 'check'))"; }
# refused USER — the SQLSTATE of a write through the router ('' if it worked)
refused() { psql -X -At -d "$R" -v VERBOSITY=sqlstate -c "SELECT insert_post($1, 'refused?')" 2>&1 >/dev/null | sed -n 's/^ERROR: *//p'; }
# other NODE — the node that is not NODE
other() { [ "$1" = a ] && echo b || echo a; }
conn_of() { [ "$1" = a ] && echo "$A" || echo "$B"; }
placed() { sql "$R" <<<"SELECT node FROM shardid.shard_placement WHERE shard = $1"; }

# --- pausing a CALL in a phase ------------------------------------------------
# A session holds the advisory lock the hook waits for; the CALL runs with
# shardid_test.move_pause = PHASE and waits there.
pause_key="hashtext('shardid_test.move_pause')"
hold_pause() {
	psql -X -q -d "$R" -c "SELECT pg_advisory_lock($pause_key, $1); SELECT pg_sleep(900)" >/dev/null 2>&1 &
	holder=$!
	for _ in $(seq 100); do
		[ "$(sql "$R" <<<"SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = $pause_key::oid AND objid = $1")" = 1 ] && return 0
		sleep 0.05
	done
	fail "the pause lock was not taken"
}
release_pause() {
	sql "$R" >/dev/null <<<"SELECT pg_cancel_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = $pause_key::oid AND objid = $1"
	wait "$holder" 2>/dev/null || true
}
# start_paused SHARD TO PHASE [CALL arguments] — the CALL in the background
# ($bg), stopped in PHASE; $mpid is its backend
start_paused() {
	local s=$1 to=$2 ph=$3 args=${4:-}
	hold_pause "$s"
	PGOPTIONS="-c shardid_test.move_pause=$ph" psql -X -q -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -d "$R" \
		-c "CALL shardid.move_shard($s, '$to', drop_old => true$args)" >"$router_DIR/bg.log" 2>&1 &
	bg=$!
	for _ in $(seq 1200); do
		mpid=$(sql "$R" <<<"SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND classid = $pause_key::oid AND objid = $s")
		[ -n "$mpid" ] && return 0
		kill -0 $bg 2>/dev/null || break
		sleep 0.05
	done
	cat "$router_DIR/bg.log"
	fail "the move did not reach phase $ph"
}
# stop_paused cancel|terminate — signal the paused CALL's backend, let it end
stop_paused() {
	sql "$R" >/dev/null <<<"SELECT pg_$1_backend($mpid)"
	wait $bg && fail "the interrupted CALL succeeded" || true
	release_pause "$2"
}
# move SHARD TO [CALL arguments] — a CALL that must succeed; its output in $out
move() { out=$(psql -X -q -v ON_ERROR_STOP=1 -d "$R" -c "CALL shardid.move_shard($1, '$2'${3:-})" 2>&1) || { echo "$out"; fail "CALL move_shard($1, '$2'${3:-}) failed"; }; }
# move_fails SHARD TO [CALL arguments] — a CALL that must fail; its output in $out
move_fails() { ! out=$(psql -X -q -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -d "$R" -c "CALL shardid.move_shard($1, '$2'${3:-})" 2>&1) || fail "CALL move_shard($1, '$2'${3:-}) succeeded"; }

