# apps.pl — the shard maps for applications (clients/python/
# shardid_router.py, clients/js/shardid-router.mjs) and the ORM integrations
# built on the Python one (shardid_sqlalchemy.py, shardid_django.py) on a
# router and two data nodes (16 shards), with Debian's packages
# (python3-psycopg(-pool), python3-sqlalchemy, python3-django, nodejs,
# node-pg):
#   1. both shard maps' unit tests (fakes) and live tests (the router's
#      placement, inserts and lookups by ID, errors raised unchanged, a
#      frozen shard waited for, and given up after the deadline), under
#      Debian's python3-pytest and node --test; the ORM integrations' unit
#      tests and their example apps (clients/python/examples/
#      test_examples.py);
#   2. four writers (test/apps/writer.py, writer.mjs), through the Python
#      shard map, SQLAlchemy, Django and the JavaScript shard map, insert
#      into a shard of SHARDID_APPS_MB megabytes (default 10) and into other
#      shards, reading every row back by its ID, while bin/shardid-move-shard
#      moves that shard online from a to b, then back with --drop-old: every
#      insert a writer saw succeed is on the final node exactly once, no
#      other row is there, the writers saw no error (only retries, on the
#      moving shard only), and they ran on across both moves; meanwhile a
#      reader (test/apps/fanout_reader.py) runs ShardMap.fan_out() over
#      every shard, pass after pass, with a map reloaded only by the moved
#      shard's errors: each pass sees every shard once, without an error.
#      No maps are reloaded on an interval, and after each move the test
#      waits for work every writer and the reader began after it returned:
#      what they must have seen does not depend on the machine's load.
# The JavaScript parts are skipped, saying why, where nodejs is not
# Debian's (the Debian roots of test/matrix run them).
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use IPC::Run;
use Time::HiRes qw(time sleep);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use ShardidTest;
use ShardidApps;
use Test::More;

need_packages(qw(python3 python3-pytest python3-psycopg python3-psycopg-pool python3-psycopg2 python3-sqlalchemy
	  python3-django));
my $no_js = js_unavailable('node-pg');
my $MB = $ENV{SHARDID_APPS_MB} // 10;

my %c = apps_cluster();
my ($A, $B, $R, $NODES) = @c{qw(A B R NODES)};
my ($node_a, $node_b, $router) = ($c{node}{a}, $c{node}{b}, $c{router});
my $work = PostgreSQL::Test::Utils::tempdir;
my %env = (PYTHONPATH => "$TOP/clients/python", SHARDID_LIVE => qq({"router": "$R", "nodes": $NODES}),
	SHARDID_ROUTER => $R, SHARDID_NODES => $NODES);

# --- 1. unit and live tests ---------------------------------------------------
note('python ' . (run_cmd({}, $PYTHON, '-c',
	'import platform, psycopg, psycopg_pool; print(platform.python_version(), "psycopg", psycopg.__version__, "pool", psycopg_pool.__version__)'))[1] =~ s/\n//r);
pytest_ok('python shard map (unit and live)', { cwd => "$TOP/clients/python", env => \%env }, 'test_shardid_router.py');

SKIP:
{
	skip "the JavaScript shard map's tests: $no_js", 2 if $no_js;
	js_dir("$work/js");
	note('node ' . (run_cmd({}, $NODE, '--version'))[1] =~ s/\n//r
		  . ', node-pg ' . `dpkg-query -W -f='\${Version}' node-pg`);
	node_test_ok('js shard map (unit and live)', { cwd => "$work/js", env => \%env }, 'shardid-router.test.mjs');
}

note((run_cmd({}, $PYTHON, '-c',
	'import sqlalchemy, django; print("sqlalchemy", sqlalchemy.__version__, "django", django.get_version())'))[1] =~ s/\n//r);
pytest_ok('ORM integrations', { cwd => "$TOP/clients/python", env => \%env }, 'test_shardid_orm.py');

# the example apps: posts of users 3, 10, 19 (shards 3, 10, 3)
pytest_ok('example apps (sqlalchemy_app.py, django_app/app.py)', { cwd => "$TOP/clients/python/examples", env => \%env },
	'test_examples.py');
is($node_a->safe_psql('app', "SELECT count(*) FROM shard_0003.posts WHERE body ~ '^(sqlalchemy|django)'") . '/'
	  . $node_b->safe_psql('app', "SELECT count(*) FROM shard_0010.posts WHERE body ~ '^(sqlalchemy|django)'"),
	'7/2', 'rows the examples wrote, on their nodes');

# --- 2. writers through the shard maps and ORMs while shard 3 moves ----------
my $rows = $MB * 1000;
$node_a->safe_psql('app',
	"INSERT INTO shard_0003.posts (user_id, body) SELECT 3, repeat(md5(g::text), 30) FROM generate_series(1, $rows) g");
note("shard 3: $rows rows, "
	  . $node_a->safe_psql('app', "SELECT pg_size_pretty(pg_total_relation_size('shard_0003.posts'))") . ' on node a');

# each writer: shard 3 (moving) every other insert, shards 1 (a) and 10 (b) between
my $stop = "$work/stop";
my @writers = qw(map sqlalchemy django);
my %run;
my $timer = IPC::Run::timeout(10 * $PostgreSQL::Test::Utils::timeout_default);
{
	local %ENV = (%ENV, %env);
	for my $w (@writers)
	{
		$run{$w} = IPC::Run::start([ $PYTHON, "$TOP/test/apps/writer.py", $w, $R, $NODES, '3,1,3,10', $stop, "$work/$w.out" ],
			'<', \undef, '>', "$work/$w.log", '2>&1', $timer);
	}
	unless ($no_js)
	{
		system('cp', "$TOP/test/apps/writer.mjs", "$work/js/") == 0 or die "cp: $?";
		$run{js} = IPC::Run::start([ $NODE, 'writer.mjs', $R, $NODES, '3,10,3,1', $stop, "$work/js.out" ],
			init => sub { chdir "$work/js" or die $! }, '<', \undef, '>', "$work/js.log", '2>&1', $timer);
		push @writers, 'js';
	}
	# and a reader: fan_out() over every shard, its map read again only on move errors
	$run{reader} = IPC::Run::start([ $PYTHON, "$TOP/test/apps/fanout_reader.py", $R, $NODES, $stop, "$work/reader.out" ],
		'<', \undef, '>', "$work/reader.log", '2>&1', $timer);
}
END { local $?; $_->kill_kill for grep { $_->pumpable } values %run; }

# lines(FILE) — the complete lines of FILE (a process may be writing it).
sub lines
{
	my ($f) = @_;
	return () unless -e $f;
	my $s = PostgreSQL::Test::Utils::slurp_file($f);
	$s =~ s/[^\n]*\z//;
	return split /\n/, $s;
}
sub acked { my $n = 0; $n += scalar(lines("$work/$_.out")) for @writers; return $n; }
sub passes { return scalar(lines("$work/reader.out")); }
sub logs { return join '', map { "--- $_:\n" . (-e "$work/$_.log" ? PostgreSQL::Test::Utils::slurp_file("$work/$_.log") : '') } @writers, 'reader'; }

# wait_until(CODE) — poll CODE until it is true, up to the tests' timeout.
sub wait_until
{
	my ($cond) = @_;
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	until ($cond->())
	{
		return 0 if time > $deadline;
		sleep 0.1;
	}
	return 1;
}

ok(wait_until(sub { acked() >= 100 && passes() > 0 }), 'the writers and the reader started') or diag(logs());

# move(ARGS...) — run the move tool, timed.
sub move
{
	my @args = @_;
	my $t0 = time;
	my ($rc, $out) = run_cmd({}, "$TOP/bin/shardid-move-shard", '--router', $R, @args);
	is($rc, 0, "shardid-move-shard @args") or diag($out);
	note(sprintf('moved (%s) in %d ms', "@args", (time - $t0) * 1000));
	return;
}
# progress() — how far each process has got: each writer's acknowledged
# inserts into shard 3 (the moving one), and the reader's passes.
sub progress
{
	my %p = (reader => passes());
	$p{$_} = scalar(grep { (split ' ')[1] == 3 } lines("$work/$_.out")) for @writers;
	return \%p;
}

# went_on(BEFORE) — waits until every writer has acknowledged two more
# inserts into shard 3, and the reader finished two more passes, than
# BEFORE (a progress() read after a move returned). The first of those may
# have begun before the move ended; the second began after the first was
# written, so after BEFORE was read: each process then worked on a map the
# move had made stale, whatever the machine's load.
sub went_on
{
	my ($before) = @_;
	return wait_until(
		sub {
			my $now = progress();
			return !grep { $now->{$_} < $before->{$_} + 2 } keys %$before;
		});
}
my ($n1, $p1) = (acked(), passes());
move('--shard', 3, '--to', 'b');
ok(went_on(progress()), 'the writers and the reader went on across the first move') or diag(logs());
my ($n2, $p2) = (acked(), passes());
move('--shard', 3, '--to', 'a', '--drop-old');
ok(went_on(progress()), 'the writers and the reader went on across the second move') or diag(logs());
my ($n3, $p3) = (acked(), passes());
note("acknowledged inserts: $n1 before the moves, $n2 after the first, $n3 after the second; reader passes $p1, $p2, $p3");
PostgreSQL::Test::Utils::append_to_file($stop, '');
for my $w (@writers, 'reader')
{
	my $done = eval { $run{$w}->finish };
	ok($done, ($w eq 'reader' ? 'the fan-out reader' : "the $w writer") . ' ended without an error')
	  or diag(PostgreSQL::Test::Utils::slurp_file("$work/$w.log"));
	note($_) for lines("$work/$w.log");
}

is($router->safe_psql('app', 'SELECT node FROM shardid.placement WHERE shard = 3'), 'a', 'placement of shard 3 after both moves');
for my $w (@writers)
{
	my (%n, %r);
	for (lines("$work/$w.out"))
	{
		my (undef, $shard, $retries) = split ' ';
		$n{$shard}++;
		$r{$shard} += $retries;
	}
	note(sprintf('%s writer: inserts to shards 3/1/10: %d/%d/%d, retries %d/%d/%d',
		$w, map({ $n{$_} // 0 } 3, 1, 10), map({ $r{$_} // 0 } 3, 1, 10)));
	# (an insert into shard 3 begun after the first move returned found the
	# old copy renamed, went_on: its map is reloaded on no interval)
	ok(($r{3} // 0) > 0, "$w writer: retried on the moving shard (it saw the moves)");
	is(($r{1} // 0) . '/' . ($r{10} // 0), '0/0', "$w writer: no retry on the other shards");
}

# every acknowledged insert on its final node exactly once, nothing else there
for my $check ([ 3, $node_a ], [ 1, $node_a ], [ 10, $node_b ])
{
	my ($shard, $on) = @$check;
	my %acked;
	for my $w (@writers)
	{
		for (lines("$work/$w.out"))
		{
			my ($id, $s) = split ' ';
			$acked{$id}++ if $s == $shard;
		}
	}
	my %found;
	$found{$_}++ for split /\n/, $on->safe_psql('app', sprintf(
		q{SELECT id FROM shard_%04d.posts WHERE body ~ '^(map|sqlalchemy|django|js) writer [0-9]+$'}, $shard));
	my $missing = grep { !$found{$_} } keys %acked;
	my $duplicated = grep { $found{$_} > 1 } keys %found;
	my $unacked = grep { !$acked{$_} } keys %found;
	is("$missing $duplicated $unacked", '0 0 0',
		"shard $shard: acknowledged inserts missing on the node, duplicated, not acknowledged (of " . scalar(keys %acked) . ')');
}
is($node_a->safe_psql('app', 'SELECT count(*) FROM shard_0003.posts WHERE length(body) = 960'), $rows,
	'shard 3 on node a: the rows loaded before the moves');
is($node_b->safe_psql('app', 'SELECT count(*) FROM shardid.shard_registry WHERE shard = 3') . '/'
	  . $node_b->safe_psql('app', "SELECT count(*) FROM pg_namespace WHERE nspname ~ '^shard_0003'"),
	'0/0', 'node b: shard 3 unregistered, its copy dropped (--drop-old)');
is($node_a->safe_psql('app', q{
SELECT count(*) FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname LIKE 'shard_0003_moved_%' AND g.tgname = 'shardid_retired'}),
	'1', "node a: the first move's retired copy refuses writes");

# the reader: every pass saw each of the 16 shards once (it checks that
# itself), passes ran across both moves, and its stale map was corrected by
# the moved shard's errors alone: once per move at least (the first move's
# retired copy on a is renamed, the second's on b dropped), since a pass
# that began after each move had returned (went_on) read shard 3 where its
# map, reloaded only by such errors, still placed it
my (undef, $reader_retries, $reader_node) = split ' ', (lines("$work/reader.out"))[-1] // '';
ok(($reader_retries // 0) >= 2, 'fan-out reader: its stale map saw both moves (' . ($reader_retries // '?') . ' retries)');
is($reader_node, 'a', "fan-out reader: shard 3's node in its map after both moves");
note('fan-out reader: ' . passes() . ' passes over 16 shards in batches of 4, ' . ($reader_retries // '?') . ' retries on the moved shard');
my $slowest = 0;
for my $w (@writers)
{
	for (lines("$work/$w.out"))
	{
		my (undef, $s, undef, $ms) = split ' ';
		$slowest = $ms if $s == 3 && $ms > $slowest;
	}
}
note(sprintf('longest insert into the moving shard, retries included: %d ms', $slowest));
note("apps: writers @writers" . ($no_js ? " (the JavaScript writer skipped: $no_js)" : ''));

done_testing();
