#!/usr/bin/env bash
# test/release/package.sh — the Debian package, for the PostgreSQL major under
# test (the pg_config on PATH): in a temporary copy of the tree, the
# README's "From a package" commands, run as written (apt-get build-dep,
# `pg_buildext updatecontrol` for this major, dpkg-buildpackage, whose build
# runs the regression suites against the built files, and apt-get install
# of the package); the package holds the module, every script, the tools
# and the docs; then against the installed package: CREATE EXTENSION, the
# autopkgtest (debian/tests/installcheck: pg_buildext installcheck, the
# pg_regress and isolation suites) and the update test (test/tap/update.pl:
# every released version updated in use equals a fresh install). dpkg -r
# removes it afterwards and the checkout's build is installed again, so the
# root stays as the other suites expect it.
#
# It runs on every major whose build dependencies the archive has: 15
# (Debian 12), 17 (trixie), 18 (forky), 19 (forky + experimental); where apt
# cannot satisfy them it skips, saying which are missing. test/matrix runs
# it on the newest major of each Debian release (the tools that build the
# package are the release's). Root only: it installs packages.
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
source lib/checks.sh

pg_config=$(command -v pg_config) || fail "no pg_config on PATH"
major=$("$pg_config" --version | sed -n 's/^PostgreSQL \([0-9][0-9]*\).*/\1/p')
[ "$(id -u)" = 0 ] || fail "the package test installs packages: run it as root"
pkg=postgresql-$major-shardid
if dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed"; then
	fail "$pkg is already installed here; remove it first (dpkg -r $pkg)"
fi
version=$(sed -n '1s/^[^ ]* (\([^)]*\)).*/\1/p' debian/changelog)
echo "package test: $pkg $version on PostgreSQL $major ($(. /etc/os-release && echo "$PRETTY_NAME"))"

work=$(mktemp -d /tmp/shardid-package.XXXXXX)
# The build's installcheck runs a server (as postgres) on the files in the
# build tree, and ALTER EXTENSION UPDATE lists their directory: readable.
chmod 755 "$work"
installed=
cleanup() {
	local rc=$?
	if [ -n "$installed" ]; then
		dpkg -r "$pkg" >"$work/dpkg-r.log" 2>&1 && echo "removed $pkg" || { cat "$work/dpkg-r.log"; echo "dpkg -r $pkg failed"; }
		# put the checkout's build back for the suites that follow
		make -C "$top" -s install PG_CONFIG="$pg_config" >/dev/null && echo "reinstalled the checkout's build"
	fi
	if [ $rc = 0 ]; then rm -rf "$work"; else echo "package build kept in $work"; fi
}
trap cleanup EXIT

# Build in a copy: the checkout keeps no debian/ build products.
src=$work/shardid-${version%-*}
mkdir "$src"
tar -C "$top" --exclude-vcs --exclude-vcs-ignores --exclude=./results --exclude=./log -cf - . | tar -C "$src" -xf -
make -C "$src" -s clean PG_CONFIG="$pg_config" >/dev/null

export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
# The build dependencies (the same in debian/control and control.in) must
# exist in this root's archive; if apt cannot find them, there is nothing
# to test here.
if ! (cd "$src" && apt-get build-dep -s -q ./) >"$work/build-dep.log" 2>&1; then
	echo "SKIP: package test: the build dependencies of $pkg are not in this archive: $(
		grep -m 1 -E 'Depends:|^E:' "$work/build-dep.log" | sed 's/^ *//')"
	exit 77
fi

# The README's "From a package" commands, run as written, in the copy (for
# the major whose pg_config is first on PATH: this one). They make
# debian/control for the major, install the build dependencies, build the
# package and install it. The build's own installcheck (debian/rules runs
# `pg_buildext installcheck` unless DEB_BUILD_OPTIONS has nocheck) is the
# same pg_regress and isolation suites the autopkgtest below runs against
# the installed files, so the build skips it: the suites run once here.
# pg_buildext runs a plain make; MAKEFLAGS gives it one job per core.
cmds=$(awk '/^From a package/ { f = 1 } f && /^```sh$/ { c = 1; next } c && /^```$/ { exit } c' README.md)
[ -n "$cmds" ] || fail "no \`\`\`sh block after 'From a package' in README.md"
printf '%s\n' "$cmds" >"$work/readme-package.sh"
echo "# README.md's package commands:"; sed 's/^/#   /' "$work/readme-package.sh"
installed=1
(cd "$src" && env -u DEB_BUILD_PROFILES -u PG_SUPPORTED_VERSIONS DEB_BUILD_OPTIONS=nocheck MAKEFLAGS="-j$(nproc)" bash -e "$work/readme-package.sh") >"$work/build.log" 2>&1 ||
	{ tail -60 "$work/build.log"; fail "README.md's package commands failed (log: $work/build.log)"; }
targets=$(sed -n 's/^Package: postgresql-\([0-9][0-9]*\)-shardid$/\1/p' "$src/debian/control" | xargs)
[ "$targets" = "$major" ] || fail "the README's commands made debian/control for '$targets', not $major"
deb=$(ls "$work/${pkg}_${version}_"*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || fail "the README's commands made no ${pkg}_${version}_*.deb: $(ls "$work")"
! grep -q "### End $major installcheck ###" "$work/build.log" ||
	fail "the package build ran installcheck despite DEB_BUILD_OPTIONS=nocheck"
echo "ok - README.md's package commands built and installed $(basename "$deb") (nocheck: the suites run against the installed package below)"

# The package holds the module, the control file and every script.
contents=$(dpkg-deb -c "$deb" | awk '{print $6}')
libdir=$("$pg_config" --pkglibdir)
sharedir=$("$pg_config" --sharedir)
for f in "$libdir/shardid.so" "$sharedir/extension/shardid.control" \
	$(cd src/sql/released && ls shardid--*.sql | sed "s|^|$sharedir/extension/|") "$sharedir/extension/shardid--$(
		sed -n "s/^default_version = '\(.*\)'/\1/p" shardid.control).sql"; do
	grep -qx ".$f" <<<"$contents" || fail "$(basename "$deb") lacks $f"
done
bindir=$("$pg_config" --bindir)
for f in "$bindir/shardid-move-shard" "$bindir/shardid-rebalance" "/usr/share/doc/$pkg/README.md" \
	$(cd docs && ls ./*.md | sed "s|^\./|/usr/share/doc/$pkg/|"); do
	grep -qx ".$f" <<<"$contents" || grep -qx ".$f.gz" <<<"$contents" || fail "$(basename "$deb") lacks $f"
done
echo "ok - the package holds the tools (shardid-move-shard, shardid-rebalance in $bindir) and the docs (README.md, $(ls docs/*.md | wc -l) pages of docs/)"
depends=$(dpkg-deb -f "$deb" Depends)
grep -q "postgresql-$major" <<<"$depends" || fail "$pkg does not depend on postgresql-$major: $depends"
echo "ok - the package holds shardid.so, shardid.control and $(grep -c 'extension/shardid--.*\.sql$' <<<"$contents") scripts; Depends: $depends"

owner=$(dpkg -S "$libdir/shardid.so" | cut -d: -f1)
[ "$owner" = "$pkg" ] || fail "$libdir/shardid.so belongs to '$owner', not $pkg"
dpkg -V "$pkg" || fail "dpkg -V $pkg: installed files differ from the package"
echo "ok - $pkg is installed; its files are in place (dpkg -V)"

# CREATE EXTENSION from the package, on a throw-away cluster of Debian's
# pg_virtualenv, as the autopkgtest below uses (pg_virtualenv reports on
# stdout what it creates and drops, so psql writes its result to a file).
pg_virtualenv -v "$major" psql -X -q -At -v ON_ERROR_STOP=1 -d postgres -o "$work/create.out" <<'SQL' >"$work/create.log" 2>&1 ||
CREATE EXTENSION shardid;
CREATE SEQUENCE public.gen;
SELECT extversion, shardid.id_shard(shardid.next_id(5, 'public.gen')),
       shardid.next_id(5, 'public.gen') < shardid.next_id(5, 'public.gen')
  FROM pg_extension WHERE extname = 'shardid';
SQL
	{ cat "$work/create.log"; fail "CREATE EXTENSION shardid from the package failed"; }
got=$(cat "$work/create.out")
want=$(sed -n "s/^default_version = '\(.*\)'/\1/p" shardid.control)
[ "$got" = "$want|5|t" ] || fail "CREATE EXTENSION shardid from the package: $got, expected $want|5|t"
echo "ok - CREATE EXTENSION shardid from the package: version $want, next_id works"

# The autopkgtest, as autopkgtest runs it: from the source tree, against
# the installed package, on a throw-away cluster.
(cd "$src" && make -s clean PG_CONFIG="$pg_config" >/dev/null && debian/tests/installcheck >"$work/autopkgtest.log" 2>&1) ||
	{ tail -60 "$work/autopkgtest.log"; fail "debian/tests/installcheck failed against the installed package"; }
tests=$(grep -Eo 'All [0-9]+ tests passed' "$work/autopkgtest.log" | grep -Eo '[0-9]+' | paste -sd/)
grep -q "### End $major installcheck ###" "$work/autopkgtest.log" ||
	{ tail -40 "$work/autopkgtest.log"; fail "autopkgtest did not run installcheck on $major"; }
echo "ok - autopkgtest (pg_buildext installcheck) against the installed package: ${tests:-?} regress/isolation tests passed"

# The update test, against the package's scripts (it checks that they are
# the checkout's, built by make, then updates every released version):
# PGXS's prove_installcheck as postgres, in a copy of the tree (with build/)
# that postgres may write, as test/run-all runs the TAP suites.
[ -d build ] || fail "no build/ in the checkout: run make first"
mkdir "$work/tap"
cp -r Makefile shardid.control bin sql src test build "$work/tap/"
chown -R postgres: "$work/tap"
(cd "$work/tap" && runuser -u postgres -- env PATH="$PATH" make -s installcheck-tap PG_CONFIG="$pg_config" \
	PROVE_TESTS=test/tap/update.pl PROVE_FLAGS=-v) >"$work/update.log" 2>&1 ||
	{ tail -40 "$work/update.log"; fail "test/tap/update.pl failed against the installed package"; }
echo "ok - test/tap/update.pl against the installed package: $(grep -c '^ok [0-9]' "$work/update.log") checks passed"
echo "package: all checks passed"
