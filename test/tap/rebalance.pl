# rebalance.pl — CALL shardid.rebalance() over real nodes: a router (dblink;
# PL/Proxy where installed) and data nodes a, b with wal_level = logical,
# then c, just added and empty. Node a holds shard 0, about 10 MB, and seven
# small shards; b four small ones:
#   1. by_size and by_count plan differently (by count a looks like any
#      node; by size it is the full one); the CLI's dry run prints the
#      by_size plan and changes nothing;
#   2. CALL shardid.rebalance(max_moves => 1) makes one move; the session of
#      the next is terminated mid-move; the CLI resumes that move first and
#      makes the rest, printing each; then the nodes are balanced
#      (rebalance_plan() is empty, the spread of sizes fell), every shard is
#      registered on exactly its node with its rows, writes through the
#      router reach the moved shards, and no publication, subscription,
#      slot or move row is left;
#   3. pg_cron on the router runs the docs' one-step job (every minute here)
#      in the application database: it moves a shard to node d, just added
#      (without pg_cron for the major, 19 today, the step is CALLed
#      directly, and the pg_cron test is skipped);
#   4. a background job whose worker is terminated while its move waits in
#      caught_up (the shard frozen) is started again by the postmaster and
#      finishes (issue 35): the job ends finished, the shard writable on
#      its target; a restart of the router while a job's move waits there
#      leaves the move to nobody: check_cluster() reports it
#      (move_stalled) with the fix, which, run, finishes it.
use strict;
use warnings;

use File::Basename qw(dirname);
use FindBin;
use lib $FindBin::RealBin;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use ShardidTest;
use Test::More;

chomp(my $major = `pg_config --version`);
$major =~ s/^PostgreSQL (\d+).*/$1/s;
my $cli = dirname(__FILE__) . '/../../bin/shardid-rebalance';
# pg_cron for part 3: a server needs it in shared_preload_libraries
my $cron = have_extension('pg_cron');

# --- nodes: a holds 0-7 (0 is big), b 8-11; c and d have the template only --
my %node = map {
	$_ => data_node($_, conf => 'wal_receiver_status_interval = 1s',
		sql => 'CREATE TABLE public.posts (id bigint PRIMARY KEY, user_id bigint NOT NULL, body text NOT NULL);'
		  . node_insert_post_sql())
} qw(a b c d);
$node{a}->safe_psql('app', 'SELECT shardid.create_shards(0, 7)');
$node{b}->safe_psql('app', 'SELECT shardid.create_shards(8, 11)');
$node{$_}->safe_psql('app', "SELECT shardid.create_table('public.posts')") for qw(a b c d);
$node{a}->safe_psql('app', q{
INSERT INTO shard_0000.posts (user_id, body) SELECT g, repeat('x', 200) FROM generate_series(1, 40000) AS g;
DO $$ BEGIN
    FOR s IN 1 .. 7 LOOP
        EXECUTE format('INSERT INTO %I.posts (user_id, body) SELECT g, repeat(''x'', 200) FROM generate_series(1, 400) AS g', shardid.shard_schema(s));
    END LOOP;
END $$;
});
$node{b}->safe_psql('app', q{
DO $$ BEGIN
    FOR s IN 8 .. 11 LOOP
        EXECUTE format('INSERT INTO %I.posts (user_id, body) SELECT g, repeat(''x'', 200) FROM generate_series(1, 400) AS g', shardid.shard_schema(s));
    END LOOP;
END $$;
});
# Sizes settle before anything is planned: autovacuum would otherwise add
# the tables' visibility and free space maps between two plans, and the
# by_size plans compared below could differ.
$node{$_}->safe_psql('app', 'VACUUM') for qw(a b);

# --- the router: a and b, the shards placed, then c --------------------------
my $plproxy = have_extension('plproxy');
my $router = router_node('router', { a => $node{a}, b => $node{b} },
	plproxy => 1,
	conf => $cron ? "shared_preload_libraries = 'pg_cron'\ncron.database_name = 'postgres'\n" : undef);
if ($cron)
{
	# pg_cron connects to run a job: through the router's own socket directory
	$router->append_conf('postgresql.conf', "cron.host = '" . $router->host . "'\n");
	$router->restart;
}
# writes routed through PL/Proxy where it is installed, else over dblink
my $routing;
if ($plproxy)
{
	note('router: PL/Proxy');
	$routing = q{
CREATE FUNCTION public.insert_post(i_shard integer, i_body text) RETURNS bigint AS $$
    CLUSTER 'shardid'; RUN ON i_shard;
$$ LANGUAGE plproxy;
};
}
else
{
	note("router: no PL/Proxy for PostgreSQL $major, routing over dblink");
	$routing = router_dblink_sql() . q{
CREATE FUNCTION public.insert_post(i_shard integer, i_body text) RETURNS bigint LANGUAGE sql AS $$
    SELECT t.id FROM public.dblink(public.shard_connstr(i_shard),
                                   format('SELECT public.insert_post(%s, %L)', i_shard, i_body)) AS t(id bigint)
$$;
};
}
$router->safe_psql('app', "SELECT shardid.place_shards('a', 0, 7); SELECT shardid.place_shards('b', 8, 11);");
$router->safe_psql('app', 'SELECT shardid.add_node(:\'n\', :\'c\')',
	extra_params => [ '-v', 'n=c', '-v', 'c=' . $node{c}->connstr('app') ]);
$router->safe_psql('app', $routing);
# the pause point used below (test/lib/move_pause.sql, not part of the extension)
$router->safe_psql('app', slurp_file(dirname(__FILE__) . '/../lib/move_pause.sql'));
my @nodes = map { $node{$_} } qw(a b c d);

# rows(SHARD) — the shard's rows, on the node that registers it (every node asked)
sub rows
{
	my ($s) = @_;
	my $total = 0;
	$total += $_->safe_psql('app', qq{
SELECT CASE WHEN EXISTS (SELECT FROM shardid.shard_registry WHERE shard = $s)
       THEN (xpath('/row/c/text()', query_to_xml(format('SELECT count(*) AS c FROM %I.posts', shardid.shard_schema($s)), false, true, '')))[1]::text::int
       ELSE 0 END}) for @nodes;
	return $total;
}
sub all_rows { return join ' ', map { rows($_) } 0 .. 11; }

# loads() — each node's total shard size, as rebalance_plan('by_size') sees it
sub loads
{
	return $router->safe_psql('app', q{
SELECT string_agg(n.node || '=' || COALESCE(s.bytes, 0), ' ' ORDER BY n.node) FROM shardid.nodes n
  LEFT JOIN (SELECT node, sum(bytes) AS bytes FROM shardid.shard_sizes() GROUP BY node) s USING (node)});
}

# spread() — the largest node's total shard size less the smallest's
sub spread
{
	return $router->safe_psql('app', q{
SELECT max(COALESCE(s.bytes, 0)) - min(COALESCE(s.bytes, 0)) FROM shardid.nodes n
  LEFT JOIN (SELECT node, sum(bytes) AS bytes FROM shardid.shard_sizes() GROUP BY node) s USING (node)});
}

sub placement
{
	return $router->safe_psql('app', "SELECT string_agg(shard || ':' || node, ' ' ORDER BY shard) FROM shardid.shard_placement");
}

# run_cli(ARGS...) — the CLI's exit status, stdout and stderr
sub run_cli
{
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start([ $cli, @_ ], '<', \undef, '>', \$out, '2>', \$err);
	$h->finish;
	return ($h->result(0), $out, $err);
}

my $clean = 'nodes=0000 moves=0';
my $plan_sql = q{SELECT string_agg(shard || ':' || source || '>' || target, ' ' ORDER BY step) FROM shardid.rebalance_plan};

# --- 1. plans ------------------------------------------------------------------
my $before = placement();
my $rows_before = all_rows();
my $by_size = $router->safe_psql('app', "$plan_sql()");
my $by_count = $router->safe_psql('app', "$plan_sql('by_count')");
note('loads before: ' . loads());
note("by_size plan:  $by_size");
note("rebalance_plan():\n" . $router->safe_psql('app', 'SELECT * FROM shardid.rebalance_plan()'));
note("by_count plan: $by_count");
is($by_count, '7:a>c 6:a>c 5:a>c 4:a>c', 'by_count: the four highest shards of a to c');
unlike(" $by_size ", qr/ 0:/, "by_size does not move the big shard 0 ($by_size)");
my @size_steps = split ' ', $by_size;
cmp_ok(scalar @size_steps, '>=', 7, 'by_size plans at least seven moves');
is(join(' ', grep { !/^[1-7]:a>[bc]$/ } @size_steps), '', "by_size moves only a's small shards 1-7, to b or c");

my ($rc, $out, $err) = run_cli('--router', 'host=' . $router->host . ' port=1 dbname=app', '--dry-run');
isnt($rc, 0, 'CLI: shardid-rebalance with an unreachable router fails');
like("$out$err", qr/cannot connect to the router: .*\.s\.PGSQL\.1/, "CLI: an unreachable router is reported with libpq's reason");
($rc, my $dry, $err) = run_cli('--router', $router->connstr('app'), '--dry-run');
is($rc, 0, 'CLI: the dry run succeeds');
my $dry_plan = join ' ', map { /^move shard (\d+) from ([a-z]+) to ([a-z]+)$/ ? "$1:$2>$3" : "?$_" } split /\n/, $dry;
is($dry_plan, $by_size, 'dry run prints the by_size plan');
is(placement(), $before, 'dry run changes nothing');

# --- 2. rebalance ----------------------------------------------------------------
my $spread_before = spread();
($rc, $out, $err) = $router->psql('app', 'CALL shardid.rebalance(max_moves => 1)');
is($rc, 0, 'CALL shardid.rebalance(max_moves => 1) succeeds');
note($err);
my ($first_shard, $first_target) = $size_steps[0] =~ /^(\d+):a>([a-z]+)$/;
my @notices = $err =~ /^(?:psql:\S+ )?NOTICE:  (rebalance: shard .*)$/mg;
my $notice = $notices[0] // '';
$notice =~ s/^(rebalance: shard \d+ from node "[a-z]*" to node "[a-z]*").*/$1/;
is(scalar(@notices) . " $notice", qq{1 rebalance: shard $first_shard from node "a" to node "$first_target"},
	"max_moves => 1: one move, the plan's first");
is($router->safe_psql('app', "SELECT node FROM shardid.shard_placement WHERE shard = $first_shard"), $first_target,
	'max_moves => 1: placed on its target');

# The next move's session is terminated while the move waits at caught_up
# (the test hook shardid_test.move_pause, loaded above): the move is left
# in progress, and the next rebalance resumes it first.
my ($s, $t) = split /\|/, $router->safe_psql('app', 'SELECT shard, target FROM shardid.rebalance_plan(max_moves => 1)');
my $pause_key = "hashtext('shardid_test.move_pause')";
my $holder = $router->background_psql('app');
$holder->query_safe("SELECT pg_advisory_lock($pause_key, $s)");
my ($bg_out, $bg_err) = ('', '');
my $bg = IPC::Run::start(
	[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $router->connstr('app'),
	  '-c', "SET shardid_test.move_pause = 'caught_up'", '-c', 'CALL shardid.rebalance(max_moves => 1)' ],
	'<', \undef, '>', \$bg_out, '2>', \$bg_err);
$router->poll_query_until('app', qq{
SELECT EXISTS (SELECT FROM shardid.shard_moves WHERE shard = $s AND phase = 'caught_up')
       AND EXISTS (SELECT FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
                      AND classid = ($pause_key)::oid AND objid = $s)})
  or die "the move of shard $s did not wait at caught_up";
is($router->safe_psql('app', qq{
SELECT bool_and(pg_terminate_backend(pid)) FROM pg_locks
 WHERE locktype = 'advisory' AND NOT granted AND classid = ($pause_key)::oid AND objid = $s}),
	't', "the rebalance's session, waiting at caught_up in the move of shard $s, is terminated");
$bg->finish;
isnt($bg->result(0), 0, 'the terminated rebalance fails');
note("terminated rebalance: $bg_err");
$holder->query_safe("SELECT pg_advisory_unlock($pause_key, $s)");
$holder->quit;
is($router->safe_psql('app', "SELECT target || ' ' || phase FROM shardid.shard_moves WHERE shard = $s"), "$t caught_up",
	"terminated mid-move: the move of shard $s to $t is left in progress");

my $t0 = time;
($rc, my $made, my $log) = run_cli('--router', $router->connstr('app'));
note('CLI moves (' . (time - $t0) . " s):\n$made");
is($rc, 0, 'the CLI rebalance succeeds') or diag($log);
like($log, qr/^shardid-rebalance: balanced \(moves made: \d+\)$/m, 'the CLI ends balanced') or diag($log);
my @made = split /\n/, $made;
is($made[0], "move shard $s to $t (resumed)", 'the CLI resumed the move left in progress first');
my @rest = @made[ 1 .. $#made ];
cmp_ok(scalar @rest, '>', 0, 'then more moves: ' . scalar @rest);
is(join("\n", grep { !/^move shard [1-7] from a to [bc]$/ } @rest), '', "the CLI's other moves are small shards of a only");
note('loads after: ' . loads());
is($router->safe_psql('app', 'SELECT count(*) FROM shardid.rebalance_plan()'), '0', 'balanced: rebalance_plan() is empty');
my $spread_after = spread();
cmp_ok($spread_after, '<', $spread_before, "spread of node sizes $spread_before -> $spread_after bytes");
is($router->safe_psql('app', 'SELECT node FROM shardid.shard_placement WHERE shard = 0'), 'a', 'shard 0 stayed on a');
my %placed = split /[: ]/, placement();
is(join(' ', map { "$_:" . registered_where($_, \%node) } 0 .. 11), join(' ', map { "$_:$placed{$_}" } 0 .. 11),
	'every shard registered once, on its node');
is(all_rows(), $rows_before, 'every shard kept its rows');
is($router->safe_psql('app', q{
SELECT string_agg(shardid.id_shard(public.insert_post(s, 'after'))::text, ' ' ORDER BY s) FROM generate_series(0, 11) AS s}),
	'0 1 2 3 4 5 6 7 8 9 10 11', 'writes through the router reach every shard');
is(leftovers(\@nodes, $router), $clean, 'nothing left behind');
my $both = '';
my $again = IPC::Run::start([ $cli, '--router', $router->connstr('app') ], '<', \undef, '>&', \$both);
$again->finish;
is($again->result(0), 0, 'called again, the CLI succeeds');
is($both, "shardid-rebalance: balanced: nothing to move\n", 'called again: nothing to move');

# --- 3. pg_cron: one step a minute ----------------------------------------------------
$router->safe_psql('app', 'SELECT shardid.add_node(:\'n\', :\'c\')',
	extra_params => [ '-v', 'n=d', '-v', 'c=' . $node{d}->connstr('app') ]);
is($router->safe_psql('app', "SELECT count(*) > 0 FROM shardid.rebalance_plan() WHERE target = 'd'"), 't',
	'node d added: a plan to it');
SKIP:
{
	unless ($cron)
	{
		$router->safe_psql('app', 'CALL shardid.rebalance(max_moves => 1)');
		skip "pg_cron: not installed for PostgreSQL $major; the job's step was CALLed here instead", 1;
	}
	$router->safe_psql('postgres', q{
CREATE EXTENSION pg_cron;
SELECT cron.schedule_in_database('shardid-rebalance', '* * * * *', 'CALL shardid.rebalance(max_moves => 1)', 'app');
});
	$t0 = time;
	$router->poll_query_until('postgres', q{
SELECT EXISTS (SELECT FROM cron.job_run_details WHERE status IN ('succeeded', 'failed'))})
	  or diag('pg_cron ran no job');
	my $status = $router->safe_psql('postgres', q{
SELECT status || ': ' || return_message FROM cron.job_run_details
 WHERE status IN ('succeeded', 'failed') ORDER BY start_time LIMIT 1});
	$router->safe_psql('postgres', "SELECT cron.unschedule('shardid-rebalance')");
	note('pg_cron ran the job after ' . (time - $t0) . ' s');
	is($status, 'succeeded: CALL', 'pg_cron ran the job');
}
is($router->safe_psql('app', "SELECT count(*) FROM shardid.shard_placement WHERE node = 'd'"), '1', 'the job moved one shard to d');
is(leftovers(\@nodes, $router), $clean, 'nothing left behind after the job');

# --- 4. a worker that dies does not leave its shard frozen ---------------------------
# held(PHASE, START_SQL) — starts a job whose move waits in PHASE (the test
# hook, read by the worker from the database's settings) while the returned
# session holds the hook's locks of every shard; returns that session, the
# job, and the move's shard, source and target.
sub held
{
	my ($phase, $start) = @_;
	$router->safe_psql('app', "ALTER DATABASE app SET shardid_test.move_pause = '$phase'");
	my $h = $router->background_psql('app');
	$h->query_safe("SELECT pg_advisory_lock($pause_key, s) FROM generate_series(0, 11) AS s");
	my $job = $router->safe_psql('app', $start);
	$router->poll_query_until('app', qq{
SELECT s.current_phase = '$phase'
       AND EXISTS (SELECT FROM pg_locks AS l
                    WHERE l.pid IN (SELECT (e->>'worker_pid')::int FROM jsonb_array_elements(s.moves_in_flight) AS e)
                      AND l.locktype = 'advisory' AND l.classid = (${pause_key})::oid AND NOT l.granted)
  FROM shardid.rebalance_status() AS s})
	  or die "the job's move did not reach $phase";
	return ($h, $job, split /\|/,
		$router->safe_psql('app', 'SELECT current_shard, current_source, current_target FROM shardid.rebalance_status()'));
}
# insert_on(NODE, SHARD) — psql's stderr of an insert into the shard's table on that node
sub insert_on
{
	my ($n, $s) = @_;
	my ($r, $o, $e) = $node{$n}->psql('app', "\\set VERBOSITY verbose\nSELECT public.insert_post($s, 'frozen?')");
	return $e;
}
my ($h4, $job4, $s4, $src4, $tgt4) = held('caught_up', "SELECT shardid.drain_node_start('d')");
note("job $job4: the drain of d, its move of shard $s4 from $src4 to $tgt4 held in caught_up");
like(insert_on($src4, $s4), qr/25006/, "meanwhile shard $s4 refuses writes on $src4 (25006)");
my $pid4 = $router->safe_psql('app', "SELECT worker_pid FROM shardid.rebalance_status($job4)");
is($router->safe_psql('app', "SELECT pg_terminate_backend($pid4)"), 't', "the job's worker (process $pid4) is terminated in caught_up");
$router->poll_query_until('app', qq{
SELECT worker_pid <> $pid4 AND state = 'running'
       AND EXISTS (SELECT FROM pg_stat_activity AS a WHERE a.pid = worker_pid AND a.backend_type = 'shardid rebalance')
  FROM shardid.rebalance_status($job4)})
  or diag('the worker was not started again: ' . $router->safe_psql('app', "SELECT state || ' ' || worker_pid FROM shardid.rebalance_status($job4)"));
pass("the postmaster started the job's worker again");
is($router->safe_psql('app', "SELECT count(*) FROM shardid.check_cluster() WHERE kind = 'move_stalled'"), '0',
	'check_cluster(): the move is driven (its job is alive): no move_stalled');
$router->safe_psql('app', 'ALTER DATABASE app RESET shardid_test.move_pause');
$h4->quit;
is($router->safe_psql('app', "SELECT state || ' ' || moves_done FROM shardid.rebalance_wait($job4, timeout => '3 min')"),
	'finished 1', 'the job resumed its move and finished');
is($router->safe_psql('app', "SELECT node FROM shardid.shard_placement WHERE shard = $s4")
	  . ' ' . $router->safe_psql('app', 'SELECT count(*) FROM shardid.shard_moves'),
	"$tgt4 0", "shard $s4 is placed on $tgt4, no move in progress");
unlike(insert_on($tgt4, $s4), qr/ERROR/, "shard $s4 takes writes on $tgt4");
ok(!$router->safe_psql('app', q{SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'shardid rebalance'}),
	'the finished job left no worker to start again');

# A restart of the router ends every worker for good (no launcher here):
# the move held in caught_up is reported with the call that finishes it;
# run, it does; then the job nobody drives, with the call that resumes it.
my ($h5, $job5, $s5, $src5, $tgt5) = held('caught_up', "SELECT shardid.rebalance_start('by_count')");
note("job $job5: its move of shard $s5 from $src5 to $tgt5 held in caught_up; the router restarts");
$router->safe_psql('app', 'ALTER DATABASE app RESET shardid_test.move_pause');
$router->restart;
eval { $h5->quit; };
is($router->safe_psql('app', "SELECT state FROM shardid.rebalance_status($job5)"), 'interrupted', 'the job is interrupted');
like(insert_on($src5, $s5), qr/25006/, "shard $s5 still refuses writes on $src5");
my ($kind5, $fix5) = split /\|/, $router->safe_psql('app',
	"SELECT kind || '|' || fix FROM shardid.check_cluster() WHERE shard = $s5 AND run_on IS NULL");
is("$kind5 $fix5", "move_stalled CALL shardid.move_shard($s5, '$tgt5');", 'check_cluster(): move_stalled, with the call that finishes it');
$router->safe_psql('app', $fix5);
is($router->safe_psql('app', "SELECT kind || '|' || fix FROM shardid.check_cluster()"), "job_stalled|SELECT shardid.rebalance_resume($job5);",
	'the fix run, check_cluster() reports the job nobody drives, with the call that resumes it');
$router->safe_psql('app', "SELECT shardid.rebalance_resume($job5)");
is($router->safe_psql('app', "SELECT state FROM shardid.rebalance_wait($job5, timeout => '3 min')"), 'finished',
	'rebalance_resume(): the job resumed and finished');
is($router->safe_psql('app', 'SELECT count(*) FROM shardid.check_cluster()'), '0', 'check_cluster() finds nothing');
is($router->safe_psql('app', "SELECT node FROM shardid.shard_placement WHERE shard = $s5"), $tgt5, "shard $s5 is placed on $tgt5");
unlike(insert_on($tgt5, $s5), qr/ERROR/, "shard $s5 takes writes on $tgt5");
is(leftovers(\@nodes, $router), $clean, 'nothing left behind after the jobs');

done_testing();
