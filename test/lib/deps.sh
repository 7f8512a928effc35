# test/lib/deps.sh — install the Debian packages shardid builds and tests with,
# for one PostgreSQL major. Source it and call install_deps; it installs only
# what is missing and puts that major's programs first in PATH.
#
# SHARDID_PG is the major (default 15, Debian 12's; 17 and 18 in the trixie
# and forky roots of test/matrix). postgresql-server-dev-NN pulls in the
# clang and LLVM that the server's bitcode rules use.

SHARDID_PG=${SHARDID_PG:-15}

shardid_deps() {
	echo build-essential "postgresql-$SHARDID_PG" "postgresql-server-dev-$SHARDID_PG" \
		"postgresql-$SHARDID_PG-pgtap" "postgresql-$SHARDID_PG-plproxy" \
		libtap-parser-sourcehandler-pgtap-perl libipc-run-perl faketime libgtest-dev gnuplot-nox \
		python3 python3-psycopg nodejs node-pg
}

install_deps() {
	local missing=() p
	for p in $(shardid_deps) "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		echo "installing: ${missing[*]}"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -q >/dev/null
		apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
	fi
	export PATH=/usr/lib/postgresql/$SHARDID_PG/bin:$PATH
	export PG_CONFIG=/usr/lib/postgresql/$SHARDID_PG/bin/pg_config
}
