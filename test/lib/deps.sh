# test/lib/deps.sh — install the Debian packages shardid builds and tests with.
# Source it and call install_deps; it installs only what is missing.

SHARDID_DEPS=(build-essential postgresql-15 postgresql-server-dev-15 postgresql-15-pgtap
	libtap-parser-sourcehandler-pgtap-perl libipc-run-perl postgresql-15-plproxy
	faketime libgtest-dev clang-14 llvm-14 gnuplot-nox)

install_deps() {
	local missing=() p
	for p in "${SHARDID_DEPS[@]}" "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		echo "installing: ${missing[*]}"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -q >/dev/null
		apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
	fi
	export PATH=/usr/lib/postgresql/15/bin:$PATH
}
