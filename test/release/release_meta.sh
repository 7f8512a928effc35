#!/usr/bin/env bash
# test/release/release_meta.sh — the release metadata agree: META.json is valid
# JSON in the shape of the PGXN meta spec 1.0.0, its version is
# shardid.control's default_version (0.2 -> 0.2.0), the file it provides is
# one a release zip holds (not built, not ignored; release_zip.sh installs
# the zip), its PostgreSQL prerequisite is debian/pgversions'
# oldest major, debian/changelog packages the same upstream version, and
# CHANGELOG.md has a section for it; the client packages carry the same
# version; and the supported PostgreSQL majors
# are stated once: src/pg/compat.h's range and tested majors agree with
# debian/pgversions, META.json, the README's versions table and the majors
# test/matrix runs by default.
# Needs no server.
set -euo pipefail
cd "$(dirname "$0")/../.."
source lib/checks.sh

ctl=$(sed -n "s/^default_version = '\(.*\)'/\1/p" shardid.control)
[ -n "$ctl" ] || fail "no default_version in shardid.control"
pgmin=$(grep -v '^#' debian/pgversions | sed -n 's/^\([0-9][0-9]*\)+$/\1/p')
[ -n "$pgmin" ] || fail "debian/pgversions does not name the oldest major as NN+"
deb=$(sed -n '1s/^[^ ]* (\([^)]*\)).*/\1/p' debian/changelog)
grep -qE "^## ${ctl//./\\.}( |$)" CHANGELOG.md || fail "CHANGELOG.md has no section '## $ctl' for shardid.control's default_version"
echo "ok - CHANGELOG.md has a section for $ctl"

CTL=$ctl PGMIN=$pgmin DEB=$deb perl -MJSON::PP -e '
use strict; use warnings;
my @bad;
sub bad { push @bad, @_ }
open my $fh, "<:raw", "META.json" or die "META.json: $!\n";
my $text = do { local $/; <$fh> };
my $m = eval { JSON::PP->new->utf8->decode($text) };
if (!$m) { print "FAIL: META.json is not valid JSON: $@"; exit 1 }
print "ok - META.json is valid JSON\n";

for my $k (qw(name abstract version maintainer license provides meta-spec)) {
    bad("required key \"$k\" missing") unless defined $m->{$k};
}
bad("meta-spec version is not 1.0.0") unless ($m->{"meta-spec"}{version} // "") eq "1.0.0";
bad("name is not shardid") unless ($m->{name} // "") eq "shardid";
bad("license is not postgresql (LICENSE is the PostgreSQL License)") unless ($m->{license} // "") eq "postgresql";
bad("maintainer is empty") unless ref $m->{maintainer} eq "ARRAY" ? @{$m->{maintainer}} : $m->{maintainer};
my $semver = qr/^\d+\.\d+\.\d+$/;
my $want = $ENV{CTL} =~ /^\d+\.\d+$/ ? "$ENV{CTL}.0" : $ENV{CTL};
my $v = $m->{version} // "";
bad("version \"$v\" is not semantic (X.Y.Z)") unless $v =~ $semver;
bad("version \"$v\" is not shardid.control default_version $ENV{CTL} (as $want)") unless $v eq $want;
my $p = $m->{provides}{shardid};
if (!$p) { bad("provides has no shardid") }
else {
    bad("provides.shardid.version \"" . ($p->{version} // "") . "\" is not $want") unless ($p->{version} // "") eq $want;
    # a file a release zip (git archive) holds: in the tree, not built, not ignored
    my $file = $p->{file} // "";
    my %ignored = map { chomp; s{^/}{}; ($_ => 1) } grep { m{^/[^*]+$} } do { open my $g, "<", ".gitignore" or die; <$g> };
    bad("provides.shardid.file \"$file\" does not exist") unless -f $file;
    bad("provides.shardid.file \"$file\" is built by make or ignored by git: a release zip does not hold it")
        if $ignored{$file} || $file =~ m{^build/};
    bad("provides.shardid.abstract missing") unless $p->{abstract};
    bad("provides.shardid.docfile $p->{docfile} does not exist") if $p->{docfile} && !-f $p->{docfile};
}
my $pg = $m->{prereqs}{runtime}{requires}{PostgreSQL} // "";
bad("prereqs.runtime.requires.PostgreSQL \"$pg\" is not $ENV{PGMIN}.0.0 (debian/pgversions: $ENV{PGMIN}+)")
    unless $pg eq "$ENV{PGMIN}.0.0";
bad("tags missing") unless ref $m->{tags} eq "ARRAY" && @{$m->{tags}};
# resources are optional: the project has no public address yet
bad("resources is not an object") if exists $m->{resources} && ref $m->{resources} ne "HASH";
(my $up = $ENV{DEB}) =~ s/-[^-]*$//;
bad("debian/changelog packages $ENV{DEB}, upstream $up, not $v") unless $up eq $v;
if (@bad) { print "FAIL: META.json: $_\n" for @bad; exit 1 }
print "ok - META.json: version $v = shardid.control $ENV{CTL} = debian/changelog $ENV{DEB}; provides $p->{file}; PostgreSQL >= $ENV{PGMIN}\n";
' || fail "release metadata disagree"
# One truth for the PostgreSQL majors: compat.h states the range and the
# tested majors; everything else must say the same.
range=$(sed -n 's/.*builds against: \([0-9][0-9]*\) to \([0-9][0-9]*\).*/\1 \2/p' src/pg/compat.h)
[ -n "$range" ] || fail "src/pg/compat.h does not state 'builds against: A to B'"
read -r lo hi <<<"$range"
tested=$(sed -n '/tested on/{s/.*tested on \([0-9, and]*\).*/\1/;s/ and /,/;s/[ ]//g;p;q}' src/pg/compat.h)
[ -n "$tested" ] || fail "src/pg/compat.h does not state 'tested on ...'"
[ "$pgmin" = "$lo" ] || fail "debian/pgversions starts at $pgmin, src/pg/compat.h at $lo"
matrix=$(sed -n 's/^majors=\([0-9,]*\)$/\1/p' test/matrix)
[ "$matrix" = "$tested" ] || fail "test/matrix runs $matrix by default, src/pg/compat.h says tested on $tested"
readme_tested=$(sed -n '/^## Supported PostgreSQL versions/,/^## /s/^| \([0-9][0-9]*\) | tested.*/\1/p' README.md | sort -n | paste -sd,)
[ "$readme_tested" = "$tested" ] || fail "README's versions table says tested: ${readme_tested:-none}, src/pg/compat.h: $tested"
for m in ${tested//,/ }; do
	{ [ "$m" -ge "$lo" ] && [ "$m" -le "$hi" ]; } || fail "tested major $m is outside compat.h's range $lo to $hi"
done
sed -n '/^## Supported PostgreSQL versions/,/^## /p' README.md | grep -q "^| $((lo - 1)) and older | not supported" ||
	fail "README's versions table does not say '$((lo - 1)) and older | not supported'"
echo "ok - PostgreSQL $lo to $hi, tested on $tested: compat.h, debian/pgversions, META.json, README and test/matrix agree"

# The client packages (Python, JavaScript) carry the extension's version.
for f in clients/python/pyproject.toml clients/python/shardid_ids.py clients/python/shardid_router.py \
	clients/js/package.json clients/js/recipes/package.json; do
	v=$(sed -n 's/^\(version = \|__version__ = \|  "version": \)"\([^"]*\)".*/\2/p' "$f" | head -n 1)
	[ "$v" = "$ctl.0" ] || fail "$f says version ${v:-none}, the extension $ctl.0"
done
echo "ok - the client packages are at $ctl.0"

echo "release_meta: all checks passed"
