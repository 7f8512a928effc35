# shellcheck shell=bash
# lib/server.sh — start and stop private PostgreSQL servers for the tests
# across majors (servers inside two Debian roots at once) and the benchmarks
# (bench/): the only bash that starts servers; the tests of one major use
# pg_virtualenv and PostgreSQL::Test::Cluster. Source it; it defines:
#
#   pg_start NAME [postgresql.conf lines...]
#       initdb + start a server as the postgres user in a fresh directory,
#       listening only on a unix socket in that directory; exports PGHOST,
#       PGPORT, PGUSER=postgres and NAME_DIR. Every server started is
#       stopped by pg_stop_all, which pg_start installs as an EXIT trap.
#   pg_stop_all
#
# PostgreSQL refuses to run as root, so servers run as "postgres"; clients
# may run as root and connect over the socket as user postgres.

# PostgreSQL 15's programs (found when first needed: deps may install them).
PG_BINDIR=${PG_BINDIR:-}
SHARDID_SERVERS=()

pg_bindir() {
	[ -n "$PG_BINDIR" ] || PG_BINDIR=$(pg_config --bindir)
	echo "$PG_BINDIR"
}

as_postgres() {
	if [ "$(id -u)" = 0 ]; then
		# from / when postgres may not enter the current directory
		if runuser -u postgres -- test -x "$PWD" 2>/dev/null; then
			runuser -u postgres -- "$@"
		else
			(cd / && runuser -u postgres -- "$@")
		fi
	else
		"$@"
	fi
}

pg_free_port() {
	local port
	for port in $(seq 54320 54420); do
		if ! (echo > /dev/tcp/127.0.0.1/"$port") 2>/dev/null &&
		   ! ls /tmp/.s.PGSQL."$port" >/dev/null 2>&1 &&
		   ! ls /var/run/postgresql/.s.PGSQL."$port" >/dev/null 2>&1; then
			local used=0 d
			for d in "${SHARDID_SERVERS[@]}"; do
				[ "$(cat "$d/port" 2>/dev/null)" = "$port" ] && used=1
			done
			[ $used = 0 ] && { echo "$port"; return 0; }
		fi
	done
	echo "no free port" >&2
	return 1
}

pg_start() {
	local name=$1; shift
	local dir
	dir=$(mktemp -d "/tmp/shardid-$name.XXXXXX")
	chown postgres: "$dir" 2>/dev/null || true
	as_postgres "$(pg_bindir)/initdb" -D "$dir/data" -U postgres -A trust --no-sync >"$dir/initdb.log" 2>&1 ||
		{ cat "$dir/initdb.log" >&2; return 1; }
	local port
	port=$(pg_free_port) || return 1
	echo "$port" > "$dir/port"
	{
		echo "listen_addresses = ''"
		echo "unix_socket_directories = '$dir'"
		echo "port = $port"
		echo "fsync = off"
		echo "max_prepared_transactions = 10"
		local line
		for line in "$@"; do echo "$line"; done
	} >> "$dir/data/postgresql.conf"
	SHARDID_SERVERS+=("$dir")
	trap pg_stop_all EXIT
	as_postgres "$(pg_bindir)/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null ||
		{ cat "$dir/server.log" >&2; return 1; }
	export PGHOST=$dir PGPORT=$port PGUSER=postgres
	printf -v "${name//-/_}_DIR" '%s' "$dir"
	export "${name//-/_}_DIR"
}

pg_stop_all() {
	local d
	for d in "${SHARDID_SERVERS[@]}"; do
		if [ -f "$d/data/postmaster.pid" ]; then
			as_postgres "$(pg_bindir)/pg_ctl" -D "$d/data" -m fast -w stop >/dev/null 2>&1 || true
		fi
		[ -n "${SHARDID_KEEP_SERVERS:-}" ] || rm -rf "$d"
	done
	SHARDID_SERVERS=()
}
