# ShardidApps.pm — what the client and application TAP tests share
# (clients.pl, pgbouncer.pl, orm_recipes.pl, apps.pl): Debian's interpreters
# and packages, or a clear skip; the languages' own test runners (Debian's
# python3-pytest, Node's built-in node --test) started with the connection
# in the environment, their exit status and skips asserted; the JavaScript
# clients with Debian's node-pg; and a router with two data nodes holding
# 16 shards.
#
#   use FindBin;
#   use lib $FindBin::RealBin;
#   use ShardidTest;
#   use ShardidApps;
#
# The packages come from lib/deps.sh (install_deps, run by
# test/run-all as root); these tests run as an ordinary user and skip,
# naming what is missing, when a package is not there.
package ShardidApps;

use strict;
use warnings;

use Cwd qw(abs_path);
use Exporter qw(import);
use File::Basename qw(dirname);
use File::Path qw(make_path);
use IPC::Run;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use ShardidTest;
use Test::More;

our @EXPORT = qw($PYTHON $NODE $TOP missing_packages need_packages js_unavailable
  run_cmd pg_env pytest_ok node_test_ok js_dir apps_cluster);

# Debian's interpreters, not whatever else is first in PATH.
our $PYTHON = '/usr/bin/python3';
our $NODE = '/usr/bin/node';

# The top of the tree (a copy of the checkout under test/run-all).
our $TOP = abs_path(dirname(__FILE__) . '/../..');

# missing_packages(PACKAGE...) — those of the Debian packages not installed.
sub missing_packages
{
	return grep {
		my $p = $_;
		(`dpkg-query -W -f='\${Status}' $p 2>/dev/null` // '') !~ /ok installed/
	} @_;
}

# need_packages(PACKAGE...) — skip the whole file, naming the missing
# packages, unless all are installed.
sub need_packages
{
	my @missing = missing_packages(@_);
	plan skip_all => "Debian packages missing: @missing (lib/deps.sh installs them)"
	  if @missing;
	return;
}

# js_unavailable(PACKAGE...) — why the JavaScript parts cannot run here, or
# undef when they can: nodejs must be Debian's, so Debian's node-* packages
# fit it. NodeSource's build (on this project's Debian 12 host) cannot take
# them: the Python parts run and the JavaScript ones are skipped; the Debian
# roots of test/matrix run everything. SHARDID_APPS_NO_JS=1 forces the same
# (to test that path in a root). PACKAGE...: more Debian packages the
# JavaScript parts need besides nodejs.
sub js_unavailable
{
	return 'SHARDID_APPS_NO_JS is set' if $ENV{SHARDID_APPS_NO_JS};
	my $v = `dpkg-query -W -f='\${Version}' nodejs 2>/dev/null` // '';
	return "nodejs $v is NodeSource's build, not Debian's (the Debian roots of test/matrix run the JavaScript parts)"
	  if $v =~ /nodesource/;
	my @missing = missing_packages('nodejs', @_);
	return "Debian packages missing: @missing (lib/deps.sh installs them)" if @missing;
	return undef;
}

# run_cmd({cwd => DIR, env => {NAME => VALUE}, stdin => TEXT}, COMMAND...) —
# run a program; returns its exit status (0: success) and its output
# (stdout and stderr together).
sub run_cmd
{
	my ($opt, @cmd) = @_;
	my $out = '';
	my $in = $opt->{stdin} // '';
	local %ENV = (%ENV, %{ $opt->{env} // {} });
	my @init = defined $opt->{cwd} ? (init => sub { chdir $opt->{cwd} or die "chdir $opt->{cwd}: $!" }) : ();
	IPC::Run::run(\@cmd, '<', \$in, '>', \$out, '2>&1', @init);
	return ($? >> 8, $out);
}

# pg_env(NODE, DBNAME) — the libpq environment for a database of a
# Cluster.pm server: PGHOST, PGPORT, PGUSER, PGDATABASE.
sub pg_env
{
	my ($node, $db) = @_;
	return (PGHOST => $node->host, PGPORT => $node->port, PGUSER => scalar(getpwuid($<)), PGDATABASE => $db);
}

# pytest_ok(NAME, {cwd, env}, ARG...) — run Debian's pytest on ARG... (test
# files): one test that it passed, one that it skipped nothing (a live or
# fixture test that skips itself would hide a failure). Notes pytest's
# summary line and what the tests print (figures, versions); returns the
# output.
sub pytest_ok
{
	my ($name, $opt, @args) = @_;
	my ($rc, $out) = run_cmd({ %$opt, env => { PYTHONDONTWRITEBYTECODE => 1, %{ $opt->{env} // {} } } },
		$PYTHON, '-m', 'pytest', '-v', '-rsP', '-p', 'no:cacheprovider', @args);
	my ($summary) = $out =~ /^=+ (.*\d+ passed.*?) =+$/m;
	is($rc, 0, "$name: pytest passes") or diag($out);
	ok(defined $summary && $summary !~ /skipped|deselected|xfail|xpass/, "$name: pytest skipped nothing")
	  or diag($out);
	note("$name: " . ($summary // '?'));
	# -rP: the output of each passed test, after a line "--- Captured stdout call ---"
	my $printed = 0;
	for (split /\n/, $out)
	{
		if (/^-+ Captured stdout \w+ -+$/) { $printed = 1; next; }
		$printed = 0 if /^(?:-{3,}|_{3,}|={3,})/;
		note($_) if $printed && /\S/;
	}
	return $out;
}

# node_test_ok(NAME, {cwd, env}, FILE...) — run node --test on FILE...:
# one test that it passed, one that it skipped nothing. Notes the counts,
# the top-level tests and what the tests print (figures, versions).
sub node_test_ok
{
	my ($name, $opt, @files) = @_;
	my ($rc, $out) = run_cmd($opt, $NODE, '--test', '--test-reporter=tap', @files);
	is($rc, 0, "$name: node --test passes") or diag($out);
	like($out, qr/^# skipped 0$/m, "$name: node --test skipped nothing") or diag($out);
	note("$name: " . join(', ', $out =~ /^# ((?:tests|pass|fail) \d+)$/mg));
	note($_) for $out =~ /^((?:not )?ok \d+ - .*)$/mg;    # the top-level tests
	# the reporter passes what a test prints on as top-level "# " lines
	note($_) for grep { !/^(?:Subtest: |(?:tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) \d)/ }
	  $out =~ /^# (.*\S.*)$/mg;
	return $out;
}

# js_dir(DIR) — the JavaScript clients in DIR with node-postgres (Debian's
# node-pg) as node_modules/pg, where an ES module import finds it, as npm
# would put it.
sub js_dir
{
	my ($dir) = @_;
	make_path("$dir/node_modules");
	for my $f (glob("$TOP/clients/js/*.mjs"), "$TOP/clients/js/package.json")
	{
		system('cp', $f, "$dir/") == 0 or die "cp $f $dir: $?";
	}
	symlink('/usr/share/nodejs/pg', "$dir/node_modules/pg") or die "symlink node_modules/pg: $!";
	return $dir;
}

# apps_cluster(%options) — nodes a and b (wal_level = logical, for the
# moves) and a router (dblink and shardid: the applications route
# themselves, no PL/Proxy), database app on each; 16 shards with a table
# posts (id, user_id, body): 0-7 on a, 8-15 on b. Options: conf (more
# postgresql.conf lines for all three). Returns a hash: node (a, b),
# router, and their connect strings A, B, R, and NODES, the JSON
# {"a": A, "b": B} the shard maps take.
sub apps_cluster
{
	my (%opt) = @_;
	my $posts = q{
CREATE TABLE public.posts (id bigint PRIMARY KEY, user_id bigint NOT NULL, body text NOT NULL);
SELECT shardid.create_table('public.posts');
};
	my %node = (
		a => data_node('a', conf => $opt{conf}, sql => "SELECT shardid.create_shards(0, 7);$posts"),
		b => data_node('b', conf => $opt{conf}, sql => "SELECT shardid.create_shards(8, 15);$posts"));
	my $router = router_node('router', \%node, conf => $opt{conf});
	$router->safe_psql('app', "SELECT shardid.place_shards('a', 0, 7); SELECT shardid.place_shards('b', 8, 15);");
	my $user = getpwuid($<);
	my %c = map { $_ => sprintf('host=%s port=%s user=%s dbname=app', $node{$_}->host, $node{$_}->port, $user) } qw(a b);
	return (
		node => \%node,
		router => $router,
		A => $c{a},
		B => $c{b},
		R => sprintf('host=%s port=%s user=%s dbname=app', $router->host, $router->port, $user),
		NODES => JSON::PP->new->canonical->encode(\%c));
}

1;
