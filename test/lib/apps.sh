# shellcheck shell=bash disable=SC2034  # PYTHON, NODE, NODES, ...: set here for the scripts that source this file
# test/lib/apps.sh — shared by the application tests (test/e2e/apps*.sh,
# pgbouncer.sh): Debian packages or a visible skip, Debian's node with
# node-pg, and a router with two data nodes holding 16 shards.
# Source it after test/lib/e2e.sh.

PYTHON=/usr/bin/python3
NODE=/usr/bin/node

# apps_need PACKAGE... — install Debian packages; exit 77 (skip) naming the
# first one this Debian suite does not have.
apps_need() {
	local need=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || need+=("$p")
	done
	[ ${#need[@]} -gt 0 ] || return 0
	[ "$(id -u)" = 0 ] || fail "Debian packages missing: ${need[*]}"
	for p in "${need[@]}"; do
		if [ -z "$(apt-cache policy "$p" 2>/dev/null | sed -n 's/^ *Candidate: //p' | grep -v '(none)')" ]; then
			apt-get update -q >/dev/null 2>&1 || true
			if [ -z "$(apt-cache policy "$p" 2>/dev/null | sed -n 's/^ *Candidate: //p' | grep -v '(none)')" ]; then
				echo "SKIP: Debian $(. /etc/os-release; echo "${VERSION_CODENAME:-$VERSION_ID}") has no package $p"
				exit 77
			fi
		fi
	done
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
}

# apps_js_available — true if nodejs is (or can be) Debian's, so Debian's
# node-* packages fit it. NodeSource's build (on this project's Debian 12
# host) cannot take them: the scripts then run their Python parts, skip the
# JavaScript ones and exit 77 ("SKIP: ...") at the end; the Debian roots of
# test/matrix run everything. SHARDID_APPS_NO_JS=1 forces the same (to test
# that path in a root).
apps_js_available() {
	local v
	[ -z "${SHARDID_APPS_NO_JS:-}" ] || return 1
	v=$(dpkg-query -W -f='${Version}' nodejs 2>/dev/null || true)
	[[ "$v" != *nodesource* ]]
}

# apps_js_skipped WHAT — the closing line of a script whose JavaScript parts
# did not run: exit 77 (skip) with the reason.
apps_js_skipped() {
	local why
	why="nodejs $(dpkg-query -W -f='${Version}' nodejs 2>/dev/null || echo '?') is not Debian's"
	[ -z "${SHARDID_APPS_NO_JS:-}" ] || why="SHARDID_APPS_NO_JS is set"
	echo "SKIP: $1 not run: $why (the Python parts passed; the Debian roots run everything)"
	exit 77
}

# apps_js_dir DIR — the JavaScript clients in DIR with node-postgres (Debian's
# node-pg) as node_modules/pg, where an ES module import finds it.
apps_js_dir() {
	mkdir -p "$1/node_modules"
	cp "$top"/clients/js/*.mjs "$top"/clients/js/package.json "$1/"
	ln -sfn /usr/share/nodejs/pg "$1/node_modules/pg"
}

# apps_cluster [postgresql.conf lines...] — a router (dblink for the moves
# and shardid: the applications route themselves, no PL/Proxy) and
# nodes a and b (wal_level = logical) with database app; 16 shards with a
# table posts (id, user_id, body): 0-7 on a, 8-15 on b. Sets A, B, R (connect
# strings) and NODES (JSON {"a": A, "b": B}).
apps_cluster() {
	local logical=("wal_level = logical" "max_wal_senders = 20" "max_replication_slots = 20"
		"max_logical_replication_workers = 8" "wal_sender_timeout = 5s" "wal_receiver_status_interval = 1s")
	pg_start node_a "${logical[@]}" "$@"
	pg_start node_b "${logical[@]}" "$@"
	pg_start router "$@"
	A=$(connstr "$node_a_DIR")
	B=$(connstr "$node_b_DIR")
	R=$(connstr "$router_DIR")
	NODES=$(printf '{"a": "%s", "b": "%s"}' "$A" "$B")
	createdb_app "$node_a_DIR" "$node_b_DIR" "$router_DIR"
	local d
	q -d "$A" <<<"CREATE EXTENSION shardid; SELECT shardid.create_shards(0, 7);" >/dev/null
	q -d "$B" <<<"CREATE EXTENSION shardid; SELECT shardid.create_shards(8, 15);" >/dev/null
	for d in "$A" "$B"; do
		q -d "$d" >/dev/null <<-'SQL'
		CREATE TABLE public.posts (id bigint PRIMARY KEY, user_id bigint NOT NULL, body text NOT NULL);
		SELECT shardid.create_table('public.posts');
		SQL
	done
	q -d "$R" >/dev/null <<-EOF
	CREATE EXTENSION dblink;
	CREATE EXTENSION shardid;
	SELECT shardid.add_node('a', '$A');
	SELECT shardid.add_node('b', '$B');
	SELECT shardid.place_shards('a', 0, 7);
	SELECT shardid.place_shards('b', 8, 15);
	EOF
}
