# epoch_end.pl — the edges of a layout's time window fail cleanly.
#
# A layout with 27 shard bits and 1 seq bit has 35 time bits (2^35 ms,
# about 397 days); configuring its epoch 2^35 ms before now puts its end a
# few seconds ahead. Three databases:
#
#  - endsoon: the end is 30 s away (far more than a loaded machine takes
#    between the configure() and the burst). With a large drift cap a
#    burst borrows milliseconds up to the end: every ID is positive and
#    rising, the last one is exactly the last representable ID (for the
#    top shard that is 9223372036854775807), and the next call fails with
#    SQLSTATE 22008 and a message naming the end — never a wrapped or
#    negative ID.
#  - ended: the end passed a minute ago; the first call fails the same way
#    and leaves the sequence untouched.
#  - future: the epoch is tomorrow; next_id() fails with 22008 (the clock
#    is before the epoch).
use strict;
use warnings;

use JSON::PP qw(decode_json);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# ShardidTest points Cluster.pm at PGXS's pg_regress; nothing is imported.
use FindBin;
use lib $FindBin::RealBin;
use ShardidTest ();

my $node = PostgreSQL::Test::Cluster->new('epoch_end');
$node->init;
$node->append_conf('postgresql.conf', "log_statement = none\n");
$node->start;

# Runs a one-row query in $db and returns the row as a hash.
sub row
{
	my ($db, $sql) = @_;
	return decode_json($node->safe_psql($db, "SELECT row_to_json(q) FROM ($sql) AS q"));
}

# Runs SQL expected to fail; returns psql's stderr (verbose: with SQLSTATE).
sub error_of
{
	my ($db, $sql) = @_;
	my ($ret, $out, $err) = $node->psql($db, "\\set VERBOSITY verbose\n$sql");
	return $ret == 0 ? "(no error; output: $out)" : $err;
}

# A database with the extension, a layout of 27 shard bits and 1 seq bit
# whose epoch is the SQL expression $epoch_sql, a sequence s and a table.
sub create_db
{
	my ($db, $epoch_sql) = @_;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, qq{
		CREATE EXTENSION shardid;
		SELECT shardid.configure($epoch_sql, 27, 1);
		CREATE SEQUENCE s;
		CREATE TABLE ids (ord serial PRIMARY KEY, id bigint NOT NULL);
	});
}

my $span = "interval '1 millisecond' * 34359738368";	# 2^35 ms

# --- endsoon
create_db('endsoon', "now() - $span + interval '30 seconds'");
my $layout = row('endsoon', q{
	SELECT time_bits, max_shard, ids_per_ms, last_time::text AS last_time,
	       extract(epoch FROM last_time - now()) AS ends_in
	FROM shardid.layout()});
is($layout->{time_bits}, 35, 'endsoon: 35 time bits');
is($layout->{max_shard}, 134217727, 'endsoon: 27 shard bits');
is($layout->{ids_per_ms}, 2, 'endsoon: 1 seq bit, 2 IDs per ms');
ok($layout->{ends_in} > 5 && $layout->{ends_in} <= 30,
	"endsoon: the layout ends in $layout->{ends_in}s, at $layout->{last_time}");

# Issue until the generator fails, keeping every ID and the error.
$node->safe_psql('endsoon', q{
CREATE TABLE failure (sqlstate text, message text);
SET shardid.max_drift = '1h';
DO $$
BEGIN
	FOR i IN 1 .. 100000 LOOP
		BEGIN
			INSERT INTO ids (id) VALUES (shardid.next_id(134217727, 's'));
		EXCEPTION WHEN OTHERS THEN
			INSERT INTO failure VALUES (sqlstate, sqlerrm);
			RETURN;
		END;
	END LOOP;
END $$;
});
my $burst = row('endsoon', q{
	SELECT count(*) AS ids,
	       count(*) FILTER (WHERE id <= 0) AS not_positive,
	       count(*) FILTER (WHERE id <= prev) AS out_of_order,
	       max(id)::text AS max_id,
	       max(id) = shardid.make_id((SELECT last_time FROM shardid.layout()), 134217727, 1) AS last_representable,
	       (SELECT sqlstate FROM failure) AS sqlstate,
	       (SELECT message FROM failure) AS message,
	       (SELECT count(*) FROM failure) AS failures
	FROM (SELECT id, lag(id) OVER (ORDER BY ord) AS prev FROM ids) AS x});
note("endsoon: $burst->{ids} IDs before: $burst->{message}");
cmp_ok($burst->{ids}, '>=', 10_000, 'endsoon: the burst issued IDs up to the end');
is($burst->{not_positive}, 0, 'endsoon: every ID is positive');
is($burst->{out_of_order}, 0, 'endsoon: IDs strictly increasing');
ok($burst->{last_representable}, 'endsoon: the last ID is the last representable one of its shard');
is($burst->{max_id}, '9223372036854775807', 'endsoon: the last ID of the top shard is the largest bigint');
is($burst->{failures}, 1, 'endsoon: then the generator failed');
is($burst->{sqlstate}, '22008', 'endsoon: with SQLSTATE 22008');
is($burst->{message}, qq{generator "s" has run out of time: the layout ends at $layout->{last_time}},
	'endsoon: the message names the generator and the end of the layout');

my $err = error_of('endsoon', q{SELECT shardid.next_id(0, 's')});
like($err, qr/ERROR:\s+22008: generator "s" has run out of time: the layout ends at \Q$layout->{last_time}\E/,
	'endsoon: the next call fails the same way');
like($err, qr/DETAIL:\s+With 35 time bits no later ID can be represented/, 'endsoon: the detail names the time bits');
like($err, qr/HINT:\s+A new layout/, 'endsoon: the hint says what to do');

# --- ended
create_db('ended', "now() - $span - interval '1 minute'");
$err = error_of('ended', q{SELECT shardid.next_id(0, 's')});
my $ended = row('ended', q{SELECT last_time::text AS last_time, (SELECT is_called FROM s) AS called FROM shardid.layout()});
like($err, qr/ERROR:\s+22008: generator "s" has run out of time: the layout ends at \Q$ended->{last_time}\E/,
	'ended: next_id() fails with 22008, naming the end');
ok(!$ended->{called}, 'ended: the sequence was not advanced');

# --- future
create_db('future', "now() + interval '1 day'");
$err = error_of('future', q{SELECT shardid.next_id(0, 's')});
my $epoch = $node->safe_psql('future', 'SELECT epoch FROM shardid.layout()');
like($err, qr/ERROR:\s+22008: the clock reads .*, before the layout's epoch/,
	'future: next_id() fails with 22008 before the epoch');
like($err, qr/DETAIL:\s+IDs start at \Q$epoch\E/, 'future: the detail names the epoch');

$node->stop;
done_testing();
