# shellcheck shell=bash disable=SC2034  # PYTHON, NODES, ...: set here for the scripts that source this file
# test/lib/apps.sh — what is left of the application tests' bash helpers,
# for bench/routing only: Debian packages, and a router with two data nodes
# holding 16 shards on private servers (test/lib/server.sh). The tests
# themselves are TAP files on PostgreSQL::Test::Cluster (test/tap/apps.pl
# and the others using test/tap/ShardidApps.pm, whose apps_cluster is this
# one's counterpart). Source it after test/lib/e2e.sh.

# shellcheck source=test/lib/deps.sh
source "$(dirname "${BASH_SOURCE[0]}")/deps.sh"

PYTHON=/usr/bin/python3

# apps_need PACKAGE... — deps_need of test/lib/deps.sh.
apps_need() { deps_need "$@"; }

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
