# chaos.pl — the seeded chaos test of the rebalance jobs (issue 43 item 6).
#
# A router (shardid in shared_preload_libraries, so its launcher resumes
# jobs after a restart) and four data nodes a-d with wal_level = logical;
# 32 shards (0-15 on a, 16-31 on b, c and d empty), 40 rows each; a writer
# through the shard map (ShardidTest::install_writer: dblink to the node
# the placement names, every acknowledged ID recorded in the router's
# public.written). Then a sequence of operations drawn with Perl's
# srand(SEED): step 1 is a parallel rebalance, then every kind once in a
# shuffled order, then kinds drawn by weight:
#   rebalance       rebalance_start(by_count or by_size, max_parallel 1..3,
#                   move_retries 0..2, retry_pause 1 or 2 s)
#   drain           drain_node_start(node, same options)
#   accepts         set_node(node, accepts_shards => true/false), never
#                   leaving fewer than two nodes open
#   stop            rebalance_stop(job, cancel_move => true/false)
#   kill_move       pg_terminate_backend() of a move's worker
#                   (rebalance_job_moves.worker_pid)
#   kill_driver     pg_terminate_backend() of a job's worker
#                   (rebalance_jobs.worker_pid)
#   restart_router  $router->restart (a new writer session after it)
#   restart_node    a data node's restart
#   apply_ddl       CALL apply_ddl('public.posts', ADD COLUMN IF NOT EXISTS
#                   or CREATE INDEX IF NOT EXISTS); one that fails is CALLed
#                   again at the end
#   run_on_shards   a COMMENT or a read on every copy
#   wait            rebalance_wait(timeout => '5 s')
# stop, kill_move and kill_driver start a job first when none runs (a
# rebalance by count with the step's options or, with nothing to move, a
# drain of the step's node). A step whose operation does not apply (a
# second job refused with 55P03, no move worker in flight, a close that
# would leave one node open) says so in its note and changes nothing.
#
# After every step (a test per step), the invariants:
#   undriven   within BOUND + 6 s (BOUND = 30 s), all at once: no job in
#              starting/running/stopping whose rebalance_status() says
#              interrupted, no job still stopping, no shard_moves row that
#              no live job has in flight (its current_shard, or its
#              rebalance_job_moves row starting, running, error or
#              retrying), no rebalance_job_moves row of a live job in error
#              or retrying (a retry is due after retry_pause, 1 or 2 s),
#              or starting/running with its worker gone;
#   stop       a rebalance_stop(cancel_move => true) that was accepted
#              leaves, once its job has ended, no shard_moves row but
#              repointed ones (those that were not repointed are rolled
#              back before the job says stopped);
#   plan       no job fails with "placed on node ... but not registered"
#              (a plan made on a stale view);
#   placement  every shard placed on one node, which registers it; a shard
#              with no move in progress is registered on no other node (a
#              shard being moved may also be on its move's other node),
#              read from the nodes between two reads of the router;
#   writer     the writer's session is still writing (it retries what a
#              move refuses for BOUND + 10 s, then gives up with the
#              error), and
#              its last acknowledged write is at most BOUND old.
# At the end: the last job waited for (rebalance_wait, as long as it makes
# progress: BOUND + 6 s at a time, at most 120 s), then
# nothing undriven and shard_moves empty within the bound, the writer
# stopped, failed DDL CALLed again; then every shard registered on exactly
# its node, every loaded and every acknowledged row present on its shard's
# node exactly once (a write cut off by a restart may have left a row
# nobody acknowledged: at most one per restart); no ID twice (the IDs of
# every live copy are counted; an ID issued twice would also fail the
# writer: a copy's primary key, written's unique id),
# check_cluster() returns no row, and no publication, subscription, slot
# or move row is left.
#
# A failed invariant fails that step's test with the seed, the step and
# what was seen, prints (diag) the sequence up to it with the command that
# replays it, and the jobs, moves and placement left; the remaining steps
# are skipped and the end's checks run (bounded) to show the state left.
#
# Environment:
#   SHARDID_CHAOS_SEED     the seed (default 4301)
#   SHARDID_CHAOS_STEPS    the number of steps (default 14: the first
#                          rebalance, every kind once, two more)
#   SHARDID_CHAOS_KINDS    the kinds to draw from, e.g. "rebalance,drain,
#                          accepts,wait" (default all; step 1 is always a
#                          rebalance; another set draws another sequence)
#   SHARDID_CHAOS_PRELOAD  0: the router without shared_preload_libraries;
#                          after a restart of the router the test itself
#                          resumes an interrupted job with rebalance_start()
#                          or drain_node_start() of the same options
#                          (default 1: the launcher must resume it)
# Replay a failure: SHARDID_CHAOS_SEED=N SHARDID_CHAOS_STEPS=K prove test/tap/chaos.pl
#
# Cost: five servers, about 20 s of CPU for the test's own processes (psql)
# besides the servers'. On this project's shared 2-core machine at load
# average 10 to 14 (other suites running), passing runs took 121 s (14
# steps) to 244 s (20 steps) of wall time, 28 to 74 s of it the set-up,
# 3 to 15 s a step; not yet measured on a quiet machine. A hang fails in
# bounded time: a step waits at most BOUND + 6 s for the undriven
# invariant, a psql call of the test is killed after 60 s, the end waits
# for a job while it makes progress (at most about 160 s), then at most
# BOUND + 6 s for what is left undriven and BOUND s for shard_moves.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use ShardidTest;
use Test::More;
use Time::HiRes qw(time);

my $SEED = $ENV{SHARDID_CHAOS_SEED} // 4301;
my $STEPS = $ENV{SHARDID_CHAOS_STEPS} // 14;
my $PRELOAD = $ENV{SHARDID_CHAOS_PRELOAD} // 1;
die "SHARDID_CHAOS_SEED and SHARDID_CHAOS_STEPS must be whole numbers\n" unless "$SEED $STEPS" =~ /^\d+ \d+$/;

# the bound of the undriven invariant, seconds
my $BOUND = 30;
# a psql call of the test is ended after this many seconds
my $QUERY_TIMEOUT = 60;
# poll_query_until's bound (the writer's start)
$PostgreSQL::Test::Utils::timeout_default = $BOUND + 6;

my @NAMES = qw(a b c d);
my $SHARDS = 32;
my $ROWS = 40;
my @DDL = (
	'ALTER TABLE %s ADD COLUMN IF NOT EXISTS note text',
	'CREATE INDEX IF NOT EXISTS posts_by_user ON %s (user_id)',
	'ALTER TABLE %s ADD COLUMN IF NOT EXISTS score integer');
my @RUN = ("COMMENT ON TABLE %s IS 'chaos'", 'SELECT count(*) FROM %s');
my %WEIGHT = (
	rebalance => 5, drain => 2, accepts => 3, stop => 2, kill_move => 3, kill_driver => 2,
	restart_router => 1, restart_node => 1, apply_ddl => 1, run_on_shards => 1, wait => 2);
my @KINDS = sort keys %WEIGHT;
if (defined $ENV{SHARDID_CHAOS_KINDS} && $ENV{SHARDID_CHAOS_KINDS} ne '')
{
	my @want = split /[\s,]+/, $ENV{SHARDID_CHAOS_KINDS};
	my @unknown = grep { !exists $WEIGHT{$_} } @want;
	die "SHARDID_CHAOS_KINDS: no kind @unknown (kinds: @KINDS)\n" if @unknown;
	@KINDS = sort @want;
}

# --- the sequence, drawn before anything runs -----------------------------------
# Every step draws the same number of values, whatever its kind, so a
# sequence's first K steps are the same for every SHARDID_CHAOS_STEPS >= K.
srand($SEED);

sub draw_op
{
	my ($kind) = @_;
	my %op = (
		kind => $kind,
		strategy => rand() < 0.75 ? 'by_count' : 'by_size',
		parallel => 1 + int(rand(3)),
		retries => int(rand(3)),
		pause => 1 + int(rand(2)),
		node => $NAMES[ int(rand(@NAMES)) ],
		open => rand() < 0.5 ? 1 : 0,
		cancel => rand() < 0.5 ? 1 : 0,
		ddl => int(rand(@DDL)),
		run => int(rand(@RUN)),
		pick => rand());
	return \%op;
}

sub weighted_kind
{
	my $total = 0;
	$total += $WEIGHT{$_} for @KINDS;
	my $r = rand($total);
	for (@KINDS)
	{
		return $_ if ($r -= $WEIGHT{$_}) < 0;
	}
	return $KINDS[-1];
}

my @order = @KINDS;
for (my $i = $#order; $i > 0; $i--)
{
	my $j = int(rand($i + 1));
	@order[ $i, $j ] = @order[ $j, $i ];
}
my @plan;
for my $k (1 .. $STEPS)
{
	my $kind = $k == 1 ? 'rebalance' : $k - 1 <= @order ? $order[ $k - 2 ] : weighted_kind();
	my $op = draw_op($kind);
	$op->{parallel} = 2 if $k == 1;
	push @plan, $op;
}

sub describe
{
	my ($op) = @_;
	my $k = $op->{kind};
	my $opts = "max_parallel => $op->{parallel}, move_retries => $op->{retries}, retry_pause => '$op->{pause} s'";
	return "rebalance_start('$op->{strategy}', $opts)" if $k eq 'rebalance';
	return "drain_node_start('$op->{node}', $opts)" if $k eq 'drain';
	return "set_node('$op->{node}', accepts_shards => " . ($op->{open} ? 'true' : 'false') . ')' if $k eq 'accepts';
	return 'rebalance_stop(cancel_move => ' . ($op->{cancel} ? 'true' : 'false') . ')' if $k eq 'stop';
	return "pg_terminate_backend(a move's worker)" if $k eq 'kill_move';
	return "pg_terminate_backend(the job's worker)" if $k eq 'kill_driver';
	return 'restart the router' if $k eq 'restart_router';
	return "restart node $op->{node}" if $k eq 'restart_node';
	return "apply_ddl('public.posts', '$DDL[$op->{ddl}]')" if $k eq 'apply_ddl';
	return "run_on_shards('public.posts', \"$RUN[$op->{run}]\")" if $k eq 'run_on_shards';
	return "rebalance_wait(timeout => '5 s')";
}

note("seed $SEED, $STEPS steps, kinds: @KINDS");
note(sprintf('  %2d. %s', $_ + 1, describe($plan[$_]))) for 0 .. $#plan;

# --- the cluster ---------------------------------------------------------------------
my $t_start = time;
my %node = map {
	$_ => data_node($_, conf => "wal_receiver_status_interval = 1s\n",
		sql => 'CREATE TABLE public.posts (id bigint PRIMARY KEY, user_id bigint NOT NULL, body text NOT NULL);'
		  . post_ids_sql('node'))
} @NAMES;
my $half = $SHARDS / 2;
$node{a}->safe_psql('app', 'SELECT shardid.create_shards(0, ' . ($half - 1) . ')');
$node{b}->safe_psql('app', "SELECT shardid.create_shards($half, " . ($SHARDS - 1) . ')');
$node{$_}->safe_psql('app', "SELECT shardid.create_table('public.posts')") for @NAMES;
$node{$_}->safe_psql('app', qq{
DO \$\$ DECLARE s record; BEGIN
    FOR s IN SELECT shard FROM shardid.shards LOOP
        EXECUTE format('INSERT INTO %I.posts (user_id, body) SELECT g, repeat(''x'', 100) FROM generate_series(1, $ROWS) AS g',
                       shardid.shard_schema(s.shard));
    END LOOP;
END \$\$;}) for qw(a b);
my %loaded = map { $_ => 1 } map {
	split /\n/, $node{$_}->safe_psql('app', 'SELECT public.post_ids(ARRAY(SELECT shard FROM shardid.shards))')
} qw(a b);
is(scalar keys %loaded, $SHARDS * $ROWS, "$SHARDS shards of $ROWS rows loaded on a and b");

my $router = router_node('router', \%node,
	conf => $PRELOAD ? "shared_preload_libraries = 'shardid'\n" : undef);
note($PRELOAD ? "router: shared_preload_libraries = 'shardid'" : 'router: no shared_preload_libraries (SHARDID_CHAOS_PRELOAD=0)');
$router->safe_psql('app', "SELECT shardid.place_shards('a', 0, " . ($half - 1) . "), shardid.place_shards('b', $half, " . ($SHARDS - 1) . ')');
# A write is retried for BOUND + 10 s (0.01 s apart) through whatever a
# move or a restart refuses: a frozen shard, a copy renamed away, a node
# down, starting or shutting down; any other error ends the writer.
install_writer($router, [ values %node ],
	retry => 'read_only_sql_transaction OR undefined_object OR undefined_table'
	  . ' OR sqlclient_unable_to_establish_sqlconnection OR connection_exception'
	  . ' OR admin_shutdown OR crash_shutdown OR cannot_connect_now',
	retry_for => $BOUND + 10, retry_sleep => 0.01);

# The test's helpers on the router (public, not part of the extension):
# chaos_wait(condition, seconds) polls a condition inside the server, every
# 0.1 s with a new snapshot of the tables and of pg_stat_activity, for at
# most that many seconds of the clock (poll_query_until counts attempts,
# which a loaded machine makes several times longer); chaos_snapshot()
# reads the placement and the moves in progress, then each node's
# registry over dblink, then the placement and the moves again.
$router->safe_psql('app', q{
CREATE FUNCTION public.chaos_wait(cond text, seconds float8) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    deadline timestamptz := clock_timestamp() + make_interval(secs => seconds);
    ok boolean;
BEGIN
    LOOP
        PERFORM pg_stat_clear_snapshot();
        EXECUTE cond INTO ok;
        IF ok THEN RETURN true; END IF;
        IF clock_timestamp() > deadline THEN RETURN false; END IF;
        PERFORM pg_sleep(0.1);
    END LOOP;
END $$;
CREATE FUNCTION public.chaos_snapshot() RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE n record;
BEGIN
    RETURN QUERY SELECT 'p1 ' || p.shard || ' ' || p.node FROM shardid.placement AS p;
    RETURN QUERY SELECT 'm1 ' || m.shard || ' ' || m.source || ' ' || m.target || ' ' || m.phase FROM shardid.shard_moves AS m;
    FOR n IN SELECT x.node, x.connstr FROM shardid.nodes AS x ORDER BY x.node LOOP
        RETURN QUERY SELECT 'r ' || t.shard || ' ' || n.node
                       FROM public.dblink(n.connstr, 'SELECT shard FROM shardid.shard_registry') AS t(shard integer);
    END LOOP;
    RETURN QUERY SELECT 'p2 ' || p.shard || ' ' || p.node FROM shardid.placement AS p;
    RETURN QUERY SELECT 'm2 ' || m.shard || ' ' || m.source || ' ' || m.target || ' ' || m.phase FROM shardid.shard_moves AS m;
END $$;
});

my $writer;
my $writers = 0;

# start_writer() — a new session running the writer (after a restart of the
# router ended the last one).
sub start_writer
{
	$writer = $router->background_psql('app', on_error_stop => 0, timeout => 3600);
	$writer->query_until(qr/writing/, qq{SET application_name = 'chaos_writer';
\\echo writing
CALL public.writer(NULL, NULL, 0.02);
});
	$writers++;
	return;
}

# writer_output() — what the writer's psql printed on stderr so far.
sub writer_output
{
	eval { $writer->{run}->pump_nb; };
	return $writer->{stderr} // '';
}

# end_writer() — ends the writer's session; one still writing (stuck
# retrying) is terminated first, so that quitting cannot wait for it.
sub end_writer
{
	eval {
		$router->psql('app', q{SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'chaos_writer'},
			timeout => 30);
	};
	eval { $writer->quit; };
	return;
}

start_writer();
$router->poll_query_until('app', 'SELECT count(*) >= 10 FROM public.written') or die 'the writer did not start';
note(sprintf('set up in %.1f s', time - $t_start));

# --- SQL helpers ---------------------------------------------------------------------------
# run(NODE, SQL) — (success, stdout, stderr with SQLSTATEs) of SQL in database app.
sub run
{
	my ($n, $sql) = @_;
	my ($ret, $out, $err) = (1, '', '');
	my $timed_out;
	eval {
		($ret, $out, $err) = $n->psql('app', $sql, timeout => $QUERY_TIMEOUT, timed_out => \$timed_out,
			extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	};
	$err = "psql: $@" if $@;
	$ret //= 1;
	$err = "psql killed after $QUERY_TIMEOUT s: $sql" if $timed_out;
	$err =~ s/^psql:<stdin>:\d+: //mg;
	return ($ret == 0 && !$timed_out, $out, $err);
}

# sql(NODE, SQL) — stdout of SQL, which must succeed.
sub sql
{
	my ($n, $sql) = @_;
	my ($ok, $out, $err) = run($n, $sql);
	die "query failed: $sql\n$err" unless $ok;
	return $out;
}

sub rsql { return sql($router, @_); }

# wait_for(CONDITION, SECONDS) — whether the SQL condition held on the
# router within that many seconds (chaos_wait()).
sub wait_for
{
	my ($cond, $secs) = @_;
	$cond =~ s/'/''/g;
	return rsql("SELECT public.chaos_wait('$cond', $secs)") eq 't';
}

# first_line(TEXT) — the first line of an error, for notes.
sub first_line
{
	my ($s) = @_;
	my ($l) = grep { /ERROR|FATAL|psql/ } split /\n/, $s;
	return $l // (split /\n/, $s)[0] // '';
}

# A job that is not over by the state of its row.
my $UNFINISHED = q{j.state IN ('starting', 'running', 'stopping')};

# live_job() — (job, its status, its worker) of the job the router runs
# (one at a time), or () for none: a job whose row is not over, and that
# rebalance_status() does not report interrupted.
sub live_job
{
	my $r = rsql(qq{
SELECT j.job_id || '|' || s.state || '|' || COALESCE(s.worker_pid, 0)
  FROM shardid.rebalance_jobs AS j, LATERAL shardid.rebalance_status(j.job_id) AS s
 WHERE $UNFINISHED AND s.state <> 'interrupted' ORDER BY j.job_id DESC LIMIT 1});
	return $r eq '' ? () : split /\|/, $r;
}

# open_nodes() — the nodes that accept shards, without the node a live
# drain is emptying.
sub open_nodes
{
	return split ' ', rsql(qq{
SELECT string_agg(n.node, ' ' ORDER BY n.node) FROM shardid.nodes AS n
 WHERE n.accepts_shards
   AND n.node IS DISTINCT FROM (SELECT j.drain_node FROM shardid.rebalance_jobs AS j WHERE $UNFINISHED AND j.kind = 'drain'
                                 ORDER BY j.job_id DESC LIMIT 1)});
}

# The undriven conditions, one per row: what is left alone. A job or a move
# must leave every one of them within the bound.
my $UNDRIVEN = qq{
SELECT format('job %s (%s, row %s): rebalance_status() says interrupted, no worker drives it', j.job_id, j.kind, j.state)
  FROM shardid.rebalance_jobs AS j, LATERAL shardid.rebalance_status(j.job_id) AS s
 WHERE $UNFINISHED AND s.state = 'interrupted'
UNION ALL
SELECT format('job %s (%s) still stopping since %s', j.job_id, j.kind, j.updated_at)
  FROM shardid.rebalance_jobs AS j, LATERAL shardid.rebalance_status(j.job_id) AS s
 WHERE j.state = 'stopping' AND s.state = 'stopping'
UNION ALL
SELECT format('shard_moves: shard %s %s>%s in phase %s (since %s), and no live job drives it (none has it in flight)',
              m.shard, m.source, m.target, m.phase, m.updated_at)
  FROM shardid.shard_moves AS m
 WHERE NOT EXISTS (SELECT FROM shardid.rebalance_jobs AS j, LATERAL shardid.rebalance_status(j.job_id) AS s
                    WHERE $UNFINISHED AND s.state <> 'interrupted'
                      AND (j.current_shard = m.shard
                           OR EXISTS (SELECT FROM shardid.rebalance_job_moves AS x
                                       WHERE x.job_id = j.job_id AND x.shard = m.shard
                                         AND x.state IN ('starting', 'running', 'error', 'retrying'))))
UNION ALL
SELECT format('job %s: move of shard %s %s>%s is %s (tries %s, retry_at %s, worker %s): %s',
              x.job_id, x.shard, x.source, x.target, x.state, x.tries, x.retry_at, x.worker_pid, left(x.last_error, 200))
  FROM shardid.rebalance_job_moves AS x JOIN shardid.rebalance_jobs AS j USING (job_id)
 WHERE $UNFINISHED AND x.state IN ('error', 'retrying')
UNION ALL
SELECT format('job %s: move of shard %s %s>%s is %s but its worker %s is gone', x.job_id, x.shard, x.source, x.target, x.state, x.worker_pid)
  FROM shardid.rebalance_job_moves AS x JOIN shardid.rebalance_jobs AS j USING (job_id)
 WHERE $UNFINISHED AND x.state IN ('starting', 'running') AND x.worker_pid IS NOT NULL
   AND NOT EXISTS (SELECT FROM pg_stat_activity AS a WHERE a.pid = x.worker_pid)
};

# --- the invariants -----------------------------------------------------------------------------

# undriven() — '' once nothing is left undriven (polled up to BOUND + 6 s),
# else what still was.
sub undriven
{
	return '' if wait_for("SELECT NOT EXISTS ($UNDRIVEN)", $BOUND + 6);
	my $left = rsql($UNDRIVEN);
	return $left eq '' ? '' : "left undriven for more than $BOUND s:\n$left";
}

# stale_plans() — the jobs that failed planning on a stale view: a shard
# "placed on node ... but not registered there".
my $STALE_PLANS = q{
SELECT string_agg(format('job %s (%s) %s: %s', j.job_id, j.kind, j.state, j.last_error), E'\n' ORDER BY j.job_id)
  FROM shardid.rebalance_jobs AS j WHERE j.last_error ~ 'is placed on node .* but not registered there'};

sub stale_plans
{
	my $r = rsql($STALE_PLANS);
	return $r eq '' ? '' : "a job planned on a stale view:\n$r";
}

# placement_once() — '' when every shard is placed on one node that
# registers it, and registered on no other but its move's other node.
sub placement_once
{
	my (%p1, %p2, %m1, %m2, %reg);
	for (split /\n/, rsql('SELECT public.chaos_snapshot()'))
	{
		my ($part, $shard, @rest) = split ' ';
		if ($part eq 'r') { $reg{$shard} = defined $reg{$shard} ? "$reg{$shard} $rest[0]" : $rest[0]; }
		elsif ($part eq 'p1') { $p1{$shard} = $rest[0]; }
		elsif ($part eq 'p2') { $p2{$shard} = $rest[0]; }
		elsif ($part eq 'm1') { $m1{$shard} = "@rest"; }
		else { $m2{$shard} = "@rest"; }
	}
	my ($p1, $p2, $m1, $m2, $reg) = (\%p1, \%p2, \%m1, \%m2, \%reg);
	my @bad;
	for my $s (0 .. $SHARDS - 1)
	{
		my $regs = $reg->{$s} // '';
		if (!defined $p1->{$s} || !defined $p2->{$s})
		{
			push @bad, "shard $s is not placed (registered on: '$regs')";
			next;
		}
		my $moving = defined $m1->{$s} || defined $m2->{$s} || $p1->{$s} ne $p2->{$s};
		if (!$moving)
		{
			push @bad, "shard $s placed on $p2->{$s}, no move in progress, registered on '$regs'" if $regs ne $p2->{$s};
			next;
		}
		my %may = map { $_ => 1 } $p1->{$s}, $p2->{$s}, map { (split ' ', $_)[ 0, 1 ] } grep { defined } $m1->{$s}, $m2->{$s};
		my @other = grep { !$may{$_} } split ' ', $regs;
		push @bad, "shard $s placed on $p2->{$s}, moving (" . ($m2->{$s} // $m1->{$s} // '') . "), registered on '$regs'"
		  if $regs eq '' || @other;
	}
	return join "\n", @bad;
}

# placement() — '' once placement_once() holds (polled up to 10 s: a read
# can straddle a move's step), else what it saw last.
sub placement
{
	my $bad = '';
	my $until = time + 10;
	while (1)
	{
		$bad = placement_once();
		return '' if $bad eq '';
		last if time > $until;
		select(undef, undef, undef, 0.3);
	}
	return "shards not live on exactly one node:\n$bad";
}

# writer_check() — '' while the writer writes.
sub writer_check
{
	my ($active, $age) = split /\|/, rsql(q{
SELECT (SELECT count(*) FROM pg_stat_activity WHERE application_name = 'chaos_writer' AND state = 'active'),
       (SELECT COALESCE(round(extract(epoch FROM clock_timestamp() - max(at)))::int, 0) FROM public.written)});
	return "the writer stopped: " . writer_output() if $active eq '0';
	return "the writer acknowledged no write for $age s" if $age > $BOUND;
	return '';
}

# invariants() — '' when every invariant of a step holds, else the first
# that does not, named.
sub invariants
{
	for my $check ([ undriven => \&undriven ], [ plan => \&stale_plans ], [ placement => \&placement ],
		[ writer => \&writer_check ])
	{
		my $bad = $check->[1]->();
		return "$check->[0]: $bad" if $bad ne '';
	}
	return '';
}

# state() — the jobs, moves and placement, for a failure's diag.
sub state
{
	my $out = '';
	for my $q (
		[ 'rebalance_jobs', q{SELECT j.job_id, j.kind, j.drain_node, j.state, s.state AS status, j.moves_done, j.worker_pid,
                                 left(j.last_error, 160) AS last_error, s.moves_failed
                            FROM shardid.rebalance_jobs AS j, LATERAL shardid.rebalance_status(j.job_id) AS s ORDER BY j.job_id} ],
		[ 'rebalance_job_moves (not done)', q{SELECT job_id, shard, action, source, target, state, tries, retry_at, worker_pid, left(last_error, 160) AS last_error
                            FROM shardid.rebalance_job_moves WHERE state <> 'done' ORDER BY job_id, shard} ],
		[ 'shard_moves', q{SELECT shard, source, target, phase, updated_at, left(last_error, 160) AS last_error FROM shardid.shard_moves ORDER BY shard} ],
		[ 'nodes', q{SELECT n.node, n.accepts_shards, count(p.shard) AS shards FROM shardid.nodes AS n
                       LEFT JOIN shardid.placement AS p ON p.node = n.node GROUP BY 1, 2 ORDER BY 1} ])
	{
		my ($ok, $o, $e) = run($router, "\\pset format aligned\n\\pset tuples_only off\n$q->[1]");
		$out .= "$q->[0]:\n" . ($ok ? $o : $e) . "\n";
	}
	return $out;
}

my @done_steps;

# violation(STEP, WHAT) — fails the step with the seed, and prints the
# sequence up to it, how to replay it, and the state left.
sub violation
{
	my ($k, $what) = @_;
	fail("seed $SEED, step $k (" . describe($plan[ $k - 1 ]) . "): $what");
	diag("chaos: seed $SEED failed at step $k of $STEPS; the sequence:\n" . join("\n", @done_steps));
	diag("replay: SHARDID_CHAOS_SEED=$SEED SHARDID_CHAOS_STEPS=$k prove test/tap/chaos.pl");
	diag("state left:\n" . state());
	return;
}

# --- the operations ------------------------------------------------------------------------
# Each returns what it did, for the step's note, or dies with a violation
# ("invariant: what was seen").

my %ddl_pending;

sub op_rebalance
{
	my ($op) = @_;
	my $opts = "max_parallel => $op->{parallel}, move_retries => $op->{retries}, retry_pause => '$op->{pause} s'";
	my $call = $op->{kind} eq 'drain'
	  ? "SELECT shardid.drain_node_start('$op->{node}', $opts)"
	  : "SELECT shardid.rebalance_start('$op->{strategy}', $opts)";
	if ($op->{kind} eq 'drain')
	{
		my @open = grep { $_ ne $op->{node} } open_nodes();
		return "skipped: draining $op->{node} would leave " . scalar(@open) . ' node(s) open' if @open < 2;
	}
	my ($ok, $job, $err) = run($router, $call);
	if (!$ok)
	{
		return 'refused (a job runs): ' . first_line($err) if $err =~ /55P03/;
		die "start: $call failed: $err\n";
	}
	# until it has a move in flight or has ended (nothing to do)
	wait_for("SELECT EXISTS (SELECT FROM shardid.shard_moves) OR s.state NOT IN ('starting', 'running') FROM shardid.rebalance_status($job) AS s", 10);
	return "job $job: " . rsql("SELECT state || ', ' || moves_done || ' done, ' || COALESCE(moves_planned, 0) || ' planned' FROM shardid.rebalance_status($job)");
}

# ensure_job(OP) — the live job, or one started for an operation that
# needs one (stop, kill_move, kill_driver): a rebalance by count with the
# operation's options or, when that has nothing to move, a drain of the
# operation's node; (job or undef, what was started, for the note).
sub ensure_job
{
	my ($op) = @_;
	my ($job) = live_job();
	return ($job, '') if defined $job;
	my $started = '';
	for my $kind (qw(rebalance drain))
	{
		$started .= "$kind: " . op_rebalance({ %$op, kind => $kind, strategy => 'by_count' }) . '; ';
		($job) = live_job();
		last if defined $job;
	}
	return ($job, "no job ran, started one: $started");
}

sub op_accepts
{
	my ($op) = @_;
	my $n = $op->{node};
	if (!$op->{open})
	{
		my @open = grep { $_ ne $n } open_nodes();
		return 'skipped: it would leave ' . scalar(@open) . ' node(s) open' if @open < 2;
	}
	rsql("SELECT shardid.set_node('$n', accepts_shards => " . ($op->{open} ? 'true' : 'false') . ')');
	return 'open: ' . join(' ', open_nodes());
}

sub op_stop
{
	my ($op) = @_;
	my ($job, $started) = ensure_job($op);
	return "${started}skipped: no job runs" unless defined $job;
	my $asked = rsql("SELECT shardid.rebalance_stop($job, cancel_move => " . ($op->{cancel} ? 'true' : 'false') . ')');
	return "${started}job $job: not asked (it had ended)" if $asked ne 't';
	wait_for("SELECT state NOT IN ('starting', 'running', 'stopping') FROM shardid.rebalance_status($job)", $BOUND + 6)
	  or die "undriven: job $job asked to stop is still " . rsql("SELECT state FROM shardid.rebalance_status($job)") . " after $BOUND s\n";
	my $end = rsql("SELECT state FROM shardid.rebalance_status($job)");
	if ($op->{cancel})
	{
		my $left = rsql(q{SELECT string_agg(format('shard %s %s>%s in phase %s', shard, source, target, phase), ', ' ORDER BY shard)
                            FROM shardid.shard_moves WHERE phase <> 'repointed'});
		die "stop: job $job ended $end after rebalance_stop(cancel_move => true), but its moves were not rolled back: $left\n"
		  if $left ne '';
	}
	return "${started}job $job ended $end";
}

sub op_kill_move
{
	my ($op) = @_;
	my ($job, $started) = ensure_job($op);
	return "${started}skipped: no job runs" unless defined $job;
	my $in_flight = qq{
SELECT x.shard || '|' || x.worker_pid || '|' || COALESCE(m.phase, '-') FROM shardid.rebalance_job_moves AS x
  JOIN pg_stat_activity AS a ON a.pid = x.worker_pid
  LEFT JOIN shardid.shard_moves AS m ON m.shard = x.shard
 WHERE x.job_id = $job AND x.state IN ('starting', 'running') ORDER BY x.shard};
	wait_for("SELECT EXISTS ($in_flight)", 5)
	  or return "${started}skipped: job $job has no move worker in flight";
	my @rows = split /\n/, rsql($in_flight);
	return "${started}skipped: job $job has no move worker in flight" unless @rows;
	my ($shard, $pid, $phase) = split /\|/, $rows[ int($op->{pick} * @rows) ];
	rsql("SELECT pg_terminate_backend($pid)");
	return "${started}job $job: terminated the worker ($pid) of the move of shard $shard, in phase $phase";
}

sub op_kill_driver
{
	my ($op) = @_;
	my ($job, $started) = ensure_job($op);
	return "${started}skipped: no job runs" unless defined $job;
	my (undef, $st, $pid) = live_job();
	return "${started}skipped: job $job has no worker (it ended)" unless $pid;
	my $phases = rsql(q{SELECT string_agg(shard || ':' || phase, ' ' ORDER BY shard) FROM shardid.shard_moves});
	rsql("SELECT pg_terminate_backend($pid)");
	return "${started}job $job ($st): terminated its worker $pid (moves in flight: " . ($phases || 'none') . ')';
}

sub op_restart_router
{
	my $before = rsql(qq{SELECT string_agg(j.job_id::text, ' ') FROM shardid.rebalance_jobs AS j WHERE $UNFINISHED});
	$router->restart;
	end_writer();
	start_writer();
	my $what = 'restarted' . ($before ne '' ? " (job $before unfinished)" : '');
	return $what if $PRELOAD || $before eq '';
	# without the launcher: resumed by starting the job again, with its options
	my $r = rsql(qq{
SELECT j.kind, COALESCE(j.drain_node, ''), j.options->>'strategy', j.options->>'max_parallel', j.options->>'move_retries', j.options->>'retry_pause'
  FROM shardid.rebalance_jobs AS j, LATERAL shardid.rebalance_status(j.job_id) AS s
 WHERE $UNFINISHED AND s.state = 'interrupted' ORDER BY j.job_id DESC LIMIT 1});
	return $what if $r eq '';
	my ($kind, $dn, $strategy, $par, $retries, $pause) = split /\|/, $r;
	my $opts = "max_parallel => $par, move_retries => $retries, retry_pause => '$pause'";
	my $call = $kind eq 'drain' ? "SELECT shardid.drain_node_start('$dn', '$strategy', $opts)" : "SELECT shardid.rebalance_start('$strategy', $opts)";
	my ($ok, $job, $err) = run($router, $call);
	die "undriven: the interrupted job could not be resumed: $call: $err\n" unless $ok;
	return "$what; resumed as job $job";
}

my $node_restarts = 0;

sub op_restart_node
{
	my ($op) = @_;
	$node{ $op->{node} }->restart;
	$node_restarts++;
	return 'restarted';
}

sub op_apply_ddl
{
	my ($op) = @_;
	my $cmd = $DDL[ $op->{ddl} ];
	my ($ok, $out, $err) = run($router, "CALL shardid.apply_ddl('public.posts', '$cmd')");
	delete $ddl_pending{$cmd} if $ok;
	return 'applied' if $ok;
	$ddl_pending{$cmd} = 1;
	return 'failed (CALLed again at the end): ' . first_line($err);
}

sub op_run_on_shards
{
	my ($op) = @_;
	(my $cmd = $RUN[ $op->{run} ]) =~ s/'/''/g;
	my ($ok, $out, $err) = run($router,
		"SELECT count(*) || ' copies, ' || count(*) FILTER (WHERE NOT success) || ' failed' FROM shardid.run_on_shards('public.posts', '$cmd')");
	return $ok ? $out : 'failed: ' . first_line($err);
}

sub op_wait
{
	my ($job) = live_job();
	return 'skipped: no job runs' unless defined $job;
	return "job $job: " . rsql("SELECT state || ', ' || moves_done || ' done' FROM shardid.rebalance_wait($job, timeout => '5 s')");
}

my %OP = (
	rebalance => \&op_rebalance, drain => \&op_rebalance, accepts => \&op_accepts, stop => \&op_stop,
	kill_move => \&op_kill_move, kill_driver => \&op_kill_driver, restart_router => \&op_restart_router,
	restart_node => \&op_restart_node, apply_ddl => \&op_apply_ddl, run_on_shards => \&op_run_on_shards,
	wait => \&op_wait);

my %ended;

# ended_jobs() — the jobs that ended since it was last called, with their
# outcome, for the step's note.
sub ended_jobs
{
	my @new;
	for (split /\n/, rsql(q{
SELECT format('job %s (%s%s) ended %s: %s moves%s%s', j.job_id, j.kind, COALESCE(' of ' || j.drain_node, ''), j.state, j.moves_done,
              CASE WHEN s.moves_failed <> '{}' THEN ', failed: ' || s.moves_failed::text ELSE '' END,
              COALESCE(': ' || left(j.last_error, 200), ''))
  FROM shardid.rebalance_jobs AS j, LATERAL shardid.rebalance_status(j.job_id) AS s
 WHERE j.state IN ('finished', 'stopped', 'failed') ORDER BY j.job_id}))
	{
		my ($id) = /^job (\d+)/;
		push @new, $_ unless $ended{$id}++;
	}
	return @new ? '; ' . join('; ', @new) : '';
}

# --- the steps ------------------------------------------------------------------------------
for my $k (1 .. $STEPS)
{
	my $op = $plan[ $k - 1 ];
	my $t = time;
	my ($what, $bad) = ('', '');
	eval { $what = $OP{ $op->{kind} }->($op); };
	if ($@)
	{
		($bad = $@) =~ s/\n+\z//;
		$bad = "error: $bad" unless $bad =~ /^\w+: /;
	}
	my $op_failed = $bad ne '';
	$what .= eval { ended_jobs() } // '';
	$bad = invariants() if $bad eq '';
	push @done_steps, sprintf('  %2d. %s: %s', $k, describe($op), $op_failed ? 'FAILED' : $what);
	note(sprintf('step %d (%.1f s): %s: %s', $k, time - $t, describe($op), $bad eq '' ? $what : $bad));
	if ($bad ne '')
	{
		violation($k, $bad);
		last;
	}
	pass("step $k: " . describe($op) . ': invariants hold');
}

# --- the end: quiet, then the whole cluster ----------------------------------------------------
my $t_end = time;
my @unfinished = split ' ', rsql(qq{SELECT string_agg(j.job_id::text, ' ') FROM shardid.rebalance_jobs AS j WHERE $UNFINISHED});
my $quiet = '';
for my $job (@unfinished)
{
	# waited for BOUND + 6 s at a time while it makes progress (its moves
	# done or the phases of the moves in progress change), at most 120 s
	my $t0 = time;
	my ($st, $last) = ('', '');
	while (1)
	{
		$st = rsql(qq{
SELECT w.state || ' ' || w.moves_done || ', in flight: '
       || COALESCE((SELECT string_agg(m.shard || ':' || m.phase, ' ' ORDER BY m.shard) FROM shardid.shard_moves AS m), 'none')
  FROM shardid.rebalance_wait($job, timeout => '@{[ $BOUND + 6 ]} s') AS w});
		last if $st !~ /^(starting|running|stopping) / || $st eq $last || time - $t0 > 120;
		$last = $st;
	}
	note("end: job $job: $st");
	$quiet = sprintf('job %s made no progress for %d s: %s', $job, $BOUND + 6, $st) if $st =~ /^(starting|running|stopping) / && $st eq $last;
	$quiet = sprintf('job %s still %s after %.0f s', $job, $st, time - $t0) if $st =~ /^(starting|running|stopping) / && $st ne $last;
}
$quiet = undriven() if $quiet eq '';
$quiet = "shard_moves not empty $BOUND s after the last job:\n" . rsql(q{SELECT string_agg(format('shard %s %s>%s %s', shard, source, target, phase), E'\n') FROM shardid.shard_moves})
  if $quiet eq '' && !wait_for('SELECT NOT EXISTS (SELECT FROM shardid.shard_moves)', $BOUND);
is($quiet, '', "end: quiet within the bound: no job alive or left undriven, no move in progress (seed $SEED)")
  or diag("state left:\n" . state());

# the writer stops; its last write must have been acknowledged without an error
rsql('INSERT INTO public.stop_writer VALUES (true)');
my $writer_done = wait_for(q{SELECT NOT EXISTS (SELECT FROM pg_stat_activity WHERE application_name = 'chaos_writer' AND state = 'active')}, $BOUND + 12);
my $werr = writer_output();
ok($writer_done && $werr !~ /ERROR/, "end: the writer stopped without an error (sessions: $writers)") or diag("writer: $werr");
end_writer();

for my $cmd (sort keys %ddl_pending)
{
	my ($ok, $out, $err) = run($router, "CALL shardid.apply_ddl('public.posts', '$cmd')");
	ok($ok, "end: the failed apply_ddl('$cmd') CALLed again finishes") or diag($err);
}

is(placement_once(), '', 'end: every shard registered on exactly the node it is placed on');

# every loaded and acknowledged row on its shard's node, once
my %placed = split /[|\n]/, rsql('SELECT shard, node FROM shardid.placement');
my %count;
for my $n (@NAMES)
{
	my @shards = sort { $a <=> $b } grep { $placed{$_} eq $n } keys %placed;
	next unless @shards;
	my ($ok, $out, $err) = run($node{$n}, 'SELECT public.post_ids(ARRAY[' . join(',', @shards) . '])');
	ok($ok, "end: node $n reads its shards' rows") or diag($err);
	$count{$_}++ for split /\n/, $out;
}
my @acked = split /\n/, rsql('SELECT id FROM public.written');
my @dup = grep { $count{$_} > 1 } sort keys %count;
my @missing = grep { !$count{$_} } sort(keys %loaded), @acked;
my %expected = (%loaded, map { $_ => 1 } @acked);
my @extra = grep { !$expected{$_} } keys %count;
is(scalar(@dup) . ' duplicate, ' . scalar(@missing) . ' missing', '0 duplicate, 0 missing',
	'end: every loaded (' . scalar(keys %loaded) . ') and acknowledged (' . scalar(@acked) . ') row is on its shard\'s node, once; no ID twice')
  or diag('duplicate: ' . join(' ', @dup[ 0 .. ($#dup < 9 ? $#dup : 9) ]) . "\nmissing: " . join(' ', @missing[ 0 .. ($#missing < 9 ? $#missing : 9) ]));
# a restart cuts off at most the one write in flight
cmp_ok(scalar @extra, '<=', $writers - 1 + $node_restarts,
	'end: rows nobody acknowledged (writes cut off by a restart): ' . scalar @extra);

my $cc = rsql(q{SELECT string_agg(format('%s shard %s node %s: %s | fix: %s', kind, shard, node, detail, fix), E'\n') FROM shardid.check_cluster()});
is($cc, '', 'end: check_cluster() returns no row');
is(leftovers([ map { $node{$_} } @NAMES ], $router), 'nodes=0000 moves=0', 'end: no publication, subscription, slot or move left');
note(sprintf('end checks %.1f s; whole file %.1f s', time - $t_end, time - $t_start));

done_testing();
