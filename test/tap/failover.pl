# failover.pl — a new timeline (a promoted standby, a point-in-time
# restore) never re-issues an ID the old timeline could have issued.
#
# Every server but the first primary runs under libfaketime (as in
# clock.pl) with its own clock offset. The layout has 4 sequence bits (16
# IDs per millisecond), so a few thousand IDs span seconds of ID time. Each case cuts a server off from
# the timeline that goes on issuing IDs, fences that timeline (stop
# 'immediate'), starts the new timeline and checks that the two sets of
# IDs have nothing in common and that the new ones are above the old:
#
#  1. an async standby stopped (cut off), its clock 30 s behind the
#     primary's, promoted; then a crash right after the promotion, and one
#     right after the first ID's commit;
#  2. a standby whose WAL receiver is cut, the clocks equal, after a burst
#     that ran the primary's generator seconds ahead of its clock (up to
#     max_drift, 15 s there), with shardid.max_clock_skew = 0: the drift
#     term alone covers it;
#  3. a second promotion in a row: a standby of case 2's promoted server,
#     its clock 30 s behind, promoted in turn;
#  4. a point-in-time restore to a restore point before the primary's last
#     IDs, its clock 30 s behind;
#  5. no new timeline: rows copied to a server 30 s behind without their
#     generator, which sync_generators() or a move's cut-over raise
#     (_move_raise_generators()) before the target issues IDs.
#
# On a generator without the failover move, case 1 finds thousands of
# common IDs.
use strict;
use warnings;

use File::Spec;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# ShardidTest points Cluster.pm at PGXS's pg_regress; nothing is imported.
use FindBin;
use lib $FindBin::RealBin;
use ShardidTest ();

my $libfaketime = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
plan skip_all => "libfaketime not installed ($libfaketime)" unless -r $libfaketime;

# The clock offset file of a node (absolute: the server runs in its data
# directory).
sub offset_file
{
	my ($node) = @_;
	return File::Spec->rel2abs($node->basedir . '/faketime.rc');
}

# Sets a node's clock offset, in libfaketime's syntax ("+0", "-30").
sub set_offset
{
	my ($node, $offset) = @_;
	my $file = offset_file($node);
	PostgreSQL::Test::Utils::append_to_file("$file.new", "$offset\n");
	rename("$file.new", $file) or die "cannot rename to $file: $!";
}

# Starts a node under libfaketime; clients run without it. Its archiving
# is off: the archive_command (cp) is a child of the server and would run
# under libfaketime too, where one hung a fast shutdown for 60 s (17, a
# cold matrix); the cases read only the primary's archive.
sub start_faked
{
	my ($node) = @_;
	$node->adjust_conf('postgresql.conf', 'archive_mode', 'off');
	local $ENV{LD_PRELOAD} = $libfaketime;
	local $ENV{FAKETIME_TIMESTAMP_FILE} = offset_file($node);
	local $ENV{FAKETIME_NO_CACHE} = '1';
	local $ENV{FAKETIME_DONT_FAKE_MONOTONIC} = '1';
	local $ENV{NO_FAKE_STAT} = '1';
	delete local $ENV{FAKETIME};
	$node->start;
}

# Inserts n rows tagged $tag in statements of at most 5000 rows; returns
# their IDs (of committed rows only).
sub issue
{
	my ($node, $tag, $n) = @_;
	my @ids;
	while ($n > 0)
	{
		my $k = $n > 5000 ? 5000 : $n;
		push @ids, split /\n/, $node->safe_psql('postgres',
			"INSERT INTO t (tag) SELECT '$tag' FROM generate_series(1, $k) RETURNING id");
		$n -= $k;
	}
	return @ids;
}

# How many IDs two lists have in common.
sub common
{
	my ($a, $b) = @_;
	my %seen = map { $_ => 1 } @$a;
	return scalar grep { $seen{$_} } @$b;
}

# The largest and smallest of a list of IDs.
sub max_of { my $m = shift; for (@_) { $m = $_ if $_ > $m } return $m }
sub min_of { my $m = shift; for (@_) { $m = $_ if $_ < $m } return $m }

# Checks that the IDs a new timeline issued ($new) share none with the old
# timeline's ($old) and are all above them.
sub disjoint
{
	my ($label, $old, $new) = @_;
	is(common($old, $new), 0, "$label: none of the " . scalar(@$new)
		  . ' new IDs is one of the ' . scalar(@$old) . ' the old timeline issued');
	cmp_ok(min_of(@$new), '>', max_of(@$old), "$label: every new ID is above the old timeline's");
}

# Seconds the newest ID of tag $tag is ahead of the node's clock.
sub lead_of
{
	my ($node, $tag) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT extract(epoch FROM shardid.id_time(max(id)) - clock_timestamp())
		FROM t WHERE tag = '$tag'});
}

# Promotes a node and waits until it leaves recovery.
sub promote
{
	my ($node) = @_;
	$node->promote;
	$node->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die $node->name . ' did not leave recovery';
}

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1, has_archiving => 1);
$primary->append_conf('postgresql.conf', "log_statement = none\n");
# The primary keeps the machine's clock, without libfaketime: its clock
# read per call (FAKETIME_NO_CACHE) would hold case 2's burst near 16 IDs
# per millisecond, too slow to run ahead of the clock.
$primary->start;
$primary->safe_psql('postgres', q{
CREATE EXTENSION shardid;
SELECT shardid.configure('2011-08-24 21:07:01.721+00', 13, 4);
CREATE SEQUENCE s;
CREATE TABLE t (id bigint DEFAULT shardid.next_id(3, 's') PRIMARY KEY, tag text NOT NULL);
});
issue($primary, 'before backup', 1000);
$primary->backup('b');

# Case 1's standby, 30 s behind; case 2's, with the primary's clock.
my $standby1 = PostgreSQL::Test::Cluster->new('standby1');
$standby1->init_from_backup($primary, 'b', has_streaming => 1);
set_offset($standby1, '-30');
start_faked($standby1);
my $standby2 = PostgreSQL::Test::Cluster->new('standby2');
$standby2->init_from_backup($primary, 'b', has_streaming => 1);
$standby2->append_conf('postgresql.conf', "shardid.max_clock_skew = 0\nshardid.max_drift = 15s\n");
set_offset($standby2, '+0');
start_faked($standby2);

issue($primary, 'streamed', 1000);
$primary->wait_for_catchup($standby1);
$primary->wait_for_catchup($standby2);

# Case 1: standby1 is cut off (stopped); the primary goes on.
$standby1->stop;
my @p1 = issue($primary, 'after standby1 cut', 20000);
$primary->wait_for_catchup($standby2);

# Case 4's restore point: before the primary's last IDs.
$primary->safe_psql('postgres', "SELECT pg_create_restore_point('before_last')");

# Case 2: standby2's WAL receiver is cut; a burst of 240,000 IDs (15 s of
# ID time at 16 per millisecond) under shardid.max_drift = 15s (standby2
# has the same setting) runs the primary's generator several seconds ahead
# of its clock: far more than the promotion takes, so a generator without
# the failover move, continuing from the clock there, re-issues the
# burst's last seconds (0.3's generator: thousands of IDs).
$standby2->safe_psql('postgres', "ALTER SYSTEM SET primary_conninfo = ''; SELECT pg_reload_conf()");
$standby2->poll_query_until('postgres', 'SELECT count(*) = 0 FROM pg_stat_wal_receiver')
  or die 'standby2 still receives WAL';
# A burst that a loaded machine made slow (its 15 s of ID time issued in
# more wall time) leaves a smaller lead: another burst follows then, up to
# four, and the generator, capped at max_drift, ends ahead by up to 15 s
# whatever the load.
my (@p2, $burst_lead);
for (1 .. 5)
{
	push @p2, split /\n/, $primary->safe_psql('postgres', q{
	SET shardid.max_drift = '15s';
	INSERT INTO t (tag) SELECT 'burst' FROM generate_series(1, 240000) RETURNING id});
	$burst_lead = lead_of($primary, 'burst');
	last if $burst_lead > 10;
	note("the burst left the generator ${burst_lead}s ahead of its clock: one more");
}
my $burst_end = time;
cmp_ok($burst_lead, '>', 5, "the burst ran the primary's generator seconds ahead of its clock (${burst_lead}s)");
my $segment = $primary->safe_psql('postgres', 'SELECT pg_walfile_name(pg_current_wal_lsn())');
$primary->safe_psql('postgres', 'SELECT pg_switch_wal()');
$primary->poll_query_until('postgres', "SELECT last_archived_wal >= '$segment' FROM pg_stat_archiver")
  or die 'the WAL was not archived';
$primary->stop('immediate');
my @old = (@p1, @p2);

# Case 2: promoted at once, clocks equal, no clock skew allowed.
promote($standby2);
note(sprintf('case 2: standby2 promoted and issuing %d s after the burst, which ran %.1f s ahead',
		time - $burst_end, $burst_lead));
my @s2 = issue($standby2, 'standby2 promoted', 20000);
my $gap = $standby2->safe_psql('postgres', sprintf(q{
	SELECT extract(epoch FROM shardid.id_time(min(id)) - shardid.id_time(%s))
	FROM t WHERE tag = 'standby2 promoted'}, max_of(@p2)));
note("case 2: the first ID after the promotion is ${gap}s past the burst's last");
disjoint('case 2 (burst, clocks equal, max_clock_skew 0)', \@p2, \@s2);
# every shard's generator is named id_seq: the line names its schema too
ok($standby2->log_contains(qr/shardid: generator "public\.s" moved past the previous timeline's IDs/),
	'case 2: the log line names the generator by its schema-qualified name');
is(common(\@old, \@s2), 0, 'case 2: none of them is one of the primary\'s IDs');

# Case 1: standby1 starts 30 s behind and is promoted; a crash right after.
# shardid.generators shows the move to come (failover_pending: NULL in
# recovery, true from the promotion to the first ID, false after), and
# docs/monitoring.md's failover alert lists the generator before and after.
# (lead > 30 s: the replayed state is less than 30 s ahead of this clock,
# the move puts it 62 s ahead, and the clock runs on while the test issues
# IDs: seconds on a loaded machine.)
my $alert = q{
	SELECT sequence, failover_pending, lead > interval '30 s'
	  FROM shardid.generators
	 WHERE failover_pending OR lead > current_setting('shardid.max_drift', true)::interval};
start_faked($standby1);
is($standby1->safe_psql('postgres', 'SELECT sequence, failover_pending IS NULL FROM shardid.generators'),
	's|t', 'case 1: failover_pending is NULL on a standby');
promote($standby1);
$standby1->stop('immediate');
start_faked($standby1);
is($standby1->safe_psql('postgres', 'SELECT sequence, failover_pending FROM shardid.generators'),
	's|t', 'case 1: promoted, before its first ID: failover_pending is true');
is($standby1->safe_psql('postgres', $alert), 's|t|f', 'case 1: the alert lists the generator, its move to come');
my $clock_before = $standby1->safe_psql('postgres', 'SELECT extract(epoch FROM clock_timestamp())');
my @s1 = issue($standby1, 'standby1 promoted', 20000);
is($standby1->safe_psql('postgres', 'SELECT sequence, failover_pending FROM shardid.generators'),
	's|f', 'case 1: after its first ID: failover_pending is false');
is($standby1->safe_psql('postgres', $alert), 's|f|t', 'case 1: the alert lists the generator, moved over 30 s ahead');
disjoint('case 1 (standby stopped, clock 30 s behind, crash after promotion)', \@p1, \@s1);
is(common(\@old, \@s1), 0, 'case 1: none of them is one of the primary\'s IDs');
my $lead = $standby1->safe_psql('postgres', qq{
	SELECT extract(epoch FROM shardid.id_time(min(id))) - $clock_before
	FROM t WHERE tag = 'standby1 promoted'});
note("case 1: the first ID after the promotion is ${lead}s ahead of the clock read just before it");
# The move is max_clock_skew + max_drift (62 s) past the later of the clock
# and the replayed state, which ran up to 30 s ahead of this clock. The
# lead is measured from the clock read just before the first ID, not from
# one that ran on while the 20,000 IDs were issued (13 s under load).
cmp_ok($lead, '>', 55, "case 1: the generator moved max_clock_skew + max_drift ahead (${lead}s)");
cmp_ok($lead, '<', 93, "case 1: and no further than that past the replayed state (${lead}s)");

# A crash right after the first IDs' commit: the move is not made twice,
# and nothing issued is issued again.
$standby1->stop('immediate');
start_faked($standby1);
my @s1b = issue($standby1, 'standby1 restarted', 1000);
disjoint('case 1 after a crash', [ @old, @s1 ], \@s1b);
cmp_ok(min_of(@s1b), '<', max_of(@s1) + (100 << 17), 'case 1 after a crash: no second move (within 100 ms)');

# Case 3: a standby of the promoted standby2, 30 s behind it, cut off;
# standby2 goes on, is fenced, and the standby is promoted in turn.
$standby2->safe_psql('postgres', "ALTER SYSTEM RESET primary_conninfo; SELECT pg_reload_conf()");
$standby2->backup('b2');
my $standby3 = PostgreSQL::Test::Cluster->new('standby3');
$standby3->init_from_backup($standby2, 'b2', has_streaming => 1);
$standby3->append_conf('postgresql.conf', "shardid.max_clock_skew = 60s\n");
set_offset($standby3, '-30');
start_faked($standby3);
issue($standby2, 'standby2 streamed', 1000);
$standby2->wait_for_catchup($standby3);
$standby3->stop;
my @s2b = issue($standby2, 'standby2 after standby3 cut', 20000);
$standby2->stop('immediate');
start_faked($standby3);
promote($standby3);
my @s3 = issue($standby3, 'standby3 promoted', 20000);
disjoint('case 3 (second promotion, clock 30 s behind)', [ @s2, @s2b ], \@s3);
is(common(\@old, \@s3), 0, 'case 3: none of them is one of the first primary\'s IDs');

# Case 4: a point-in-time restore to before the primary's last IDs, 30 s
# behind, used as the new primary. On the backup's own timeline, which the
# restore point is on ('current', not the default 'latest', which would
# follow a history file another timeline left in the archive). The
# restore itself runs on the machine's clock, for the reason start_faked()
# archives nothing: its restore_command (cp) once hung for 7 minutes under
# libfaketime (19, under load); the server then starts again 30 s behind,
# before it issues IDs, which is what the case is about.
my $pitr = PostgreSQL::Test::Cluster->new('pitr');
$pitr->init_from_backup($primary, 'b', has_restoring => 1, standby => 0);
$pitr->append_conf('postgresql.conf', qq{
recovery_target_name = 'before_last'
recovery_target_action = 'promote'
recovery_target_timeline = 'current'
});
$pitr->start;
$pitr->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the restore did not end';
$pitr->stop;
set_offset($pitr, '-30');
start_faked($pitr);
is($pitr->safe_psql('postgres', "SELECT count(*) FROM t WHERE tag = 'burst'"), 0,
	'case 4: the restore stopped before the burst');
my @s4 = issue($pitr, 'restored', 20000);
disjoint('case 4 (point-in-time restore, clock 30 s behind)', \@old, \@s4);

$_->stop for ($standby1, $standby3, $pitr);

# Case 5, moves and upgrades (no new timeline): rows that arrive without
# their generator, on a server whose clock is 30 s behind the source's.
# The source (the machine's clock) issues 20,000 IDs on two generators;
# the target gets the rows by COPY, then raises one generator with
# sync_generators() (after a logical-replication upgrade or a data
# restore) and the other with the raise of a move's cut-over,
# _move_raise_generators() with the state the frozen source reports (its
# last_value). A generator left as it was would issue IDs 30 s below the
# source's. A full move (router, two nodes, logical replication:
# move_online.pl) makes this same call in its cut-over (_move_cutover()).
my $source = PostgreSQL::Test::Cluster->new('source');
$source->init;
$source->start;
my $target = PostgreSQL::Test::Cluster->new('target');
$target->init;
set_offset($target, '-30');
start_faked($target);
for my $node ($source, $target)
{
	$node->safe_psql('postgres', q{
CREATE EXTENSION shardid;
SELECT shardid.configure('2011-08-24 21:07:01.721+00', 13, 4);
CREATE SEQUENCE s;
CREATE TABLE t (id bigint DEFAULT shardid.next_id(3, 's') PRIMARY KEY, tag text NOT NULL);
CREATE SEQUENCE m;
CREATE TABLE u (id bigint DEFAULT shardid.next_id(4, 'm') PRIMARY KEY, tag text NOT NULL);
});
}
my @src_t = issue($source, 'source', 20000);
my @src_u = split /\n/, $source->safe_psql('postgres',
	"INSERT INTO u (tag) SELECT 'source' FROM generate_series(1, 20000) RETURNING id");
for my $table (qw(t u))
{
	my ($copy) = $source->safe_psql('postgres', "COPY $table TO STDOUT");
	$target->safe_psql('postgres', "COPY $table FROM STDIN;\n$copy\n\\.\n");
}
is($target->safe_psql('postgres', 'SELECT (SELECT count(*) FROM t) + (SELECT count(*) FROM u)'), 40000,
	'case 5: the target holds the source\'s 40,000 rows');
my $frozen = $source->safe_psql('postgres', 'SELECT last_value FROM m');
is($target->safe_psql('postgres',
		"SELECT shardid_internal._move_raise_generators('public', jsonb_build_object('m', $frozen))"),
	1, "case 5: the move's raise sets the generator of u to the source's state");
is($target->safe_psql('postgres',
		"SELECT string_agg(generator || ' ' || action, ', ') FROM shardid.sync_generators()"),
	's raised', 'case 5: sync_generators() raises the generator of t (u\'s is above its rows already)');
# The target's clock is behind the source's last ID by its 30 s offset less
# the time since that ID was issued, which the source measures right after
# (a loaded machine takes seconds to copy the rows; that is no offset).
my $last_id_age = q{SELECT extract(epoch FROM clock_timestamp() - shardid.id_time(max(id))) FROM t};
my $behind = $target->safe_psql('postgres', $last_id_age);
my $since = $source->safe_psql('postgres', $last_id_age);
cmp_ok($behind, '<', 0, "case 5: the target's clock is behind the source's last ID (${behind}s)");
cmp_ok($behind - $since, '<', -25,
	"case 5: the target's clock is about 30 s behind the source's (${behind}s - ${since}s)");
my @tgt_t = issue($target, 'target', 20000);
disjoint('case 5 (sync_generators(), clock 30 s behind the source)', \@src_t, \@tgt_t);
my @tgt_u = split /\n/, $target->safe_psql('postgres',
	"INSERT INTO u (tag) SELECT 'target' FROM generate_series(1, 20000) RETURNING id");
disjoint("case 5 (a move's raise, clock 30 s behind the source)", \@src_u, \@tgt_u);

$_->stop for ($source, $target);
done_testing();
