# A point-in-time restore with pgBackRest, the backup tool users run
# (docs/high-availability.md): a stanza on a node (its repository in a
# private directory, archive_command through pgbackrest archive-push), a
# full backup, IDs issued and committed, the restore target's time, then
# a burst of IDs the restore loses; pgbackrest restore --type=time to
# before the burst, promoted: the restored node has the IDs before the
# target and none of the burst, and issues none of the IDs the lost
# timeline issued (the generator's failover move, logged by its
# schema-qualified name). failover.pl does the same with PostgreSQL's own
# archive. Skipped where pgbackrest is not installed (lib/deps.sh installs
# Debian's).
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use ShardidTest;
use Test::More;
use IPC::Run;
use Time::HiRes qw(time usleep);

plan skip_all => 'pgbackrest is not installed (Debian package pgbackrest, lib/deps.sh)'
  unless grep { -x "$_/pgbackrest" } split /:/, $ENV{PATH};

my $t0 = time;
my $node = PostgreSQL::Test::Cluster->new('backed_up');
$node->init(allows_streaming => 1);
my $dir = PostgreSQL::Test::Utils::tempdir();
my $conf = "$dir/pgbackrest.conf";
my $pgdata = $node->data_dir;
my $sock = $node->host;
my $port = $node->port;
open my $f, '>', $conf or die "$conf: $!";
print $f <<"CONF";
[global]
repo1-path=$dir/repo
repo1-retention-full=1
log-path=$dir/log
lock-path=$dir/lock
spool-path=$dir/spool
log-level-console=warn
log-level-file=info
start-fast=y
compress-type=none

[node]
pg1-path=$pgdata
pg1-port=$port
pg1-socket-path=$sock
CONF
close $f;
$node->append_conf('postgresql.conf', qq{
archive_mode = on
archive_command = 'pgbackrest --config=$conf --stanza=node archive-push %p'
log_statement = none
});
$node->start;

# pgbackrest(ARGS) — runs it on the stanza; its output, or dies.
sub pgbackrest
{
	my (@args) = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run([ 'pgbackrest', "--config=$conf", '--stanza=node', @args ], '<', \undef, '>', \$out, '2>', \$err)
	  or die "pgbackrest @args failed: $out$err";
	return $out;
}

$node->safe_psql('postgres', q{
CREATE EXTENSION shardid;
CREATE SEQUENCE s;
CREATE TABLE t (id bigint PRIMARY KEY DEFAULT shardid.next_id(1, 's'), tag text NOT NULL);
});
pgbackrest('stanza-create');
pgbackrest('check');
pgbackrest('--type=full', 'backup');
my ($set) = pgbackrest('info') =~ /full backup: (\S+)/;
ok(defined $set, 'a full backup of the stanza');

# IDs committed before the target, then the target's time on the server's
# clock, then a burst the restore loses (it runs the generator ahead of
# the clock: a generator without the failover move would issue its IDs
# again)
$node->safe_psql('postgres', q{INSERT INTO t (tag) SELECT 'kept' FROM generate_series(1, 1000)});
my $target = $node->safe_psql('postgres', q{SELECT clock_timestamp()});
usleep(200_000);
$node->safe_psql('postgres', q{INSERT INTO t (tag) SELECT 'lost' FROM generate_series(1, 50000)});
my @lost = split /\n/, $node->safe_psql('postgres', q{SELECT id FROM t WHERE tag = 'lost' ORDER BY id});
my $seg = $node->safe_psql('postgres', q{SELECT pg_walfile_name(pg_switch_wal())});
$node->poll_query_until('postgres', "SELECT last_archived_wal >= '$seg' FROM pg_stat_archiver")
  or die 'the WAL was not archived';
$node->stop('immediate');

# restore to the target, promoted at its end: a new timeline. From the
# backup by its label: pgBackRest 2.5x picks a set by its stop time in
# whole seconds, and finds none when the target falls in the second the
# backup stopped in
pgbackrest('--delta', "--set=$set", '--type=time', "--target=$target", '--target-action=promote', 'restore');
$node->start;
$node->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'the restored node was not promoted';
is($node->safe_psql('postgres', q{SELECT tag, count(*) FROM t GROUP BY tag ORDER BY tag}), 'kept|1000',
	'restored to the target: the IDs committed before it, none of the burst after it');
my $clock = $node->safe_psql('postgres', q{SELECT extract(epoch FROM clock_timestamp())});
$node->safe_psql('postgres', q{INSERT INTO t (tag) SELECT 'after' FROM generate_series(1, 50000)});
# the generator moved past anything the lost timeline could have reached
# (max_clock_skew + max_drift, 62 s by default, ahead of the clock): a
# generator without that move would carry on at the clock, and issue again
# any ID the old timeline had issued ahead of it
my $lead = $node->safe_psql('postgres', qq{SELECT extract(epoch FROM shardid.id_time(min(id))) - $clock FROM t WHERE tag = 'after'});
cmp_ok($lead, '>', 55, "the restored node's first ID is max_clock_skew + max_drift ahead of its clock (${lead}s)");
my %after = map { $_ => 1 } split /\n/, $node->safe_psql('postgres', q{SELECT id FROM t WHERE tag = 'after'});
is(scalar(grep { $after{$_} } @lost), 0, 'the restored node issues none of the IDs the lost timeline issued');
ok($node->safe_psql('postgres', qq{SELECT min(id) > $lost[-1] FROM t WHERE tag = 'after'}) eq 't',
	'its first ID is past the last the lost timeline issued');
like(slurp_file($node->logfile), qr/shardid: generator "public\.s" moved past the previous timeline's IDs/,
	'the log names the generator moved by its schema-qualified name');
note(sprintf('pgbackrest.pl: %.1f s', time - $t0));
done_testing();
