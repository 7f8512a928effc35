#!/usr/bin/env bash
# test/release/release_zip.sh — the release zip as PGXN would take it: made with
# `git archive` (the working tree's tracked files; in a copy without .git,
# such as a Debian root's, from a throw-away repository of the copy), it
# holds META.json and every file META.json names and no built file; Debian's
# pgxnclient installs it (`pgxn install ZIP`: make, make install) and
# `pgxn check ZIP` runs its regression tests against a throw-away cluster
# of Debian's pg_virtualenv.
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
source lib/checks.sh
source lib/deps.sh
PATH=$(pg_config --bindir):$PATH
export PATH

deps_need git pgxnclient unzip

version=$(perl -MJSON::PP -e 'local $/; print JSON::PP->new->decode(<STDIN>)->{version}' <META.json)
work=$(mktemp -d /tmp/shardid-zip.XXXXXX)
trap 'rm -rf "$work"' EXIT
zip=$work/shardid-$version.zip
g=(git -c user.name=test -c user.email=test@localhost -c safe.directory='*')
if "${g[@]}" rev-parse --is-inside-work-tree >/dev/null 2>&1 && [ "$("${g[@]}" rev-parse --show-toplevel)" = "$top" ]; then
	tree=$("${g[@]}" stash create 2>/dev/null || true)   # HEAD plus uncommitted changes to tracked files
	"${g[@]}" archive --format=zip --prefix="shardid-$version/" -o "$zip" "${tree:-HEAD}"
	echo "# zip from this checkout (${tree:-HEAD})"
else
	# a copy without .git: its files as git would track them (.gitignore applies)
	mkdir "$work/repo"
	tar -cf - --exclude=./results --exclude='./*.o' . | tar -xf - -C "$work/repo"
	(cd "$work/repo" && "${g[@]}" init -q && "${g[@]}" add -A && "${g[@]}" commit -q -m release &&
		"${g[@]}" archive --format=zip --prefix="shardid-$version/" -o "$zip" HEAD)
	echo "# zip from a repository of this copy (no .git here)"
fi
unzip -Z1 "$zip" | sed "s#^shardid-$version/##" | sort >"$work/files"
echo "# $(wc -l <"$work/files") files, $(du -k "$zip" | cut -f1) kB"

# every file META.json names is in the zip; nothing built is
perl -MJSON::PP -e 'local $/; my $m = JSON::PP->new->decode(<STDIN>);
	for my $p (values %{$m->{provides}}) { print "$_\n" for grep { defined } $p->{file}, $p->{docfile} }' <META.json >"$work/named"
echo META.json >>"$work/named"
lacking=$(comm -23 <(sort -u "$work/named") "$work/files")
expect "files META.json names that the zip lacks" "${lacking:-none}" none
# the development version's scripts are built by make, never shipped
dev=$(sed -n "s/^default_version = '\(.*\)'/\1/p" shardid.control)
built=$(grep -E "^build/|shardid--([0-9.]+--)?${dev//./\\.}\.sql\$|\.(o|so|bc)\$|^results/" "$work/files" || true)
expect "built files in the zip" "${built:-none}" none

# pgxn install: make (one job per core) and make install from the zip, with
# this major's pg_config
(cd "$work" && MAKEFLAGS="-j$(nproc)" pgxn install --pg_config "$(command -v pg_config)" "./shardid-$version.zip") >"$work/install.log" 2>&1 ||
	{ cat "$work/install.log"; fail "pgxn install"; }
grep -q "make.* install" "$work/install.log" || grep -qi "installing" "$work/install.log" ||
	{ cat "$work/install.log"; fail "pgxn install did not install"; }
ext=$(pg_config --sharedir)/extension
[ -f "$ext/shardid--$(sed -n "s/^default_version = '\(.*\)'/\1/p" shardid.control).sql" ] ||
	fail "pgxn install did not put the install script in $ext"
ok "pgxn install $(basename "$zip") (pgxnclient $(dpkg-query -W -f='${Version}' pgxnclient))"

# pgxn check: the distribution's regression tests (make installcheck) on a
# throw-away cluster (pg_virtualenv: PGHOST, PGPORT, PGUSER, PGPASSWORD)
major=$(pg_config --version | sed -n 's/^PostgreSQL \([0-9][0-9]*\).*/\1/p')
(cd "$work" && pg_virtualenv -v "$major" bash -c 'pgxn check --pg_config "$(command -v pg_config)" \
	-h "$PGHOST" -p "$PGPORT" -U "$PGUSER" -d pgxn_check "$1"' _ "./shardid-$version.zip") >"$work/check.log" 2>&1 ||
	{ cat "$work/check.log"; cat "$work"/regression.diffs 2>/dev/null | head -50; fail "pgxn check"; }
grep -qE "All [0-9]+ tests passed|^# All [0-9]+ tests passed|[0-9]+ tests passed" "$work/check.log" ||
	{ cat "$work/check.log"; fail "pgxn check did not report its tests passing"; }
ok "pgxn check: $(grep -oE "(All )?[0-9]+ tests passed" "$work/check.log" | paste -sd, - | sed "s/,/, /g") (regression, isolation)"
echo "release_zip: all checks passed"
