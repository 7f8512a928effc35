# standby.pl — next_id() on a streaming standby, and after its promotion.
#
# A hot standby refuses next_id() (SQLSTATE 25006, "during recovery"), as a
# read-only transaction on the primary does, while the decoders work there.
# The generator's state reaches the standby through the WAL records that
# log it ahead, so after the primary stops and the standby is promoted, new
# IDs are above everything the old primary committed (and 62 s past its
# state: the failover move of failover.pl). The primary's
# generator is set an hour ahead of the clock first, so the clock cannot
# hide a state the standby failed to receive.
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

# Runs a one-row query and returns the row as a hash of column => value.
sub row
{
	my ($node, $sql) = @_;
	return decode_json($node->safe_psql('postgres', "SELECT row_to_json(q) FROM ($sql) AS q"));
}

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', "log_statement = none\n");
$primary->start;
$primary->safe_psql('postgres', q{
CREATE EXTENSION shardid;
CREATE SEQUENCE s;
CREATE TABLE t (id bigint DEFAULT shardid.next_id(7, 's') PRIMARY KEY, tag text NOT NULL);
INSERT INTO t (tag) SELECT 'before backup' FROM generate_series(1, 1000);
});

$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->start;

$primary->safe_psql('postgres', q{INSERT INTO t (tag) SELECT 'streamed' FROM generate_series(1, 1000)});
$primary->wait_for_catchup($standby);

# The standby refuses next_id(), with the SQLSTATE.
my ($ret, $out, $err) = $standby->psql('postgres', "\\set VERBOSITY verbose\nSELECT shardid.next_id(7, 's')");
isnt($ret, 0, 'standby: next_id() fails');
like($err, qr/ERROR:\s+25006: .*recovery/, 'standby: next_id() fails with SQLSTATE 25006, naming recovery');
note("standby error: $err");

# So does a read-only transaction on the primary.
($ret, $out, $err) = $primary->psql('postgres',
	"\\set VERBOSITY verbose\nBEGIN READ ONLY;\nSELECT shardid.next_id(7, 's');");
like($err, qr/ERROR:\s+25006: .*read-only transaction/,
	'primary: next_id() in a read-only transaction fails with SQLSTATE 25006');

# The decoders work on the standby, and agree with the primary.
my $decode = q{
	SELECT count(*) AS ids,
	       bool_and(shardid.id_shard(id) = 7) AS shard_7,
	       bool_and((shardid.id_decode(id)).ts = shardid.id_time(id)
	                AND (shardid.id_decode(id)).seq = shardid.id_seq(id)) AS decode_agrees,
	       bool_and(shardid.from_shortcode(shardid.to_shortcode(id)) = id) AS shortcodes_round_trip,
	       bool_and(shardid.make_id(shardid.id_time(id), 7, shardid.id_seq(id)) = id) AS make_id_rebuilds,
	       bool_and(id >= shardid.time_to_id(shardid.id_time(id))) AS time_to_id_below,
	       md5(string_agg(shardid.to_shortcode(id) || shardid.id_time(id)::text, ',' ORDER BY id)) AS digest
	FROM t};
my $on_standby = row($standby, $decode);
my $on_primary = row($primary, $decode);
is($on_standby->{ids}, 2000, 'standby: the streamed rows are there');
ok($on_standby->{shard_7}, 'standby: id_shard() decodes the shard');
ok($on_standby->{decode_agrees}, 'standby: id_decode() agrees with id_time() and id_seq()');
ok($on_standby->{shortcodes_round_trip}, 'standby: short codes round-trip');
ok($on_standby->{make_id_rebuilds}, 'standby: make_id() rebuilds every ID');
ok($on_standby->{time_to_id_below}, 'standby: time_to_id() is at or below every ID of its millisecond');
is($on_standby->{digest}, $on_primary->{digest}, 'standby: decoded values equal the primary\'s');
is($standby->safe_psql('postgres', 'SELECT shard_bits, seq_bits, in_use FROM shardid.layout()'),
	'13|10|t', 'standby: layout() reports the layout and that IDs are in use');

# The primary's generator an hour ahead of the clock, then more rows.
$primary->safe_psql('postgres', q{
SELECT setval('s', ((extract(epoch FROM now() + interval '1 hour') * 1000)::bigint
                    - (extract(epoch FROM l.epoch) * 1000)::bigint) << l.seq_bits)
FROM shardid.layout() AS l;
INSERT INTO t (tag) SELECT 'ahead' FROM generate_series(1, 5000);
});
for my $i (1 .. 20)
{
	$primary->safe_psql('postgres', "INSERT INTO t (tag) VALUES ('ahead single $i')");
}
my $primary_max = $primary->safe_psql('postgres', 'SELECT max(id) FROM t');
ok(row($primary, q{SELECT shardid.id_time(max(id)) > now() + interval '59 minutes' AS ahead FROM t})->{ahead},
	'primary: the generator runs an hour ahead of the clock');
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', 'SELECT max(id) FROM t'), $primary_max,
	'standby: replayed up to the primary\'s largest ID');

# Fail over: stop the primary, promote the standby.
$primary->stop;
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the standby did not leave recovery';

($ret, $out, $err) = $standby->psql('postgres', q{
	WITH ins AS (INSERT INTO t (tag) SELECT 'promoted' FROM generate_series(1, 1000) RETURNING id)
	SELECT count(*), min(id) FROM ins});
is($ret, 0, 'promoted: next_id() works') or diag($err);
my ($count, $min_new) = split /\|/, $out;
is($count, 1000, 'promoted: 1000 new rows');
ok(row($standby, "SELECT ${min_new}::bigint > ${primary_max}::bigint AS above")->{above},
	"promoted: new IDs (from $min_new) are above everything the old primary committed ($primary_max)");
my $r = row($standby, qq{
	SELECT bool_and(shardid.id_shard(id) = 7) AS shard_7,
	       extract(epoch FROM min(shardid.id_time(id)) - shardid.id_time($primary_max)) AS lead
	FROM t WHERE tag = 'promoted'});
ok($r->{shard_7}, 'promoted: new IDs carry their shard');
# A new timeline moves the generator max_clock_skew + max_drift (62 s)
# past the replayed state (docs/guarantees.md).
ok($r->{lead} >= 62 && $r->{lead} < 67,
	"promoted: ID time continues 62 s past the old primary's state, an hour ahead (lead $r->{lead}s)");

$standby->stop;
done_testing();
