# clock.pl — the server's clock stepping back one hour keeps IDs increasing.
#
# The server runs under libfaketime (Debian package libfaketime, pulled in
# by faketime) with its offset in a file, reread on every clock read, so
# the test steps the server's wall clock while it runs. The generator keeps
# counting from its state when the clock is behind it: no error, no wait
# for the clock to catch up (only a burst beyond 1024 IDs per millisecond
# waits, so the lead does not grow), and the time part of new IDs continues
# from the time before the step. A restart while the
# clock is behind resumes from the recovered state; when the clock comes
# back, the generator follows it again.
use strict;
use warnings;

use File::Spec;
use JSON::PP qw(decode_json);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

# ShardidTest points Cluster.pm at PGXS's pg_regress; nothing is imported.
use FindBin;
use lib $FindBin::RealBin;
use ShardidTest ();

my $libfaketime = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
plan skip_all => "libfaketime not installed ($libfaketime)" unless -r $libfaketime;

my $node = PostgreSQL::Test::Cluster->new('clock');
$node->init;
$node->append_conf('postgresql.conf', "log_statement = none\n");
# Absolute: the server runs in its data directory, and basedir is relative
# on some majors (17).
my $offset_file = File::Spec->rel2abs($node->basedir . '/faketime.rc');

# Sets the server's clock offset, in libfaketime's syntax ("+0", "-3600").
sub set_offset
{
	my ($offset) = @_;
	PostgreSQL::Test::Utils::append_to_file("$offset_file.new", "$offset\n");
	rename("$offset_file.new", $offset_file) or die "cannot rename to $offset_file: $!";
}

# Starts the server under libfaketime; clients run without it.
sub start_faked
{
	local $ENV{LD_PRELOAD} = $libfaketime;
	local $ENV{FAKETIME_TIMESTAMP_FILE} = $offset_file;
	local $ENV{FAKETIME_NO_CACHE} = '1';
	local $ENV{FAKETIME_DONT_FAKE_MONOTONIC} = '1';
	local $ENV{NO_FAKE_STAT} = '1';
	delete local $ENV{FAKETIME};
	$node->start;
}

# Runs a one-row query and returns the row as a hash of column => value.
sub row
{
	my ($sql) = @_;
	return decode_json($node->safe_psql('postgres', "SELECT row_to_json(q) FROM ($sql) AS q"));
}

# Seconds the server's wall clock is ahead of the real one (negative: behind).
sub server_offset
{
	my $before = time();
	my $server = $node->safe_psql('postgres', 'SELECT extract(epoch FROM clock_timestamp())');
	return $server - ($before + time()) / 2;
}

# Inserts IDs for a phase: 20 single-row statements and one of 5000 rows,
# in one client; returns the real seconds it took.
sub issue
{
	my ($phase) = @_;
	my $sql = "INSERT INTO t (phase) VALUES ('$phase');\n" x 20
	  . "INSERT INTO t (phase) SELECT '$phase' FROM generate_series(1, 5000);\n";
	my $start = time();
	$node->safe_psql('postgres', $sql);
	return time() - $start;
}

# IDs of the whole table in insertion order: distinct and strictly rising?
sub check_order
{
	my ($label) = @_;
	my $r = row(q{
		SELECT count(*) AS ids, count(*) FILTER (WHERE id <= prev) AS out_of_order
		FROM (SELECT id, lag(id) OVER (ORDER BY ord) AS prev FROM t) AS x});
	is($r->{out_of_order}, 0, "$label: all $r->{ids} IDs strictly increasing in insertion order");
}

set_offset('+0');
start_faked();
my $offset = server_offset();
cmp_ok(abs($offset), '<', 5, "the server's clock starts right (offset ${offset}s)");

$node->safe_psql('postgres', q{
CREATE EXTENSION shardid;
CREATE SEQUENCE s;
CREATE TABLE t (ord bigserial PRIMARY KEY,
                id bigint NOT NULL UNIQUE DEFAULT shardid.next_id(1, 's'),
                phase text NOT NULL);
});

my $before_elapsed = issue('before');
my $r = row(q{
	SELECT bool_and(shardid.id_time(id) BETWEEN clock_timestamp() - interval '1 minute'
	                AND clock_timestamp() + interval '3 seconds') AS near_clock
	FROM t WHERE phase = 'before'});
ok($r->{near_clock}, 'before the step: ID times follow the clock');

# Step back one hour.
set_offset('-3600');
$offset = server_offset();
cmp_ok(abs($offset + 3600), '<', 5, "the server's clock stepped back one hour (offset ${offset}s)");

# No waiting for the clock: a generator that waited would take the hour
# the clock went back. The bound is the tests' timeout (180 s by default),
# far below the hour and far above what any load makes of 5020 inserts: a
# bound taken from the inserts before the step failed when the load rose
# between the two (TAP files run side by side on a shared machine).
my $bound = $PostgreSQL::Test::Utils::timeout_default;
my $elapsed = issue('stepped');
cmp_ok($elapsed, '<', $bound,
	"5020 IDs after the step took ${elapsed}s (${before_elapsed}s before it): no waiting for the clock");
check_order('after the step back');
$r = row(q{
	SELECT (SELECT min(id) FROM t WHERE phase = 'stepped') > (SELECT max(id) FROM t WHERE phase = 'before') AS above,
	       extract(epoch FROM (SELECT shardid.id_time(min(id)) FROM t WHERE phase = 'stepped')
	                        - (SELECT shardid.id_time(max(id)) FROM t WHERE phase = 'before')) AS gap,
	       (SELECT bool_and(shardid.id_time(id) > clock_timestamp() + interval '59 minutes')
	        FROM t WHERE phase = 'stepped') AS ahead_of_clock});
ok($r->{above}, 'after the step back: new IDs are above the ones before it');
ok($r->{gap} >= 0 && $r->{gap} < 1,
	"after the step back: ID time continues from before the step (gap $r->{gap}s)");
ok($r->{ahead_of_clock}, 'after the step back: ID times are an hour ahead of the stepped clock');

# A restart while the clock is behind: the recovered state still rules.
$node->stop('immediate');
start_faked();
$offset = server_offset();
cmp_ok(abs($offset + 3600), '<', 5, "after a crash restart the clock is still an hour behind (offset ${offset}s)");
$elapsed = issue('restarted');
cmp_ok($elapsed, '<', $bound, "5020 IDs after the restart took ${elapsed}s (${before_elapsed}s before the step)");
check_order('after the crash restart');
$r = row(q{
	SELECT (SELECT min(id) FROM t WHERE phase = 'restarted') > (SELECT max(id) FROM t WHERE phase <> 'restarted') AS above,
	       extract(epoch FROM (SELECT shardid.id_time(max(id)) FROM t)
	                        - (SELECT shardid.id_time(max(id)) FROM t WHERE phase = 'before')) AS lead});
ok($r->{above}, 'after the crash restart: new IDs are above all earlier ones');
ok($r->{lead} >= 0 && $r->{lead} < 5,
	"after the crash restart: ID time is still near the pre-step time (lead $r->{lead}s)");

# The clock comes back: the generator follows it again.
set_offset('+0');
$offset = server_offset();
cmp_ok(abs($offset), '<', 5, "the server's clock is back (offset ${offset}s)");
issue('back');
check_order('after the clock came back');
$r = row(q{
	SELECT (SELECT min(id) FROM t WHERE phase = 'back') > (SELECT max(id) FROM t WHERE phase <> 'back') AS above,
	       (SELECT bool_and(shardid.id_time(id) BETWEEN clock_timestamp() - interval '1 minute'
	                        AND clock_timestamp() + interval '3 seconds')
	        FROM t WHERE phase = 'back') AS near_clock});
ok($r->{above}, 'after the clock came back: new IDs are above all earlier ones');
ok($r->{near_clock}, 'after the clock came back: ID times follow the clock again');

$node->stop;
done_testing();
