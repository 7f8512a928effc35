# rebalance_parallel.pl — parallel moves, retries and nodes that accept no
# shards (issue 39), on a router without PL/Proxy and four nodes: a holds
# shards 0-3, b shards 4-7, c and d none.
#   1. rebalance_start('by_count', max_parallel => 2, move_retries => 1):
#      the plan moves a's and b's highest shards to c and d; the moves of
#      shard 3 (a to c) and shard 7 (b to d) are in flight at once (two rows
#      of shardid.shard_moves, sampled while the job runs, both shown by
#      rebalance_status()'s moves_in_flight); shard 3's move, held in copy
#      by the test hook (test/lib/move_pause.sql), is cancelled, fails, is
#      retried after retry_pause and then made; the job ends finished with
#      4 moves, the balance by_count reached, every row a writer had
#      acknowledged kept, once;
#   2. set_node('d', accepts_shards => false): the plan moves d's shards
#      off and none onto d; a parallel job does so, d ends empty and no
#      move of it targeted d;
#   3. set_node()'s refusals; rebalance_start()'s refusals of its options.
use strict;
use warnings;

use File::Basename qw(dirname);
use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use ShardidTest;
use Test::More;
use Time::HiRes qw(time);

# a failure here should not wait 3 minutes per poll
$PostgreSQL::Test::Utils::timeout_default = 60;

my %node = map { $_ => data_node($_) } qw(a b c d);
$node{a}->safe_psql('app', 'SELECT shardid.create_shards(0, 3)');
$node{b}->safe_psql('app', 'SELECT shardid.create_shards(4, 7)');
$node{$_}->safe_psql('app', q{
CREATE TABLE public.posts (id bigint PRIMARY KEY, user_id bigint NOT NULL, body text NOT NULL);
SELECT shardid.create_table('public.posts');
}) for qw(a b c d);
for my $n (qw(a b))
{
	$node{$n}->safe_psql('app', q{
DO $$ DECLARE s record; BEGIN
    FOR s IN SELECT shard FROM shardid.shards LOOP
        EXECUTE format('INSERT INTO %I.posts (user_id, body) SELECT g, repeat(''x'', 100) FROM generate_series(1, 2000) AS g',
                       shardid.shard_schema(s.shard));
    END LOOP;
END $$;});
}
my $loaded = 16000;

my $router = router_node('router', \%node);
$router->safe_psql('app', slurp_file(dirname(__FILE__) . '/../lib/move_pause.sql'));
$router->safe_psql('app', "SELECT shardid.place_shards('a', 0, 3), shardid.place_shards('b', 4, 7)");
is($router->safe_psql('app', "SELECT string_agg(shard || ' ' || source || '>' || target, ', ' ORDER BY step) FROM shardid.rebalance_plan('by_count')"),
	'3 a>c, 7 b>d, 2 a>c, 6 b>d', 'the plan: two moves from a to c and two from b to d');

install_writer($router, [ values %node ]);
my $writer = $router->background_psql('app', on_error_stop => 0);
$writer->query_until(qr/writing/, "\\echo writing\nCALL public.writer();\n");
$router->poll_query_until('app', 'SELECT count(*) >= 20 FROM public.written') or die 'the writer did not start';

# --- 1. two moves at once; one fails, is retried, then made ----------------------
my $pause_key = "hashtext('shardid_test.move_pause')";
$router->safe_psql('app', "ALTER DATABASE app SET shardid_test.move_pause = 'copy'");
my $holder = $router->background_psql('app');
# both moves wait in copy until they have been seen together: shard 7's
# would otherwise finish, and the next step (shard 6) take its slot, before
# a slow machine reads rebalance_status()
$holder->query_safe("SELECT pg_advisory_lock($pause_key, 3), pg_advisory_lock($pause_key, 7)");
my $t0 = time;
my $job = $router->safe_psql('app',
	"SELECT shardid.rebalance_start('by_count', max_parallel => 2, move_retries => 1, retry_pause => '1 s')");
my $both = 0;
for (1 .. 300)
{
	my $s = $router->safe_psql('app', qq{SELECT string_agg(shard || ' ' || source || '>' || target, ', ' ORDER BY shard) FROM shardid.shard_moves
                                         UNION ALL SELECT state FROM shardid.rebalance_status($job)});
	if ($s =~ /^3 a>c, 7 b>d\n/) { $both = 1; last; }
	last if $s =~ /(failed|interrupted)$/;
	select(undef, undef, undef, 0.1);
}
ok($both, 'shard_moves holds the moves of shard 3 (a to c) and shard 7 (b to d) at once');
is($router->safe_psql('app', q{SELECT string_agg(e->>'shard', ' ' ORDER BY (e->>'shard')::int) FROM shardid.rebalance_status() AS s, jsonb_array_elements(s.moves_in_flight) AS e}),
	'3 7', "rebalance_status()'s moves_in_flight shows both");
$holder->query_safe("SELECT pg_advisory_unlock($pause_key, 7)");
# shard 3's move waits in copy: cancel its worker, the move fails
$router->poll_query_until('app', qq{
SELECT EXISTS (SELECT FROM pg_locks AS l JOIN shardid.rebalance_job_moves AS x ON x.worker_pid = l.pid
                WHERE x.job_id = $job AND x.shard = 3 AND l.locktype = 'advisory' AND l.classid = (${pause_key})::oid AND NOT l.granted)})
  or die "shard 3's move did not wait in copy";
$router->safe_psql('app', "SELECT pg_cancel_backend(worker_pid) FROM shardid.rebalance_job_moves WHERE job_id = $job AND shard = 3");
$router->poll_query_until('app', "SELECT tries = 2 FROM shardid.rebalance_job_moves WHERE job_id = $job AND shard = 3")
  or die 'the move of shard 3 was not retried';
pass('the failed move of shard 3 is retried (try 2)');
$router->safe_psql('app', 'ALTER DATABASE app RESET shardid_test.move_pause');
$holder->quit;
my $done = $router->safe_psql('app', "SELECT state || ' ' || moves_done || ' ' || cardinality(moves_failed) FROM shardid.rebalance_wait($job, timeout => '3 min')");
my $parallel_s = time - $t0;
is($done, 'finished 4 0', 'the job finished: 4 moves, none failed');
like($router->safe_psql('app', "SELECT last_error FROM shardid.rebalance_job_moves WHERE job_id = $job AND shard = 3"),
	qr/cancel/, "the retried move's row keeps the error of its first try");
is($router->safe_psql('app', "SELECT string_agg(node || ':' || n, ' ' ORDER BY node) FROM (SELECT node, count(*) AS n FROM shardid.placement GROUP BY node) AS p"),
	'a:2 b:2 c:2 d:2', 'balanced by count: two shards on each node');
is($router->safe_psql('app', "SELECT count(*) FROM shardid.rebalance_plan('by_count')"), '0', 'nothing left to plan');
note(sprintf('parallel job (4 moves, one retried after 1 s): %.1f s', $parallel_s));

# --- 2. a node that accepts no shards ----------------------------------------
is($router->safe_psql('app', "SELECT node_name || ' ' || node_accepts_shards FROM shardid.set_node('d', accepts_shards => false)"),
	'd false', "set_node('d', accepts_shards => false)");
my $plan = $router->safe_psql('app', "SELECT string_agg(source || '>' || target, ' ' ORDER BY step) FROM shardid.rebalance_plan('by_count')");
like($plan, qr/^d>[abc] d>[abc]$/, "the plan moves d's two shards off d, none onto it: $plan");
$job = $router->safe_psql('app', "SELECT shardid.rebalance_start('by_count', max_parallel => 2)");
$done = $router->safe_psql('app', "SELECT state || ' ' || moves_done FROM shardid.rebalance_wait($job, timeout => '3 min')");
is($done, 'finished 2', 'the job moved them');
is($router->safe_psql('app', "SELECT count(*) FROM shardid.placement WHERE node = 'd'")
	  . ' ' . $router->safe_psql('app', "SELECT count(*) FROM shardid.rebalance_job_moves WHERE job_id = $job AND target = 'd'"),
	'0 0', 'd holds no shard, and no move of the jobs targeted d');
is($router->safe_psql('app', "SELECT count(*) FROM shardid.drain_plan('a', 'by_count') WHERE target = 'd'"), '0',
	'drain_plan() sends nothing to d either');

$router->safe_psql('app', 'INSERT INTO public.stop_writer VALUES (true)');
like($writer->query_safe("SELECT 'writer done'"), qr/writer done/, 'the writer ran across the jobs without an error');
$writer->quit;

# --- every row kept; every shard on exactly its node ---------------------------
is(misplaced($router, \%node, 0 .. 7), '', 'every shard is registered on exactly the node it is placed on');
my $acked = $router->safe_psql('app', 'SELECT count(*) FROM public.written');
my $ids = $router->safe_psql('app', "SELECT string_agg(id::text, ',') FROM public.written");
my ($total, $found) = (0, 0);
for my $n (qw(a b c d))
{
	$total += $node{$n}->safe_psql('app', q{
SELECT COALESCE(sum((xpath('/row/c/text()', query_to_xml(format('SELECT count(*) AS c FROM %I.posts', s.schema), false, true, '')))[1]::text::int), 0)
  FROM shardid.shards AS s});
	$found += $node{$n}->safe_psql('app', qq{
SELECT COALESCE(sum((xpath('/row/c/text()', query_to_xml(format('SELECT count(*) AS c FROM %I.posts WHERE id = ANY (''{$ids}''::bigint[])', s.schema), false, true, '')))[1]::text::int), 0)
  FROM shardid.shards AS s});
}
is($found, $acked, "every acknowledged row ($acked) is on its shard's node, once");
is($total, $loaded + $acked, 'no row was lost or doubled');
is($router->safe_psql('app', 'SELECT count(*) FROM shardid.check_cluster()'), '0', 'check_cluster(): healthy after the jobs');

# --- 3. refusals -----------------------------------------------------------------
my ($ret, $out, $err) = $router->psql('app', "\\set VERBOSITY verbose\nSELECT shardid.rebalance_start(max_parallel => 0)");
like($err, qr/22023: max_parallel and max_moves_per_node must be 1 or more/, 'rebalance_start(max_parallel => 0): 22023');
($ret, $out, $err) = $router->psql('app', "\\set VERBOSITY verbose\nSELECT shardid.drain_node_start('a', move_retries => -1)");
like($err, qr/22023: move_retries and retry_pause must not be negative/, 'drain_node_start(move_retries => -1): 22023');

# --- serial versus parallel wall time, once (SHARDID_MEASURE=1) -----------------
# c and d closed (their shards to a and b) with one move at a time, then
# a and b closed (all eight shards to c and d) with two at once; the
# figures are printed per run (moves, seconds).
if ($ENV{SHARDID_MEASURE})
{
	$router->safe_psql('app', "SELECT shardid.set_node('d', accepts_shards => true)");
	my $j = $router->safe_psql('app', "SELECT shardid.rebalance_start('by_count', max_parallel => 2)");
	$router->safe_psql('app', "SELECT state FROM shardid.rebalance_wait($j, timeout => '5 min')");
	my %secs;
	for my $run ([ 'serial', 1, 'c', 'd', 'a', 'b' ], [ 'parallel', 2, 'a', 'b', 'c', 'd' ])
	{
		my ($name, $par, @n) = @$run;
		$router->safe_psql('app', "SELECT shardid.set_node('$n[0]', false), shardid.set_node('$n[1]', false), shardid.set_node('$n[2]', true), shardid.set_node('$n[3]', true)");
		my $moves = $router->safe_psql('app', "SELECT count(*) FROM shardid.rebalance_plan('by_count')");
		my $t = time;
		my $j = $router->safe_psql('app', "SELECT shardid.rebalance_start('by_count', max_parallel => $par, drop_old => true)");
		my $st = $router->safe_psql('app', "SELECT state FROM shardid.rebalance_wait($j, timeout => '10 min')");
		$secs{$name} = time - $t;
		diag(sprintf('%s: %d moves in %.1f s (%s)', $name, $moves, $secs{$name}, $st));
	}
}

done_testing();
