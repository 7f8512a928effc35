# bench/jobs/jobs.pl — the measurement bench/jobs/run runs (as postgres):
# a router and nodes a, b (loaded), c, d (empty). Each repetition rebalances
# by_count from a and b onto c and d (the plan: half of a's shards to c,
# half of b's to d, or the same split the other way: two disjoint pairs
# throughout), sampling every 20 ms on the router how many of the job's
# moves are in flight, then moves the shards back (not measured).
use strict;
use warnings;

use Getopt::Long;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use ShardidTest;
use Time::HiRes qw(time);

my ($shards, $rows, $reps) = (8, 20000, 2);
GetOptions('shards=i' => \$shards, 'rows=i' => \$rows, 'reps=i' => \$reps) or die "usage: bench/jobs/run [--shards N] [--rows N] [--reps N]\n";

my %node = map { $_ => data_node($_, sql => 'CREATE TABLE public.posts (id bigint PRIMARY KEY, body text NOT NULL)') } qw(a b c d);
$node{a}->safe_psql('app', "SELECT shardid.create_shards(0, " . ($shards - 1) . ")");
$node{b}->safe_psql('app', "SELECT shardid.create_shards($shards, " . (2 * $shards - 1) . ")");
$node{$_}->safe_psql('app', "SELECT shardid.create_table('public.posts')") for qw(a b c d);
for my $n (qw(a b))
{
	$node{$n}->safe_psql('app', qq{
DO \$\$ DECLARE s record; BEGIN
    FOR s IN SELECT shard FROM shardid.shards LOOP
        EXECUTE format('INSERT INTO %I.posts (body) SELECT repeat(''x'', 100) FROM generate_series(1, $rows)', shardid.shard_schema(s.shard));
    END LOOP;
END \$\$;});
}
my $router = router_node('router', \%node);
$router->safe_psql('app', "SELECT shardid.place_shards('a', 0, " . ($shards - 1) . "), shardid.place_shards('b', $shards, " . (2 * $shards - 1) . ")");
$router->safe_psql('app', 'CREATE TABLE public.samples (run text, t timestamptz, n integer)');

# run(NAME, START) — one measured job: wall time, moves, mean move time, in-flight shares.
sub run
{
	my ($name, $start) = @_;
	my $t = time;
	my $job = $router->safe_psql('app', $start);
	$router->safe_psql('app', qq{
DO \$\$ BEGIN
    LOOP
        INSERT INTO public.samples SELECT '$name', clock_timestamp(), count(*) FROM shardid.rebalance_job_moves
         WHERE job_id = $job AND state IN ('starting', 'running');
        EXIT WHEN NOT EXISTS (SELECT FROM shardid.rebalance_jobs WHERE job_id = $job AND state IN ('starting', 'running', 'stopping'));
        PERFORM pg_sleep(0.02);
    END LOOP;
END \$\$;});
	my $wall = time - $t;
	my ($state, $moves, $move_s) = split /\|/, $router->safe_psql('app', qq{
SELECT j.state, j.moves_done, round(avg(extract(epoch FROM x.updated_at - x.started_at))::numeric, 2)
  FROM shardid.rebalance_jobs AS j JOIN shardid.rebalance_job_moves AS x USING (job_id)
 WHERE j.job_id = $job AND x.state = 'done' GROUP BY j.state, j.moves_done});
	my $shares = $router->safe_psql('app', qq{
SELECT string_agg(format('%s: %s %%', n, share), ', ' ORDER BY n)
  FROM (SELECT n, round(100.0 * count(*) / sum(count(*)) OVER ()) AS share FROM public.samples WHERE run = '$name' GROUP BY n) AS s});
	$router->safe_psql('app', "DELETE FROM public.samples WHERE run = '$name'");
	die "job $job ended $state" unless $state eq 'finished';
	return { wall => $wall, moves => $moves, move_s => $move_s, shares => $shares };
}

# back() — the shards back onto a and b (c and d closed), not measured.
sub back
{
	$router->safe_psql('app', "SELECT shardid.set_node('c', false), shardid.set_node('d', false)");
	my $j = $router->safe_psql('app', "SELECT shardid.rebalance_start('by_count')");
	$router->safe_psql('app', "SELECT state FROM shardid.rebalance_wait($j)");
	$router->safe_psql('app', "SELECT shardid.set_node('c', true), shardid.set_node('d', true)");
}

my %res;
for my $rep (1 .. $reps)
{
	my @order = $rep % 2 ? (qw(serial parallel)) : (qw(parallel serial));
	for my $name (@order)
	{
		my $par = $name eq 'serial' ? 1 : 2;
		push @{ $res{$name} }, run($name, "SELECT shardid.rebalance_start('by_count', max_parallel => $par)");
		back();
	}
}

# PostgreSQL::Test::Utils sends STDOUT to its log: the results go to a file
open(my $out, '>', "$ENV{TESTDIR}/out.md") or die "cannot write $ENV{TESTDIR}/out.md: $!";
select $out;
chomp(my $version = `pg_config --version`);
chomp(my $cpus = `nproc`);
chomp(my $load = `cut -d' ' -f1-3 /proc/loadavg`);
print "# A real rebalance job, serial and parallel\n\n";
print "`bench/jobs/run --shards $shards --rows $rows --reps $reps`: $version, $cpus CPUs, load average $load at the end.\n";
print "A router and four nodes; a and b hold $shards shards of $rows rows each, c and d none; each job rebalances\n";
print "by_count (the shards of a and b, half of them, onto c and d: two disjoint pairs of nodes throughout).\n";
print "*in flight*: the share of 20 ms samples of the job's life with 0, 1 or 2 of its moves starting or running.\n\n";
print "| job | rep | moves | wall (s) | s per move | mean move (s) | in flight |\n|---|---:|---:|---:|---:|---:|---|\n";
for my $name (qw(serial parallel))
{
	my $i = 0;
	for my $r (@{ $res{$name} })
	{
		$i++;
		printf "| %s | %d | %d | %.1f | %.2f | %s | %s |\n", $name, $i, $r->{moves}, $r->{wall}, $r->{wall} / $r->{moves}, $r->{move_s}, $r->{shares};
	}
}
# the scheduler model of bench/planner: serial = moves × (move + gap); with
# two disjoint pairs and no gap, half the moves' time
my ($s, $p) = ($res{serial}[-1], $res{parallel}[-1]);
my $gap = $s->{wall} / $s->{moves} - $s->{move_s};
printf "\nModel (bench/planner's, with this run's mean move time %.2f s and the serial job's gap per move %.2f s):\n", $s->{move_s}, $gap;
printf "serial %.1f s predicted, %.1f s measured; parallel (2 pairs) %.1f s predicted, %.1f s measured.\n",
  $s->{moves} * ($s->{move_s} + $gap), $s->{wall}, ($p->{moves} / 2) * ($p->{move_s} + $gap), $p->{wall};
