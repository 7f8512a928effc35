# sequence_replication.pl — PostgreSQL 19's logical replication of sequences
# (CREATE PUBLICATION ... FOR ALL TABLES, ALL SEQUENCES) never reaches a
# generator that issues IDs, and cannot unfreeze the layout.
#
# Database "app": the publisher issues IDs (one generator an hour ahead of
# the clock); a subscriber configured with the same layout copies tables,
# shardid's own configuration tables and every sequence. There, next_id() on
# a synchronised generator fails with 55000, naming the sequence and the
# subscription; configure() is refused. After the cut-over, DROP
# SUBSCRIPTION and sync_generators(), new IDs are above every copied one.
#
# Database "local": the subscriber issued IDs before it subscribed to a
# publisher that never issued any. The copy resets its marker
# shardid.ids_issued and its generator to "never called", yet configure()
# is refused, before and after the subscription is dropped; then
# sync_generators() raises the generator above the subscriber's own IDs.
#
# Before 19 there is no sequence replication: the test is skipped.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# ShardidTest points Cluster.pm at PGXS's pg_regress; nothing is imported.
use FindBin;
use lib $FindBin::RealBin;
use ShardidTest ();

my $publisher = PostgreSQL::Test::Cluster->new('publisher');
plan skip_all => 'PostgreSQL ' . $publisher->pg_version
  . ' has no logical replication of sequences (FOR ALL SEQUENCES is 19\'s)'
  if $publisher->pg_version->major < 19;

$publisher->init(allows_streaming => 'logical');
$publisher->start;
my $subscriber = PostgreSQL::Test::Cluster->new('subscriber');
$subscriber->init;
$subscriber->start;

my $layout = q{SELECT shardid.configure('2020-01-01+00', 12, 11)};

# The schema of a publisher's database on the subscriber: what a
# schema-only dump carries (CREATE EXTENSION, schemas, tables, DEFAULTs).
sub copy_schema
{
	my ($db) = @_;
	my ($stdout, $stderr);
	$subscriber->safe_psql('postgres', "CREATE DATABASE $db");
	PostgreSQL::Test::Utils::run_log(
		[ 'pg_dump', '--schema-only', '--no-publications', '--no-subscriptions',
			'-d', $publisher->connstr($db) ],
		'>', \$stdout, '2>', \$stderr)
	  or die "pg_dump failed: $stderr";
	$subscriber->safe_psql($db, $stdout);
}

# Runs SQL that must fail; returns its error text (VERBOSITY verbose).
sub error_of
{
	my ($node, $db, $sql) = @_;
	my ($ret, $out, $err) = $node->psql($db, "\\set VERBOSITY verbose\n$sql");
	isnt($ret, 0, "fails: $sql");
	return $err;
}

# --- app: the publisher issues IDs ----------------------------------------------
$publisher->safe_psql('postgres', 'CREATE DATABASE app');
$publisher->safe_psql('app', qq{
CREATE EXTENSION shardid;
$layout;
SELECT shardid.create_shards(0, 1);
CREATE TABLE public.photos (id bigint PRIMARY KEY, caption text);
SELECT shardid.create_table('public.photos');
-- shard 1's generator an hour ahead of the clock (a burst, a fast clock)
SELECT setval('shard_0001.id_seq',
              ((extract(epoch FROM now() + interval '1 hour') * 1000)::bigint - 1577836800000) << 11);
INSERT INTO shard_0000.photos (caption) SELECT 'before' FROM generate_series(1, 500);
INSERT INTO shard_0001.photos (caption) SELECT 'before' FROM generate_series(1, 500);
CREATE PUBLICATION everything FOR ALL TABLES, ALL SEQUENCES;
});

copy_schema('app');
# the layout first, so the copy of layout_config is the row already there
$subscriber->safe_psql('app', $layout);
$subscriber->safe_psql('app',
	"CREATE SUBSCRIPTION everything CONNECTION '" . $publisher->connstr
	  . " dbname=app' PUBLICATION everything");
$subscriber->wait_for_subscription_sync($publisher, 'everything', 'app');
is( $subscriber->safe_psql('app', q{SELECT last_value || '|' || is_called FROM shard_0001.id_seq}),
	$publisher->safe_psql('app', q{SELECT last_value || '|' || is_called FROM shard_0001.id_seq}),
	'app: the generator holds the publisher\'s state');
$publisher->safe_psql('app',
	q{INSERT INTO shard_0001.photos (caption) SELECT 'streamed' FROM generate_series(1, 100)});
$publisher->wait_for_catchup('everything');

is( $subscriber->safe_psql('app', q{
	SELECT (SELECT count(*) FROM shard_0000.photos) || '|' || (SELECT count(*) FROM shard_0001.photos)
	       || '|' || (SELECT count(*) FROM shardid.layout_config)
	       || '|' || (SELECT count(*) FROM pg_subscription_rel AS r JOIN pg_class AS c ON c.oid = r.srrelid
	                   WHERE c.relkind = 'S' AND r.srsubstate = 'r'
	                     AND c.oid IN ('shardid.ids_issued'::regclass, 'shard_0000.id_seq'::regclass,
	                                   'shard_0001.id_seq'::regclass))}),
	'500|600|1|3',
	'app: rows copied and streamed, the layout row kept once, the marker and both generators synchronised');

my $err = error_of($subscriber, 'app',
	q{INSERT INTO shard_0001.photos (caption) VALUES ('on the subscriber')});
like($err, qr/ERROR:  55000: sequence shard_0001\.id_seq is synchronized by logical replication/,
	'app: next_id() on a synchronised generator fails with 55000, naming the sequence');
like($err, qr/HINT:  Drop subscription "everything", or remove the sequence from its publication .* then run shardid\.sync_generators\(\)\./,
	'app: the hint names the subscription and sync_generators()');
$err = error_of($subscriber, 'app', q{SELECT shardid.next_id(0, 'shard_0000.id_seq'::regclass)});
like($err, qr/ERROR:  55000: sequence shard_0000\.id_seq is synchronized/,
	'app: a direct next_id() call fails the same way');
$err = error_of($subscriber, 'app', q{SELECT shardid.configure('2021-01-01+00')});
like($err, qr/ERROR:  55000: the layout cannot change: IDs have already been issued/,
	'app: configure() is refused on the subscriber');

# Cut-over: the publisher stops writing, the subscriber catches up and takes
# the sequences' last states, drops the subscription and raises generators.
$publisher->safe_psql('app',
	q{INSERT INTO shard_0000.photos (caption) SELECT 'last' FROM generate_series(1, 50)});
$publisher->wait_for_catchup('everything');
$subscriber->safe_psql('app', 'ALTER SUBSCRIPTION everything REFRESH SEQUENCES');
$subscriber->wait_for_subscription_sync(undef, undef, 'app');
$subscriber->safe_psql('app', 'DROP SUBSCRIPTION everything');
is($subscriber->safe_psql('app', 'SELECT count(*) FROM shardid.sync_generators()'), '0',
	'app: after REFRESH SEQUENCES and DROP SUBSCRIPTION, sync_generators() finds every generator above its rows');
$subscriber->safe_psql('app', q{
	INSERT INTO shard_0000.photos (caption) SELECT 'after' FROM generate_series(1, 100);
	INSERT INTO shard_0001.photos (caption) SELECT 'after' FROM generate_series(1, 100);});
for my $s (0, 1)
{
	is( $subscriber->safe_psql('app', qq{
		SELECT (SELECT min(id) FROM shard_000$s.photos WHERE caption = 'after')
		       > (SELECT max(id) FROM shard_000$s.photos WHERE caption <> 'after')
		   AND (SELECT bool_and(shardid.id_shard(id) = $s) FROM shard_000$s.photos)
		   AND (SELECT count(*) FROM shard_000$s.photos WHERE caption = 'after') = 100}),
		't', "app: shard $s issues above every copied ID after the cut-over");
}
ok( $subscriber->safe_psql('app', q{
	SELECT min(shardid.id_time(id)) > now() + interval '50 minutes'
	  FROM shard_0001.photos WHERE caption = 'after'}) eq 't',
	'app: shard 1 continues from the publisher\'s state, an hour ahead');

# --- local: the subscriber's marker is reset by replication ---------------------
$publisher->safe_psql('postgres', 'CREATE DATABASE local');
$publisher->safe_psql('local', qq{
CREATE EXTENSION shardid;
$layout;
CREATE SEQUENCE public.g AS bigint;
CREATE TABLE public.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(3, 'public.g'::regclass), who text);
CREATE PUBLICATION everything_local FOR ALL TABLES, ALL SEQUENCES;
});
copy_schema('local');
$subscriber->safe_psql('local', qq{
$layout;
INSERT INTO public.t (who) SELECT 'subscriber' FROM generate_series(1, 1000);
});
my $local_max = $subscriber->safe_psql('local', 'SELECT max(id) FROM public.t');
$subscriber->safe_psql('local',
	"CREATE SUBSCRIPTION everything_local CONNECTION '" . $publisher->connstr
	  . " dbname=local' PUBLICATION everything_local");
$subscriber->wait_for_subscription_sync($publisher, 'everything_local', 'local');

is( $subscriber->safe_psql('local', q{
	SELECT (SELECT is_called FROM shardid.ids_issued) || '|' || (SELECT is_called FROM public.g)
	       || '|' || (SELECT count(*) FROM public.t)}),
	'false|false|1000',
	'local: replication reset the marker and the generator to "never called"');
$err = error_of($subscriber, 'local', q{SELECT shardid.configure('2021-01-01+00')});
like($err, qr/ERROR:  55000: the layout cannot change: IDs have already been issued\nDETAIL:  .*shardid\.layout_freeze records it/,
	'local: configure() is still refused (the freeze record)');
$err = error_of($subscriber, 'local', q{UPDATE shardid.layout_config SET seq_bits = 10});
like($err, qr/ERROR:  55000: the layout cannot change/, 'local: so is a write to layout_config');
$err = error_of($subscriber, 'local', q{INSERT INTO public.t (who) VALUES ('subscriber')});
like($err, qr/ERROR:  55000: sequence public\.g is synchronized .*\n.*\nHINT:  Drop subscription "everything_local"/,
	'local: next_id() refuses the reset generator');

$subscriber->safe_psql('local', 'DROP SUBSCRIPTION everything_local');
$err = error_of($subscriber, 'local', q{SELECT shardid.configure('2021-01-01+00')});
like($err, qr/ERROR:  55000: the layout cannot change/,
	'local: configure() is refused after DROP SUBSCRIPTION, before sync_generators()');
is($subscriber->safe_psql('local', q{SELECT string_agg(action || ' ' || generator::text, ',') FROM shardid.sync_generators()}),
	'raised g',
	'local: sync_generators() raises the reset generator');
my $new_min = $subscriber->safe_psql('local',
	q{WITH ins AS (INSERT INTO public.t (who) SELECT 'after' FROM generate_series(1, 100) RETURNING id)
	  SELECT min(id) FROM ins});
ok($subscriber->safe_psql('local', "SELECT ${new_min}::bigint > ${local_max}::bigint") eq 't',
	"local: new IDs (from $new_min) are above the subscriber's own ($local_max)");

$subscriber->stop;
$publisher->stop;
done_testing();
