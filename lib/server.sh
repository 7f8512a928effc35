# shellcheck shell=bash
# lib/server.sh — the one harness that starts PostgreSQL servers from bash:
# the benchmarks (bench/) and the tests across majors (test/majors/, with
# servers inside Debian roots). The tests of one major use pg_virtualenv
# and PostgreSQL::Test::Cluster instead. Source it; it defines:
#
#   pg_start [--root MAJOR] NAME [postgresql.conf lines...]
#       initdb + start a server as the postgres user in a fresh directory,
#       listening only on a unix socket in that directory (a line
#       "listen_addresses = '127.0.0.1'" adds TCP); exports PGHOST, PGPORT,
#       PGUSER=postgres and NAME_DIR (the directory, as this host sees it).
#       The server is the major of pg_config (PG_BINDIR), or with --root
#       PostgreSQL MAJOR inside its Debian root (lib/roots.sh, root_enter
#       first). Every server started is stopped by pg_stop_all, which
#       pg_start installs as an EXIT trap.
#   pg_restart DIR      restart the server of DIR (a NAME_DIR), e.g. after
#                       ALTER SYSTEM
#   pg_stop_all
#   as_postgres CMD...  CMD as the postgres user when run by root
#
# PostgreSQL refuses to run as root, so servers run as "postgres"; clients
# may run as root and connect over the socket as user postgres.

# The host's PostgreSQL programs (found when first needed: deps may install them).
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

# pg_free_port — a port for the next server: one no socket of this host is
# bound to (/proc/net/tcp and tcp6: listening or not, TCP or the server's
# unix socket), and none of SHARDID_SERVERS took. The range 7432-7531 lies
# below the kernel's ephemeral ports (ip_local_port_range, 32768 and up by
# default) and below PostgreSQL::Test::Cluster's (10200-32767): a port out of
# the ephemeral range cannot be taken meanwhile by the local end of a
# client's connection, which bind() then refuses with "Address already in
# use" (the 18->19 upgrade test's third server once lost its port to one).
pg_free_port() {
	local port hex used d tables=()
	for d in /proc/net/tcp /proc/net/tcp6; do [ -r "$d" ] && tables+=("$d"); done
	for port in $(seq 7432 7531); do
		printf -v hex ':%04X' "$port"
		awk -v hex="$hex" 'FNR > 1 && substr($2, length($2) - 4) == hex { found = 1 }
			END { exit !found }' "${tables[@]}" && continue
		[ -e /tmp/.s.PGSQL."$port" ] || [ -e /var/run/postgresql/.s.PGSQL."$port" ] && continue
		used=0
		for d in "${SHARDID_SERVERS[@]}"; do
			[ "$(cat "$d/port" 2>/dev/null)" = "$port" ] && used=1
		done
		[ $used = 0 ] && { echo "$port"; return 0; }
	done
	echo "no free port in 7432-7531" >&2
	return 1
}

# pg_inside DIR — DIR as its server sees it (inside its root, if in one).
pg_inside() {
	if [ -e "$1/root" ]; then
		echo "${1#"$(root_dir "$(cat "$1/root")")"}"
	else
		echo "$1"
	fi
}

# pg_program DIR PROGRAM ARGS... — PROGRAM (initdb, pg_ctl) of the major of
# DIR's server, as the postgres user, inside its root if it is in one.
pg_program() {
	local dir=$1 prog=$2 m
	shift 2
	if [ -e "$dir/root" ]; then
		m=$(cat "$dir/root")
		root_run "$m" runuser -u postgres -- "/usr/lib/postgresql/$m/bin/$prog" "$@"
	else
		as_postgres "$(pg_bindir)/$prog" "$@"
	fi
}

# pg_ctl_server DIR ARGS... — pg_ctl of DIR's server (its data and log).
pg_ctl_server() {
	local dir=$1 inside
	shift
	inside=$(pg_inside "$dir")
	pg_program "$dir" pg_ctl -D "$inside/data" -l "$inside/server.log" "$@"
}

pg_start() {
	local major='' top='' name dir inside port line
	if [ "${1:-}" = --root ]; then
		major=$2
		top=$(root_dir "$major") || return 1
		shift 2
	fi
	name=$1
	shift
	dir=$(mktemp -d "$top/tmp/shardid-$name.XXXXXX")
	inside=${dir#"$top"}
	if [ -n "$major" ]; then
		echo "$major" >"$dir/root"
		root_run "$major" chown postgres: "$inside"
	else
		chown postgres: "$dir" 2>/dev/null || true
	fi
	pg_program "$dir" initdb -D "$inside/data" -U postgres -A trust --no-sync >"$dir/initdb.log" 2>&1 ||
		{ cat "$dir/initdb.log" >&2; return 1; }
	port=$(pg_free_port) || return 1
	echo "$port" > "$dir/port"
	{
		echo "listen_addresses = ''"
		echo "unix_socket_directories = '$inside'"
		echo "port = $port"
		echo "fsync = off"
		echo "max_prepared_transactions = 10"
		for line in "$@"; do echo "$line"; done
	} >> "$dir/data/postgresql.conf"
	SHARDID_SERVERS+=("$dir")
	trap pg_stop_all EXIT
	pg_ctl_server "$dir" -w -t 60 start >/dev/null ||
		{ cat "$dir/server.log" >&2; return 1; }
	export PGHOST=$dir PGPORT=$port PGUSER=postgres
	printf -v "${name//-/_}_DIR" '%s' "$dir"
	export "${name//-/_}_DIR"
}

pg_restart() {
	pg_ctl_server "$1" -w -t 120 restart >/dev/null ||
		{ tail -n 20 "$1/server.log" >&2; return 1; }
}

pg_stop_all() {
	local d
	for d in "${SHARDID_SERVERS[@]}"; do
		if [ -f "$d/data/postmaster.pid" ]; then
			pg_ctl_server "$d" -m fast -w stop >/dev/null 2>&1 || true
		fi
		[ -n "${SHARDID_KEEP_SERVERS:-}" ] || rm -rf "$d"
	done
	SHARDID_SERVERS=()
}
