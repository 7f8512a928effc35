# shellcheck shell=bash
# test/lib/e2e.sh — shared by the end-to-end scripts in test/e2e and
# test/majors: private servers (server.sh), and the helpers they use.
source "$(dirname "${BASH_SOURCE[0]}")/server.sh"

# fail MESSAGE — report a failed check and stop the script (servers stop on exit).
fail() { echo "FAIL: $*" >&2; exit 1; }

# ok MESSAGE — report a passed check.
ok() { echo "ok - $*"; }

# expect NAME ACTUAL EXPECTED — pass if ACTUAL is EXPECTED, else fail.
expect() { [ "$2" = "$3" ] || fail "$1: got '$2', expected '$3'"; ok "$1 ($2)"; }

# q PSQL-ARGS... — run SQL with errors fatal, unaligned tuples-only output.
q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }

# sql CONNSTR — run stdin against CONNSTR, as q does.
sql() { q -d "$1"; }

# createdb_app DIR... — create database app in each server pg_start put in a DIR.
createdb_app() {
	local d
	for d in "$@"; do
		createdb -h "$d" -p "$(cat "$d/port")" -U postgres app
	done
}

# connstr DIR — a libpq connect string to database app of the server that
# pg_start put in DIR (its unix socket and port).
connstr() { echo "host=$1 port=$(cat "$1/port") user=postgres dbname=app"; }

# need_extension NAME — exit 77 (skip), saying why, when the extension NAME
# is not installed for the server on PATH (test/lib/deps.sh exports the
# reason as SHARDID_NO_NAME when it could not build it).
need_extension() {
	local var=SHARDID_NO_${1^^}
	[ -e "$(pg_config --sharedir)/extension/$1.control" ] && return 0
	echo "SKIP: $1 is not installed for PostgreSQL $(pg_config --version | awk '{print $2}')${!var:+: ${!var}}"
	exit 77
}

# have_extension NAME — whether the extension NAME is installed for the
# server on PATH.
have_extension() { [ -e "$(pg_config --sharedir)/extension/$1.control" ]; }

# router_dblink_sql — SQL for a test router without PL/Proxy (PostgreSQL 19:
# Debian packages none), whose routing functions then call the nodes over
# dblink instead of through the PL/Proxy cluster: public.shard_connstr(shard)
# is the connect string the cluster would give that shard's partition
# (read-only while the shard is frozen; one that fails naming the shard when
# it is placed nowhere), so both routers refuse and retry alike. A fan-out
# calls each node once with its shards, as PL/Proxy's SPLIT does.
router_dblink_sql() {
	cat <<-'SQL'
	CREATE FUNCTION public.shard_connstr(i_shard integer) RETURNS text LANGUAGE sql STABLE AS $$
	    SELECT COALESCE((SELECT CASE WHEN p.frozen THEN n.connstr || ' options=''-c default_transaction_read_only=on'''
	                                 ELSE n.connstr END
	                       FROM shardid.shard_placement AS p JOIN shardid.nodes AS n ON n.node = p.node
	                      WHERE p.shard = i_shard),
	                    format('service=%L', format('shardid: shard %s is not placed on any node', i_shard)))
	$$;
	SQL
}
