# shellcheck shell=bash
# lib/deps.sh — install the Debian packages shardid builds and tests with,
# for one PostgreSQL major (test/run-all, the release checks, the tests
# across majors, bench/ and examples/quickstart.sh). Source it and call
# install_deps [PACKAGE...]; it installs only what is missing (with the
# PACKAGEs a caller needs beyond building and testing: bench/run's gnuplot)
# and puts that major's programs first in PATH.
#
# SHARDID_PG is the major (default 15, Debian 12's; 17, 18 and 19 in the
# trixie and forky roots of test/matrix). postgresql-server-dev-NN pulls
# in the clang and LLVM that the server's bitcode rules use.
#
# pgTAP and PL/Proxy come as postgresql-NN-pgtap and postgresql-NN-plproxy.
# Where the archive has no such package for the major (19 while it is a
# release candidate), they are built from the upstream tarball of Debian's
# source package (apt-get source --tar-only, so apt checks it against the
# signed index; the root needs a deb-src line: lib/roots.sh) with PGXS
# against this major's pg_config, and installed. If that fails, the suites
# that need the extension are skipped, and say why: the reason is exported
# as SHARDID_NO_PGTAP or SHARDID_NO_PLPROXY (test/run-all prints it).

SHARDID_PG=${SHARDID_PG:-15}

shardid_deps() {
	echo build-essential "postgresql-$SHARDID_PG" "postgresql-server-dev-$SHARDID_PG" \
		libtap-parser-sourcehandler-pgtap-perl libipc-run-perl faketime libgtest-dev
}

# The packages of pg_cron (none for 19 yet), of the client and application
# tests (test/tap/clients.pl, pgbouncer.pl, orm_recipes.pl, apps.pl:
# Debian's python3-pytest and node --test) and of the release checks,
# installed where this Debian suite has them: the TAP files skip, naming
# what is missing, where it has not. The JavaScript ones only where nodejs
# is Debian's (or not installed): NodeSource's build (this project's Debian
# 12 host) cannot take Debian's node-pg and npm, and the JavaScript parts
# are skipped there.
#
# SHARDID_DEPS_TIERS (test/run-all --tap-tiers, and test/matrix for the
# roots it prepares) names the TAP tiers that will run (test/tap/tiers):
# without `ends` the packages only files of that tier use are left out
# (pg_cron, the ORMs, npm and its few hundred node-* packages, Patroni,
# etcd, pgBackRest). Unset: every tier's. The release checks install
# what they need themselves (deps_need).
shardid_test_deps() {
	echo python3 python3-pytest python3-psycopg pgbouncer git	# pgbouncer.pl (every)
	deps_nodesource || echo nodejs node-pg
	case ",${SHARDID_DEPS_TIERS:-ends}," in *,ends,*) ;; *) return 0 ;; esac
	echo "postgresql-$SHARDID_PG-cron"	# test/tap/rebalance.pl's scheduled step
	echo python3-psycopg-pool python3-psycopg2 python3-sqlalchemy python3-django python3-alembic pgxnclient unzip
	deps_nodesource || echo npm
	# test/tap/ha_patroni.pl (Patroni on etcd) and pgbackrest.pl: the HA
	# and backup tools users run (docs/high-availability.md); Patroni 4
	# (forky) only recommends python3-etcd, which its etcd3 client needs
	echo patroni python3-etcd etcd-server pgbackrest
}

# Whether the installed nodejs is NodeSource's build, not Debian's.
deps_nodesource() { [[ "$(dpkg-query -W -f='${Version}' nodejs 2>/dev/null || true)" == *nodesource* ]]; }

# The extensions the tests use: NAME SOURCE-PACKAGE BUILD-DEPENDS...
shardid_extensions() {
	echo "pgtap pgtap"
	echo "plproxy postgresql-plproxy bison flex"
}

deps_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }

# Whether the archive (as apt last fetched it) has a package of this name.
deps_in_archive() { apt-cache show "$1" >/dev/null 2>&1; }

# Whether apt fetched the package lists less than a day ago.
deps_lists_fresh() {
	find /var/lib/apt/lists -maxdepth 1 -name '*_Packages*' -newermt '-1 day' 2>/dev/null | grep -q .
}

# build_extension NAME SOURCE BUILD-DEPENDS... — build and install NAME for
# SHARDID_PG from the upstream tarball of Debian's SOURCE package. Prints
# what it installed, or why it failed.
build_extension() {
	local name=$1 src=$2 dir log top
	shift 2
	dir=/var/tmp/shardid-deps/$SHARDID_PG-$name
	log=$dir.log
	rm -rf "$dir"
	mkdir -p "$dir"
	echo "building $name for PostgreSQL $SHARDID_PG from Debian's source package $src (log: $log)" >&2
	if ! apt-get install -y -q --no-install-recommends dpkg-dev "$@" >"$log" 2>&1; then
		echo "could not install the build dependencies of $src ($*)"
		return 1
	fi
	if ! (cd "$dir" && apt-get source -q --tar-only "$src") >>"$log" 2>&1; then
		echo "apt-get source $src failed: $(grep -m 1 '^E:' "$log" |
			sed -E 's/^E: Failed to fetch [^ ]*\/([^/ ]+) +([0-9]+) +([^[]*[^[ ]).*/the archive has no \1 (\2 \3)/; s/^E: //')"
		return 1
	fi
	(cd "$dir" && for t in ./*.orig.tar.*; do tar -xf "$t"; done) >>"$log" 2>&1
	top=$(find "$dir" -mindepth 1 -maxdepth 1 -type d | head -n 1)
	if [ -z "$top" ] || ! make -C "$top" PG_CONFIG="$PG_CONFIG" >>"$log" 2>&1 ||
		! make -C "$top" PG_CONFIG="$PG_CONFIG" install >>"$log" 2>&1; then
		echo "$src ($(basename "${top:-?}")) did not build against PostgreSQL $SHARDID_PG: $(grep -m 1 -E 'error' "$log")"
		return 1
	fi
	echo "installed $name $(sed -n "s/^default_version = '\(.*\)'/\1/p" \
		"$("$PG_CONFIG" --sharedir)/extension/$name.control") for PostgreSQL $SHARDID_PG (built from $(basename "$top"))"
}

install_deps() {
	local missing=() build=() optional=() absent=() p name src bdeps why var
	export PATH=/usr/lib/postgresql/$SHARDID_PG/bin:$PATH
	export PG_CONFIG=/usr/lib/postgresql/$SHARDID_PG/bin/pg_config
	for p in $(shardid_deps) "$@"; do
		deps_installed "$p" || missing+=("$p")
	done
	for p in $(shardid_test_deps); do
		deps_installed "$p" || optional+=("$p")
	done
	while read -r name src bdeps; do
		deps_installed "postgresql-$SHARDID_PG-$name" ||
			[ -e "/usr/share/postgresql/$SHARDID_PG/extension/$name.control" ] ||
			build+=("$name")
	done < <(shardid_extensions)
	export DEBIAN_FRONTEND=noninteractive
	# An optional package that the package lists, fetched today, do not
	# have (postgresql-19-cron) asks for no update: the next day's run looks
	# again.
	local update=0
	{ [ ${#missing[@]} -gt 0 ] || [ ${#build[@]} -gt 0 ]; } && update=1
	if [ ${#optional[@]} -gt 0 ]; then
		deps_lists_fresh || update=1
		for p in "${optional[@]}"; do
			deps_in_archive "$p" && update=1
		done
	fi
	[ $update = 0 ] || apt-get update -q >/dev/null
	for p in "${optional[@]}"; do
		if deps_in_archive "$p"; then missing+=("$p"); else absent+=("$p"); fi
	done
	[ ${#absent[@]} -eq 0 ] ||
		echo "not in the archive (the tests that need them are skipped): ${absent[*]}"
	# an extension the archive packages for this major is installed from there
	local from_source=()
	for name in "${build[@]}"; do
		if deps_in_archive "postgresql-$SHARDID_PG-$name"; then
			missing+=("postgresql-$SHARDID_PG-$name")
		else
			from_source+=("$name")
		fi
	done
	if [ ${#missing[@]} -gt 0 ]; then
		echo "installing: ${missing[*]}"
		apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
	fi
	while read -r name src bdeps; do
		[[ " ${from_source[*]} " == *" $name "* ]] || continue
		var=SHARDID_NO_${name^^}
		# shellcheck disable=SC2086
		if why=$(build_extension "$name" "$src" $bdeps); then
			echo "$why"
			unset "$var"
		else
			echo "$why"
			export "$var=postgresql-$SHARDID_PG-$name is not in the archive, and $why"
		fi
	done < <(shardid_extensions)
	return 0
}

# Whether apt has a version of PACKAGE to install.
deps_candidate() { apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: //p' | grep -qv '(none)'; }

# deps_need PACKAGE... — for scripts that run as root (the release checks,
# bench/): install the Debian packages that are missing; exit 77 (skip)
# naming the first one this Debian suite does not have.
deps_need() {
	local need=() p
	for p in "$@"; do
		deps_installed "$p" || need+=("$p")
	done
	[ ${#need[@]} -gt 0 ] || return 0
	[ "$(id -u)" = 0 ] || { echo "FAIL: Debian packages missing: ${need[*]}" >&2; exit 1; }
	for p in "${need[@]}"; do
		if ! deps_candidate "$p"; then
			apt-get update -q >/dev/null 2>&1 || true
			if ! deps_candidate "$p"; then
				echo "SKIP: Debian $(. /etc/os-release; echo "${VERSION_CODENAME:-$VERSION_ID}") has no package $p"
				exit 77
			fi
		fi
	done
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
}
