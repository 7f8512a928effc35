# crash.pl — next_id() never repeats an ID of a committed row after a crash.
#
# The generator's state is WAL-logged ahead (32 ms of states) and again by
# the first call after every checkpoint, like nextval(). Three crashes:
#
#  1. stop('immediate') during two streams of single-row committed inserts,
#     the generator following the clock;
#  2. the generator set an hour ahead of the clock (so the clock cannot mask
#     a lost state after restart), inserts, CHECKPOINT, one more insert,
#     stop('immediate'): the row after the checkpoint must not be reissued;
#  3. SIGKILL of the postmaster during two streams of 50-row committed
#     inserts, still an hour ahead, so the logged headroom runs out and is
#     logged again many times;
#  4. a row copied in from two hours ahead, sync_generators() raising the
#     generator above it (_raise_generator(), WAL-logged like setval()),
#     stop('immediate') right after its commit: the raise is not lost.
#
# After each restart: every ID the clients saw acknowledged is in the table,
# the sequence's recovered last_value is at least the state of the largest
# committed ID, and new IDs are above every committed one.
use strict;
use warnings;

use Cwd qw(abs_path);
use IPC::Run;
use JSON::PP qw(decode_json);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

# ShardidTest points Cluster.pm at PGXS's pg_regress; nothing is imported.
use FindBin;
use lib $FindBin::RealBin;
use ShardidTest ();

my $node = PostgreSQL::Test::Cluster->new('crash');
$node->init;
$node->append_conf('postgresql.conf', qq{
log_statement = none
checkpoint_timeout = 1h
max_wal_size = 1GB
});
$node->start;

$node->safe_psql('postgres', q{
CREATE EXTENSION shardid;
CREATE SEQUENCE s;
CREATE TABLE t (id bigint DEFAULT shardid.next_id(1, 's') PRIMARY KEY, tag text NOT NULL);
-- The generator state C = time << seq_bits | counter that an ID stands for.
CREATE FUNCTION id_state(id bigint) RETURNS bigint LANGUAGE sql AS $$
	SELECT (id >> (l.shard_bits + l.seq_bits)) << l.seq_bits
	       | (id & ((1::bigint << l.seq_bits) - 1))
	FROM shardid.layout() AS l $$;
});

# Runs a one-row query and returns the row as a hash of column => value.
sub row
{
	my ($sql) = @_;
	return decode_json($node->safe_psql('postgres', "SELECT row_to_json(q) FROM ($sql) AS q"));
}

# Starts a psql client that runs $count copies of $statement, each its own
# transaction, writing the returned IDs to a file.
sub start_stream
{
	my ($name, $statement, $count) = @_;
	my $dir = $node->basedir;
	my $script = "$dir/$name.sql";
	open my $fh, '>', $script or die "cannot write $script: $!";
	print $fh "$statement\n" for 1 .. $count;
	close $fh;
	my $out = "$dir/$name.out";
	my $h = IPC::Run::start(
		[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'), '-f', $script ],
		'>', $out, '2>', "$dir/$name.err");
	return { name => $name, h => $h, out => $out };
}

# Waits for a stream's client to end (the crash ends it) and returns the
# IDs the server acknowledged to it.
sub finish_stream
{
	my ($stream) = @_;
	$stream->{h}->finish;
	open my $fh, '<', $stream->{out} or die "cannot read $stream->{out}: $!";
	my @ids = grep { /^\d+$/ } map { chomp; $_ } <$fh>;
	close $fh;
	return @ids;
}

# Polls until the table holds at least $rows rows tagged $tag.
sub wait_for_rows
{
	my ($tag, $rows) = @_;
	$node->poll_query_until('postgres', "SELECT count(*) >= $rows FROM t WHERE tag = '$tag'")
	  or die "timed out waiting for $rows rows tagged $tag";
}

# Waits until the killed postmaster is gone (reaped, since the new one
# checks the PID in postmaster.pid) and no process has the data directory as
# its working directory: its children exit on their own once they notice,
# and a new postmaster cannot start while they hold shared memory.
sub wait_for_old_processes
{
	my ($postmaster_pid) = @_;
	my $dir = abs_path($node->data_dir);
	# up to the tests' timeout: a loaded machine is slow to end them
	for (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
	{
		my @left = grep { (readlink("$_/cwd") // '') eq $dir } glob('/proc/[0-9]*');
		return 1 unless @left || kill(0, $postmaster_pid);
		usleep(100_000);
	}
	return 0;
}

# The PID of the running postmaster, from its lock file.
sub postmaster_pid
{
	open my $fh, '<', $node->data_dir . '/postmaster.pid' or die "no postmaster.pid: $!";
	my $pid = <$fh>;
	close $fh;
	chomp $pid;
	return $pid;
}

# The checks after a restart; $acked are the IDs clients saw committed.
sub check_recovered
{
	my ($label, @acked) = @_;
	my $acked = '{' . join(',', @acked) . '}';

	my $before = row(qq{
		SELECT count(*) AS rows, max(id) AS max_id,
		       (SELECT count(*) FROM unnest('$acked'::bigint[]) AS a(id)
		        WHERE NOT EXISTS (SELECT FROM t WHERE t.id = a.id)) AS lost,
		       (SELECT max(id) FROM unnest('$acked'::bigint[]) AS a(id)) AS max_acked,
		       (SELECT last_value FROM s) AS last_value,
		       id_state(max(id)) AS max_state
		FROM t});
	note("$label: $before->{rows} rows, max id $before->{max_id}, state $before->{max_state}, "
		  . "recovered last_value $before->{last_value}, " . scalar(@acked) . " acknowledged");
	is($before->{lost}, 0, "$label: every acknowledged ID survived");
	ok($before->{last_value} >= $before->{max_state},
		"$label: recovered last_value $before->{last_value} >= state $before->{max_state} of the largest committed ID");

	my ($ret, $out, $err) = $node->psql('postgres', qq{
		WITH ins AS (INSERT INTO t (tag) SELECT 'after $label' FROM generate_series(1, 200) RETURNING id)
		SELECT min(id) > $before->{max_id}, count(*), min(id), max(id) FROM ins});
	is($ret, 0, "$label: 200 inserts after the restart succeed") or diag($err);
	my ($above, $count, $min) = split /\|/, $out;
	is($above, 't', "$label: new IDs (from $min) are above the largest committed ID $before->{max_id}");
	is($count, 200, "$label: 200 new rows");
	return $before;
}

# 1. Clock-driven stream, stop('immediate').
my @streams = map { start_stream("r1_$_", "INSERT INTO t (tag) VALUES ('r1') RETURNING id;", 200_000) } 1 .. 2;
wait_for_rows('r1', 2000);
$node->stop('immediate');
my @acked = map { finish_stream($_) } @streams;
cmp_ok(scalar(@acked), '>=', 1000, 'round 1: the streams had IDs acknowledged before the crash');
$node->start;
check_recovered('round 1', @acked);

# 2. An hour ahead of the clock; a checkpoint between inserts.
my $ahead = row(q{
	SELECT setval('s', ((extract(epoch FROM now() + interval '1 hour') * 1000)::bigint
	                    - (extract(epoch FROM l.epoch) * 1000)::bigint) << l.seq_bits) AS state
	FROM shardid.layout() AS l});
$node->safe_psql('postgres', q{INSERT INTO t (tag) SELECT 'r2 before' FROM generate_series(1, 10)});
my $r2 = row(q{
	SELECT bool_and(shardid.id_time(id) > now() + interval '59 minutes') AS ahead
	FROM t WHERE tag = 'r2 before'});
ok($r2->{ahead}, 'round 2: the generator runs an hour ahead of the clock');
$node->safe_psql('postgres', 'CHECKPOINT');
my $last_r2 = $node->safe_psql('postgres', q{INSERT INTO t (tag) VALUES ('r2 after checkpoint') RETURNING id});
$node->stop('immediate');
$node->start;
my $r2_after = check_recovered('round 2', $last_r2);
is($r2_after->{max_id}, $last_r2, 'round 2: the row after the checkpoint is the largest committed ID');

# 3. Still ahead: streams of 50-row inserts, SIGKILL of the postmaster.
@streams = map {
	start_stream("r3_$_", "INSERT INTO t (tag) SELECT 'r3' FROM generate_series(1, 50) RETURNING id;", 20_000)
} 1 .. 2;
wait_for_rows('r3', 100_000);
my $killed = postmaster_pid();
$node->kill9;
my @acked3 = map { finish_stream($_) } @streams;
ok(wait_for_old_processes($killed), 'round 3: the killed server\'s processes are gone');
cmp_ok(scalar(@acked3), '>=', 50_000, 'round 3: the streams had IDs acknowledged before the kill');
$node->start;
my $span = row(q{SELECT id_state(max(id)) - id_state(min(id)) AS states FROM t WHERE tag = 'r3'});
check_recovered('round 3', @acked3);
cmp_ok($span->{states}, '>', 3 * 32 * 1024,
	'round 3: the stream used more than three headrooms of 32 ms of states');

# 4. sync_generators() raises the generator, then a crash before any checkpoint.
my $copied = $node->safe_psql('postgres', q{
	INSERT INTO t (id, tag) VALUES (shardid.make_id(now() + interval '2 hours', 1, 7), 'r4 copied') RETURNING id});
my $raised = $node->safe_psql('postgres',
	q{SELECT string_agg(action, ',') FROM shardid.sync_generators()});
is($raised, 'raised', 'round 4: sync_generators() raised the generator');
$node->stop('immediate');
$node->start;
my $r4 = check_recovered('round 4', $copied);
is($r4->{max_id}, $copied, 'round 4: the copied row is the largest committed ID');

$node->stop;
done_testing();
