# shard_dump_restore.pl — moves one logical shard between databases with
# pg_dump -n: the restored shard keeps generating IDs above its old ones,
# attach_shard() registers it, detach_shard() forgets it at the source.
# Then the whole database through pg_dump -Fc and pg_restore: the event
# trigger that keeps registered templates is an extension member, left out
# of the dump and brought back by CREATE EXTENSION.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use ShardidTest;
use Test::More;

my $node = data_node('shard_move', logical => 0, extension => 0);
$node->safe_psql('postgres', "CREATE DATABASE $_") for qw(source_db target_db);
$node->safe_psql('source_db', q{
CREATE EXTENSION shardid;
SELECT shardid.create_shards(4, 6);
CREATE TABLE public.photos (id bigint PRIMARY KEY, caption text);
SELECT shardid.create_table('public.photos');
INSERT INTO shard_0005.photos (caption) SELECT 'before ' || g FROM generate_series(1, 5000) g;
});
my $old_max = $node->safe_psql('source_db', 'SELECT max(id) FROM shard_0005.photos');
my $old_state = $node->safe_psql('source_db', 'SELECT last_value FROM shard_0005.id_seq');
note("source: 5000 rows, max id $old_max, generator state $old_state");

# The target already has the extension (and a shard of its own).
$node->safe_psql('target_db', q{
CREATE EXTENSION shardid;
SELECT shardid.create_shard(9);
CREATE TABLE public.photos (id bigint PRIMARY KEY, caption text);
SELECT shardid.create_table('public.photos');
});

my $tmp = PostgreSQL::Test::Utils::tempdir();
my $dump = "$tmp/shard_0005.sql";
$node->command_ok([ 'pg_dump', '-d', 'source_db', '-n', 'shard_0005', '-f', $dump ], 'pg_dump -n shard_0005');
like(slurp_file($dump), qr/\Qshardid.next_id(5, 'shard_0005.id_seq'::regclass)\E/, 'the dump holds the next_id DEFAULT');
$node->command_ok([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', 'target_db', '-f', $dump ],
	'the shard restores into target_db');

is($node->safe_psql('target_db', 'SELECT count(*) FROM shard_0005.photos'), '5000', 'restored 5000 rows');
is($node->safe_psql('target_db', 'SELECT last_value FROM shard_0005.id_seq'), $old_state, 'restored generator state');

# Register the restored schema, then write to it.
is($node->safe_psql('target_db', 'SELECT shardid.attach_shard(5)'), '0', 'attach_shard(5) creates no table');
is($node->safe_psql('target_db', 'SELECT shardid.shard_schema(5)'), 'shard_0005', 'shard_schema(5) after attach');
$node->safe_psql('target_db', "INSERT INTO shard_0005.photos (caption) SELECT 'after ' || g FROM generate_series(1, 5000) g");
is($node->safe_psql('target_db', qq{
SELECT count(*), min(id) > $old_max, bool_and(shardid.id_shard(id) = 5), count(DISTINCT id) = count(*)
  FROM shard_0005.photos WHERE caption LIKE 'after %'}),
	'5000|t|t|t', 'new IDs on the target (count|above old max|shard 5|unique)');
is($node->safe_psql('target_db', 'SELECT count(DISTINCT id) FROM shard_0005.photos'), '10000', '10000 distinct IDs in shard_0005');
is($node->safe_psql('target_db', "SELECT last_id > $old_max FROM shardid.shards WHERE shard = 5"), 't',
	'shardid.shards on the target: last_id above the old max');

# A table created later reaches the moved shard too.
$node->safe_psql('target_db', "CREATE TABLE public.tags (id bigint PRIMARY KEY, tag text); SELECT shardid.create_table('public.tags')");
is($node->safe_psql('target_db',
		"INSERT INTO shard_0005.tags (tag) VALUES ('x') RETURNING id > $old_max AND shardid.id_shard(id) = 5"),
	't', 'shard_0005.tags on the target: an ID above the old max, on shard 5');

# At the source, the shard is forgotten and dropped.
$node->safe_psql('source_db', 'SELECT shardid.detach_shard(5); DROP SCHEMA shard_0005 CASCADE');
is($node->safe_psql('source_db', "SELECT string_agg(shard::text, ',' ORDER BY shard) FROM shardid.shards"), '4,6',
	'the source lists shards 4,6');
note("shard 5 moved, 5000 rows kept, 5000 new IDs above $old_max");

# The whole database, dumped and restored into a new one: the event trigger
# that keeps registered templates (shardid_template_drop) is part of the
# extension, so the dump leaves it out and CREATE EXTENSION brings it back.
my $whole = "$tmp/source_db.dump";
$node->command_ok([ 'pg_dump', '-Fc', '-d', 'source_db', '-f', $whole ], 'pg_dump -Fc of source_db');
$node->command_ok([ 'pg_restore', '-f', "$tmp/source_db.sql", $whole ], 'pg_restore -f of the dump');
unlike(slurp_file("$tmp/source_db.sql"), qr/EVENT TRIGGER/, 'the dump holds no event trigger');
$node->safe_psql('postgres', 'CREATE DATABASE restored_db');
$node->command_ok([ 'pg_restore', '--exit-on-error', '-d', 'restored_db', $whole ], 'pg_restore into restored_db');
is($node->safe_psql('restored_db', "SELECT string_agg(table_name, ',') FROM shardid.sharded_tables"), 'photos',
	'restored_db: the registry of sharded tables is restored');
is($node->safe_psql('restored_db', 'SELECT evtname FROM pg_event_trigger'), 'shardid_template_drop',
	'restored_db has the event trigger');
my ($ret, $out, $err) = $node->psql('restored_db', 'DROP TABLE public.photos');
isnt($ret, 0, 'restored_db: DROP TABLE of the template is refused');
like($err, qr/\Qshardid.drop_table('public.photos')\E/, 'restored_db: the refusal names shardid.drop_table()');
is($node->safe_psql('restored_db', "SELECT shardid.drop_table('public.photos')"), '2', 'restored_db: drop_table() drops 2 tables');
($ret, $out, $err) = $node->psql('restored_db', 'DROP TABLE public.photos');
is($ret, 0, 'restored_db: DROP TABLE of the unregistered table');
note('pg_dump/pg_restore of the whole database keeps the template guard (extension member, not dumped)');

done_testing();
