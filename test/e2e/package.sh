#!/usr/bin/env bash
# test/e2e/package.sh — the Debian package, for the PostgreSQL major under
# test (the pg_config on PATH): in a temporary copy of the tree, apt-get
# build-dep installs what debian/control names, `pg_buildext updatecontrol`
# (with PG_SUPPORTED_VERSIONS set to this major) makes debian/control build
# postgresql-NN-shardid for it, dpkg-buildpackage builds it (its own build
# runs the regression suites against the built files), dpkg -i installs it,
# and against the installed package: CREATE EXTENSION, the autopkgtest
# (debian/tests/installcheck: pg_buildext installcheck, the pg_regress and
# isolation suites) and the update test (test/e2e/update.sh: every released
# version updated in use equals a fresh install). dpkg -r removes it
# afterwards and the checkout's build is installed again, so the root stays
# as the other suites expect it.
#
# It runs on every major whose build dependencies the archive has: 15
# (Debian 12), 17 (trixie), 18 (forky), 19 (forky + experimental); where apt
# cannot satisfy them it skips, saying which are missing. Root only: it
# installs packages.
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
source test/lib/e2e.sh

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
	pg_stop_all
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
(cd "$src" && apt-get build-dep -y -q ./ >"$work/build-dep.log" 2>&1) ||
	{ tail -30 "$work/build-dep.log"; fail "apt-get build-dep ./ failed"; }
echo "ok - apt-get build-dep ./ installed the build dependencies"

# debian/control names the packages of the archive's default majors; for
# the major under test it is made again from debian/control.in.
export PG_SUPPORTED_VERSIONS=$major
(cd "$src" && pg_buildext updatecontrol >"$work/updatecontrol.log" 2>&1) ||
	{ cat "$work/updatecontrol.log"; fail "pg_buildext updatecontrol failed"; }
targets=$(sed -n 's/^Package: postgresql-\([0-9][0-9]*\)-shardid$/\1/p' "$src/debian/control" | xargs)
[ "$targets" = "$major" ] || fail "pg_buildext updatecontrol made debian/control for '$targets', not $major"
echo "ok - pg_buildext updatecontrol: debian/control builds $pkg"

(cd "$src" && env -u DEB_BUILD_OPTIONS -u DEB_BUILD_PROFILES dpkg-buildpackage -us -uc -b >"$work/build.log" 2>&1) ||
	{ tail -60 "$work/build.log"; fail "dpkg-buildpackage -us -uc -b failed (log: $work/build.log)"; }
deb=$(ls "$work/${pkg}_${version}_"*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || fail "dpkg-buildpackage made no ${pkg}_${version}_*.deb: $(ls "$work")"
grep -q "### End $major installcheck ###" "$work/build.log" ||
	fail "the package build did not run and pass installcheck on $major"
echo "ok - dpkg-buildpackage built $(basename "$deb"), installcheck passed during the build"

# The package holds the module, the control file and every script.
contents=$(dpkg-deb -c "$deb" | awk '{print $6}')
libdir=$("$pg_config" --pkglibdir)
sharedir=$("$pg_config" --sharedir)
for f in "$libdir/shardid.so" "$sharedir/extension/shardid.control" \
	$(cd src/sql/released && ls shardid--*.sql | sed "s|^|$sharedir/extension/|") "$sharedir/extension/shardid--$(
		sed -n "s/^default_version = '\(.*\)'/\1/p" shardid.control).sql"; do
	grep -qx ".$f" <<<"$contents" || fail "$(basename "$deb") lacks $f"
done
depends=$(dpkg-deb -f "$deb" Depends)
grep -q "postgresql-$major" <<<"$depends" || fail "$pkg does not depend on postgresql-$major: $depends"
echo "ok - the package holds shardid.so, shardid.control and $(grep -c 'extension/shardid--.*\.sql$' <<<"$contents") scripts; Depends: $depends"

installed=1
dpkg -i "$deb" >"$work/dpkg-i.log" 2>&1 || { cat "$work/dpkg-i.log"; fail "dpkg -i $(basename "$deb") failed"; }
owner=$(dpkg -S "$libdir/shardid.so" | cut -d: -f1)
[ "$owner" = "$pkg" ] || fail "$libdir/shardid.so belongs to '$owner', not $pkg"
dpkg -V "$pkg" || fail "dpkg -V $pkg: installed files differ from the package"
echo "ok - dpkg -i installed $pkg; its files are in place (dpkg -V)"

pg_start package
trap cleanup EXIT	# pg_start set its own
createdb app
got=$(q -d app <<'SQL'
CREATE EXTENSION shardid;
CREATE SEQUENCE public.gen;
SELECT extversion, shardid.id_shard(shardid.next_id(5, 'public.gen')),
       shardid.next_id(5, 'public.gen') < shardid.next_id(5, 'public.gen')
  FROM pg_extension WHERE extname = 'shardid';
SQL
)
want=$(sed -n "s/^default_version = '\(.*\)'/\1/p" shardid.control)
[ "$got" = "$want|5|t" ] || fail "CREATE EXTENSION shardid from the package: $got, expected $want|5|t"
echo "ok - CREATE EXTENSION shardid from the package: version $want, next_id works"
pg_stop_all

# The autopkgtest, as autopkgtest runs it: from the source tree, against
# the installed package, on a throw-away cluster.
(cd "$src" && make -s clean PG_CONFIG="$pg_config" >/dev/null && debian/tests/installcheck >"$work/autopkgtest.log" 2>&1) ||
	{ tail -60 "$work/autopkgtest.log"; fail "debian/tests/installcheck failed against the installed package"; }
tests=$(grep -Eo 'All [0-9]+ tests passed' "$work/autopkgtest.log" | grep -Eo '[0-9]+' | paste -sd/)
grep -q "### End $major installcheck ###" "$work/autopkgtest.log" ||
	{ tail -40 "$work/autopkgtest.log"; fail "autopkgtest did not run installcheck on $major"; }
echo "ok - autopkgtest (pg_buildext installcheck) against the installed package: ${tests:-?} regress/isolation tests passed"

# The update test, against the package's scripts (it checks that they are
# the checkout's, built by make, then updates every released version).
bash test/e2e/update.sh >"$work/update.log" 2>&1 ||
	{ tail -40 "$work/update.log"; fail "test/e2e/update.sh failed against the installed package"; }
echo "ok - test/e2e/update.sh against the installed package: $(grep -c '^ok' "$work/update.log") checks passed"
echo "package: all checks passed"
