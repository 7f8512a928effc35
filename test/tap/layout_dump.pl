# layout_dump.pl — the layout travels with pg_dump: a database with a
# configured, frozen layout restored into another keeps the layout, stays
# frozen (a later data-only restore of another layout is refused), and its
# generators continue above the dumped IDs.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use ShardidTest;
use Test::More;

my $node = data_node('layout_dump', logical => 0, extension => 0);
$node->safe_psql('postgres', "CREATE DATABASE $_") for qw(source_db target_db);
$node->safe_psql('source_db', q{
CREATE EXTENSION shardid;
SELECT shardid.configure('2020-02-02 02:02:02.202+00', 11, 12);
CREATE SEQUENCE public.gen;
CREATE TABLE public.items (id bigint PRIMARY KEY DEFAULT shardid.next_id(7, 'public.gen'), v int);
INSERT INTO public.items (v) SELECT g FROM generate_series(1, 3000) g;
});

# dump_into(FROM_DB, TO_DB, PG_DUMP_ARGS, PSQL_ARGS) — pg_dump FROM_DB | psql
# TO_DB on this server (its major's programs); psql's exit status and
# standard error.
sub dump_into
{
	my ($from, $to, $dump_args, $psql_args) = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run([ $node->installed_command('pg_dump'), '-d', $node->connstr($from), @$dump_args ],
		'|', [ $node->installed_command('psql'), '-X', '-q', '-d', $node->connstr($to), @$psql_args ],
		'>', \$out, '2>', \$err);
	return ($?, $err);
}

my ($ret, $err) = dump_into('source_db', 'target_db', [], [ '-v', 'ON_ERROR_STOP=1' ]);
$ret == 0 or die "restore of source_db into target_db failed: $err";

my $layout = 'SELECT epoch, shard_bits, seq_bits, in_use FROM shardid.layout()';
my $src = $node->safe_psql('source_db', $layout);
my $dst = $node->safe_psql('target_db', $layout);
is($dst, $src, 'the layout is the same after restore');
is($dst, '2020-02-02 02:02:02.202+00|11|12|t', "restored layout: $dst");
is($node->safe_psql('target_db', 'SELECT count(*) FROM shardid.layout_config'), '1', 'one layout row after restore');

(undef, undef, $err) = $node->psql('target_db', "\\set VERBOSITY verbose\nSELECT shardid.configure('2021-01-01')");
like($err, qr/55000/, 'configure() refused after restore (55000)');

# A data-only restore of another database's layout into one that has issued
# IDs is refused by the trigger on layout_config, as is emptying the table
# first: the restored database keeps its layout.
$node->safe_psql('postgres', 'CREATE DATABASE other_db');
$node->safe_psql('other_db', "CREATE EXTENSION shardid; SELECT shardid.configure('2021-01-01', 12, 11)");
(undef, $err) = dump_into('other_db', 'target_db', [ '--data-only', '-t', 'shardid.layout_config' ],
	[ '-v', 'ON_ERROR_STOP=1', '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ERROR:  55000: the layout cannot change/, 'a data-only restore of another layout refused (55000)');
(undef, undef, $err) = $node->psql('target_db', "\\set VERBOSITY verbose\nTRUNCATE shardid.layout_config");
like($err, qr/ERROR:  55000: the layout cannot change/, 'TRUNCATE of the layout refused (55000)');
is($node->safe_psql('target_db', $layout), $dst, 'the layout is kept');

my $max_src = $node->safe_psql('source_db', 'SELECT max(id) FROM public.items');
$node->safe_psql('target_db', 'INSERT INTO public.items (v) SELECT g FROM generate_series(1, 3000) g');
is($node->safe_psql('target_db', qq{
SELECT count(*) FILTER (WHERE id > $max_src), bool_and(shardid.id_shard(id) = 7), count(DISTINCT id)
  FROM public.items WHERE v IS NOT NULL}),
	'3000|t|6000', "3000 new IDs above $max_src, all on shard 7, 6000 distinct");

done_testing();
