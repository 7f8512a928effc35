# stored_decodes_dump.pl — stored decodes survive pg_dump with a configured
# layout. pg_dump restores shardid.layout_config after the tables of schemas
# that sort before "shardid", so their generated columns are first computed
# with the default layout; the layout row's arrival recomputes them.
# Expression indexes are built after the data, with the restored layout.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use ShardidTest;
use Test::More;

my $node = data_node('stored_decodes', logical => 0, extension => 0);
$node->safe_psql('postgres', 'CREATE DATABASE source_db');
$node->safe_psql('postgres', 'CREATE DATABASE target_db');
$node->safe_psql('source_db', q{
CREATE EXTENSION shardid;
SELECT shardid.configure('2020-02-02 02:02:02.202+00', 11, 12);
CREATE SEQUENCE public.gen;
-- "public" sorts before "shardid", "zz" after it
CREATE TABLE public.posts (
    id bigint PRIMARY KEY DEFAULT shardid.next_id(7, 'public.gen'),
    created_at timestamptz GENERATED ALWAYS AS (shardid.id_time(id)) STORED,
    shard integer GENERATED ALWAYS AS (shardid.id_shard(id)) STORED,
    body text
);
CREATE INDEX posts_time ON public.posts (shardid.id_time(id));
CREATE SCHEMA zz;
CREATE TABLE zz.notes (id bigint PRIMARY KEY DEFAULT shardid.next_id(9, 'public.gen'),
                       created_at timestamptz GENERATED ALWAYS AS (shardid.id_time(id)) STORED);
INSERT INTO public.posts (body) SELECT 'post ' || g FROM generate_series(1, 500) g;
INSERT INTO public.posts (id, body) VALUES (shardid.make_id('2021-03-04 05:06:07.089+00', 2047, 4095), 'edge');
INSERT INTO zz.notes SELECT FROM generate_series(1, 50);
});

# pg_dump of source_db, restored into target_db by psql
my $dump = PostgreSQL::Test::Utils::tempdir() . '/source_db.sql';
$node->command_ok([ 'pg_dump', '-d', 'source_db', '-f', $dump ], 'pg_dump of source_db');
$node->command_ok([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', 'target_db', '-f', $dump ],
	'the dump restores into target_db');

my $snapshot = q{
SELECT md5(string_agg(format('%s|%s|%s', id, created_at, shard), ',' ORDER BY id)) FROM public.posts;
SELECT md5(string_agg(format('%s|%s', id, created_at), ',' ORDER BY id)) FROM zz.notes;
};
is($node->safe_psql('target_db', $snapshot), $node->safe_psql('source_db', $snapshot),
	'generated columns restored as the source computed them');

is($node->safe_psql('target_db', q{
SELECT count(*), count(*) FILTER (WHERE created_at = shardid.id_time(id) AND shard = shardid.id_shard(id)),
       count(*) FILTER (WHERE shard = 7), (SELECT created_at FROM public.posts WHERE body = 'edge')
  FROM public.posts}),
	'501|501|500|2021-03-04 05:06:07.089+00', 'restored generated columns match the restored layout');

# The expression index answers like a sequential scan.
my $window = "shardid.id_time(id) >= now() - interval '1 day' AND shardid.id_time(id) < now() + interval '1 day'";
like($node->safe_psql('target_db', "SET enable_seqscan = off; EXPLAIN (COSTS OFF) SELECT count(*) FROM public.posts WHERE $window"),
	qr/posts_time/, 'the expression index on id_time(id) is used');
is($node->safe_psql('target_db', "SET enable_seqscan = off; SELECT count(*) FROM public.posts WHERE $window"),
	'500', 'expression index scan on id_time(id): 500 rows');
is($node->safe_psql('target_db',
		"SET enable_indexscan = off; SET enable_bitmapscan = off; SELECT count(*) FROM public.posts WHERE $window"),
	'500', 'seq scan agrees with the expression index: 500 rows');

my ($ret, $out, $err) = $node->psql('target_db', "\\set VERBOSITY verbose\nSELECT shardid.configure('2021-01-01')");
like($err, qr/55000/, 'configure() refused after restore (55000)');

done_testing();
