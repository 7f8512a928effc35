# update.pl — ALTER EXTENSION shardid UPDATE from every released version
# gives exactly a fresh install of the version in development:
#   - released scripts (src/sql/released/shardid--*.sql) are byte for byte as
#     shipped (their SHA-256 below), and the installed scripts are the
#     checkout's (src/sql/released/ and build/, which make builds);
#   - a database on the old version, in use (layout configured, shards,
#     sharded tables, IDs issued, nodes when PL/Proxy is there), is updated;
#   - its extension picture (test/lib/extension_snapshot.sql: members,
#     function definitions, tables, views, types, comments, grants) equals
#     a fresh install's in another database, or the diff is printed;
#   - every configuration table, generator sequence and user table holds
#     what it held before, the layout stays frozen, and new IDs continue
#     above the old ones on every generator.
use strict;
use warnings;

use Digest::SHA;
use File::Basename qw(basename);
use File::Compare qw(compare);
use FindBin;
use lib $FindBin::RealBin;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use ShardidTest;
use Test::More;

my $top = "$FindBin::RealBin/../..";

# Released scripts never change: each release adds its install script here
# and the upgrade script that led to it.
my %released_sha256 = (
	'src/sql/released/shardid--0.1.sql' => '4c229c925e4af8b9dcac944cb78b5fb9f4167bf3cc4aebe4e5da9cf103218c87',
	'src/sql/released/shardid--0.2.sql' => '84cb95f69dd7a8927fa2b8b86d86df61f44c40385a7f374e8a1302c72ee4bd26',
	'src/sql/released/shardid--0.1--0.2.sql' => 'f6da0be6ce415c436a29c01d5c44bae3b7e3b2744a3b4ed356a7fec88f9d2300',
	'src/sql/released/shardid--0.3.sql' => '02d94d8bb85839bbf95e44e58fd27c02f536df5f8ad04e0d89dc9fbb8a46d091',
	'src/sql/released/shardid--0.2--0.3.sql' => 'ef01193a7887f9d403274b46439ac786eea0cb393512cafbc691ef5eef36dce7',
	'src/sql/released/shardid--0.4.sql' => '9cc643d2e516a657551778c55e88ad0ac15265b27a0a608cd38dc31a5dc18251',
	'src/sql/released/shardid--0.3--0.4.sql' => 'fbfcc5b8c26a41d8a6529b2471b3fa78f1c81bb0fd74c74823fdf2ff112336ea',
);
for my $f (sort keys %released_sha256)
{
	my $sha = -e "$top/$f" ? Digest::SHA->new(256)->addfile("$top/$f")->hexdigest : 'missing';
	is($sha, $released_sha256{$f}, "$f unchanged (released scripts are frozen)");
}

# Every upgrade script refuses to run outside ALTER EXTENSION.
my @released = map { "src/sql/released/" . basename($_) } glob("$top/src/sql/released/shardid--*.sql");
my @built = map { 'build/' . basename($_) } glob("$top/build/shardid--*.sql");
for my $f (grep { /--.*--/ } @released, @built)
{
	my ($to) = $f =~ /--([^-]+)\.sql$/;
	my @head = (split /\n/, slurp_file("$top/$f"))[ 0 .. 19 ];
	my $guard = "\\echo Use \"ALTER EXTENSION shardid UPDATE TO '$to'\" to load this file. \\quit";
	ok((grep { defined && $_ eq $guard } @head), "$f starts with its psql guard: $guard");
}

# The built upgrade scripts create each object once (src/sql/include.awk
# skips an object the update part already includes).
my @built_updates = grep { /--.*--/ } @built;
ok(@built_updates > 0, 'build/ holds a built upgrade script (make builds it)');
for my $f (@built_updates)
{
	my %seen;
	for (split /\n/, slurp_file("$top/$f"))
	{
		$seen{$1}++ if /^(CREATE (?:OR REPLACE )?(?:FUNCTION|PROCEDURE|VIEW) [a-z_.]+ *\([^)]*)/i;
	}
	my @dup = sort grep { $seen{$_} > 1 } keys %seen;
	is(join("\n", @dup), '', "$f creates each function, procedure and view once");
}

my ($new) = slurp_file("$top/shardid.control") =~ /^default_version = '(.*)'$/m;
ok(defined $new, "default_version in shardid.control: " . ($new // 'none'));

chomp(my $extdir = `pg_config --sharedir`);
$extdir .= '/extension';
for my $f (@released, @built)
{
	is(compare("$top/$f", "$extdir/" . basename($f)), 0, "installed $extdir/" . basename($f) . " is the checkout's $f");
}

# The released versions: every install script but the development one.
my @olds = sort grep { $_ ne $new } map { m{^src/sql/released/shardid--([^-]+)\.sql$} ? $1 : () } @released;
ok(@olds > 0, 'released versions to update from: ' . join(' ', @olds));

my $node = data_node('update', logical => 0, extension => 0);
my $snapshot_sql = slurp_file("$top/test/lib/extension_snapshot.sql");
my $tmp = PostgreSQL::Test::Utils::tempdir();

# differ(NAME, A, B, LABEL_A, LABEL_B) — '' when the texts are equal, else
# their unified diff.
sub differ
{
	my ($name, $a, $b, $la, $lb) = @_;
	return '' if $a eq $b;
	append_to_file("$tmp/$name.a", "$a\n");
	append_to_file("$tmp/$name.b", "$b\n");
	my $diff = '';
	IPC::Run::run([ 'diff', '-U', '3', '--label', $la, '--label', $lb, "$tmp/$name.a", "$tmp/$name.b" ], '>', \$diff);
	return $diff;
}

$node->safe_psql('postgres', 'CREATE DATABASE fresh_db');
$node->safe_psql('fresh_db', 'CREATE EXTENSION shardid');
is($node->safe_psql('fresh_db', "SELECT extversion FROM pg_extension WHERE extname = 'shardid'"), $new,
	"CREATE EXTENSION shardid installs $new");
my $fresh = $node->safe_psql('fresh_db', $snapshot_sql);
my $fresh_lines = () = $fresh =~ /^/mg;
note("fresh $new install: " . (() = $fresh =~ / \| member$/mg) . " member objects");

my $plproxy = $node->safe_psql('fresh_db', "SELECT count(*) FROM pg_available_extensions WHERE name = 'plproxy'");

# What must survive, as queries fixed before the update: every
# configuration table (its columns as of the old version), every
# sequence's state, every user table's IDs, the layout.
my $capture_sql = q{
SELECT format('SELECT %L, t::text FROM (SELECT %s FROM %s) AS t ORDER BY 2;', c.oid::regclass,
              (SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) FROM pg_attribute AS a
                WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), c.oid::regclass)
  FROM pg_extension AS e, unnest(e.extconfig) AS x(cfg) JOIN pg_class AS c ON c.oid = x.cfg
 WHERE e.extname = 'shardid' AND c.relkind <> 'S'
UNION ALL
SELECT format('SELECT %L, last_value, is_called FROM %s;', c.oid::regclass, c.oid::regclass)
  FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
 WHERE c.relkind = 'S' AND n.nspname NOT IN ('pg_catalog', 'information_schema')
UNION ALL
SELECT format('SELECT %L, count(*), min(id), max(id), md5(string_agg(id::text, %L ORDER BY id)) FROM %s;',
              c.oid::regclass, ',', c.oid::regclass)
  FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
 WHERE c.relkind = 'r' AND n.nspname <> ALL (ARRAY['pg_catalog', 'information_schema', 'shardid'])
   AND EXISTS (SELECT FROM pg_attribute AS a WHERE a.attrelid = c.oid AND a.attname = 'id')
UNION ALL
SELECT 'SELECT ''layout'', epoch, shard_bits, seq_bits, in_use FROM shardid.layout();'
ORDER BY 1
};

for my $old (@olds)
{
	(my $db = "from_$old") =~ s/\./_/g;
	note("--- $old -> $new");
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, qq{
CREATE EXTENSION shardid VERSION '$old';
SELECT shardid.configure('2020-02-02 02:02:02.202+00', 11, 12);
SELECT shardid.create_shards(0, 3);
CREATE TABLE public.photos (id bigint PRIMARY KEY, user_id bigint NOT NULL, caption text);
CREATE TABLE public.likes (id bigint PRIMARY KEY, photo_id bigint NOT NULL);
SELECT shardid.create_table('public.photos');
SELECT shardid.create_table('public.likes');
INSERT INTO shard_0000.photos (user_id, caption) SELECT g, 'photo ' || g FROM generate_series(1, 300) g;
INSERT INTO shard_0001.photos (user_id, caption) SELECT g, 'photo ' || g FROM generate_series(1, 5000) g;
INSERT INTO shard_0002.likes (photo_id) SELECT g FROM generate_series(1, 700) g;
SELECT shardid.detach_shard(3);
-- a generator outside the shard helpers
CREATE SEQUENCE public.gen;
CREATE TABLE public.items (id bigint PRIMARY KEY DEFAULT shardid.next_id(42, 'public.gen'), v int);
INSERT INTO public.items (v) SELECT g FROM generate_series(1, 2000) g;
});
	# nodes: with add_node() where PL/Proxy is installed (0.1 and 0.2 need
	# it there), else (19) into the tables as add_node() would
	if ($plproxy eq '1')
	{
		$node->safe_psql($db, q{
CREATE EXTENSION plproxy;
SELECT shardid.add_node('a', 'host=/nonexistent/a port=5432 dbname=app');
SELECT shardid.add_node('b', 'host=/nonexistent/b port=5432 dbname=app');
SELECT shardid.place_shards('a', 0, 1);
SELECT shardid.place_shards('b', 2, 2);
});
		pass("$old in use: layout, 4 shards (one detached), 3 tables with IDs, 2 nodes");
	}
	else
	{
		$node->safe_psql($db, q{
INSERT INTO shardid.nodes (node, connstr) VALUES ('a', 'host=/nonexistent/a port=5432 dbname=app'),
                                                 ('b', 'host=/nonexistent/b port=5432 dbname=app');
INSERT INTO shardid.shard_placement (shard, node) VALUES (0, 'a'), (1, 'a'), (2, 'b');
});
		pass("$old in use: layout, 4 shards (one detached), 3 tables with IDs, 2 nodes (no PL/Proxy here: placed by INSERT)");
	}

	my $capture = $node->safe_psql($db, $capture_sql);
	my $before = $node->safe_psql($db, $capture);
	like($before, qr/^layout\|2020-02-02 02:02:02\.202\+00\|11\|12\|t$/m, "$old: layout configured and in use before the update");

	$node->safe_psql($db, 'ALTER EXTENSION shardid UPDATE');
	is($node->safe_psql($db, "SELECT extversion FROM pg_extension WHERE extname = 'shardid'"), $new,
		"ALTER EXTENSION shardid UPDATE: $old -> $new");

	my $diff = differ("$db.snapshot", $fresh, $node->safe_psql($db, $snapshot_sql),
		"fresh install of $new", "$old updated to $new");
	ok($diff eq '', "$old updated equals a fresh $new install ($fresh_lines catalog lines compared)")
	  or diag("The updated extension differs from a fresh install ('-' fresh $new, '+' $old updated):\n$diff"
		  . "Each line is '<member object> | <property>'. Make src/sql/updates/*--$new.sql (with the objects it re-creates) and src/sql/install/*.sql agree.");

	my $before_lines = () = $before =~ /^/mg;
	$diff = differ("$db.capture", $before, $node->safe_psql($db, $capture), 'before the update', 'after the update');
	ok($diff eq '', "$old: $before_lines rows of configuration tables, sequence states, user tables and layout unchanged")
	  or diag("$old: data or generator state changed in the update:\n$diff");

	my ($ret, $out, $err) = $node->psql($db, "\\set VERBOSITY verbose\nSELECT shardid.configure('2021-01-01')");
	like($err, qr/55000/, "$old: the layout stays frozen (configure refused, 55000)");
	# ... and no longer by the marker alone: the update started the freeze
	# record, which setval() and sequence replication cannot reset
	is($node->safe_psql($db, q{SELECT count(*) || '|' || min(epoch_ms) || '|' || min(shard_bits) || '|' || min(seq_bits)
                                 FROM shardid.layout_freeze}),
		'1|1580608922202|11|12', "$old: the update wrote the freeze record");
	$node->safe_psql($db, "SELECT setval('shardid.ids_issued', 1, false)");
	($ret, $out, $err) = $node->psql($db, "\\set VERBOSITY verbose\nSELECT shardid.configure('2021-01-01')");
	like($err, qr/55000/, "$old: configure refused with the marker reset (setval of ids_issued)");
	$node->safe_psql($db, "SELECT setval('shardid.ids_issued', 1, true)");

	# New IDs continue above the old ones, on the same shard.
	is($node->safe_psql($db, q{
CREATE TEMP TABLE old_max AS
SELECT 0 AS shard, 'shard_0000.photos' AS t, max(id) AS m FROM shard_0000.photos
UNION ALL SELECT 1, 'shard_0001.photos', max(id) FROM shard_0001.photos
UNION ALL SELECT 2, 'shard_0002.likes', max(id) FROM shard_0002.likes
UNION ALL SELECT 42, 'public.items', max(id) FROM public.items;
-- new rows are told apart by a NULL caption or a negative value
CREATE TEMP TABLE new_ids AS
WITH a AS (INSERT INTO shard_0000.photos (user_id) SELECT g FROM generate_series(1, 100) g RETURNING id),
     b AS (INSERT INTO shard_0001.photos (user_id) SELECT g FROM generate_series(1, 100) g RETURNING id),
     c AS (INSERT INTO shard_0002.likes (photo_id) SELECT -g FROM generate_series(1, 100) g RETURNING id),
     d AS (INSERT INTO public.items (v) SELECT -g FROM generate_series(1, 100) g RETURNING id)
SELECT 'shard_0000.photos' AS t, id FROM a UNION ALL SELECT 'shard_0001.photos', id FROM b
UNION ALL SELECT 'shard_0002.likes', id FROM c UNION ALL SELECT 'public.items', id FROM d;
SELECT string_agg(format('%s:%s', o.t, (SELECT count(*) FROM new_ids AS n
                                         WHERE n.t = o.t AND n.id > o.m AND shardid.id_shard(n.id) = o.shard)),
                  ' ' ORDER BY o.t)
  FROM old_max AS o;
}),
		'public.items:100 shard_0000.photos:100 shard_0001.photos:100 shard_0002.likes:100',
		"$old: 4 generators continue above their old IDs on their shard");
}

done_testing();
