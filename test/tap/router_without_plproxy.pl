# router_without_plproxy.pl — a router with only dblink and shardid (no
# PL/Proxy, as on PostgreSQL 19, where Debian packages none) registers
# nodes, places shards, moves one online under a writer and rebalances.
#
# Nodes a and b hold shards 0-3 and 4-5; c has only the extension and the
# template. The router makes no PL/Proxy cluster (no foreign server at all),
# and refresh_cluster() alone reports PL/Proxy missing (55000). A writer
# inserts through the router while shard 1 moves from a to b: the
# application routes by the placement, as the shard maps do (here a
# router-side function that reads shardid.placement and calls the node over
# dblink), and retries what the move refuses. Every acknowledged ID is on
# the target exactly once. Then rebalance(by_count) fills c, leaving every
# shard registered on exactly the node it is placed on, with its rows, and
# nothing of a move behind.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use ShardidTest;
use Test::More;

# Each node: the template, and the function the router calls there.
my $node_sql = 'CREATE TABLE public.posts (id bigint PRIMARY KEY, user_id bigint NOT NULL, body text NOT NULL);'
  . node_insert_post_sql();

my %node = map { $_ => data_node($_, sql => $node_sql) } qw(a b c);
$node{a}->safe_psql('app', "SELECT shardid.create_shards(0, 3)");
$node{b}->safe_psql('app', "SELECT shardid.create_shards(4, 5)");
$node{$_}->safe_psql('app', "SELECT shardid.create_table('public.posts')") for qw(a b c);
$node{a}->safe_psql('app', q{
INSERT INTO shard_0001.posts (user_id, body) SELECT g, repeat('x', 100) FROM generate_series(1, 20000) AS g;
DO $$ BEGIN
    FOR s IN 0 .. 3 LOOP
        EXECUTE format('INSERT INTO %I.posts (user_id, body) SELECT g, ''old'' FROM generate_series(1, 100) AS g', shardid.shard_schema(s));
    END LOOP;
END $$;
});
$node{b}->safe_psql('app', q{
INSERT INTO shard_0004.posts (user_id, body) SELECT g, 'old' FROM generate_series(1, 100) AS g;
INSERT INTO shard_0005.posts (user_id, body) SELECT g, 'old' FROM generate_series(1, 100) AS g;
});

# The router: dblink and shardid, nothing else.
my $router = router_node('router', \%node);
is($router->safe_psql('app', "SELECT count(*) FROM pg_extension WHERE extname = 'plproxy'"),
	'0', 'the router has no PL/Proxy');
is($router->safe_psql('app', "SELECT shardid.place_shards('a', 0, 3) + shardid.place_shards('b', 4, 5)"),
	'6', 'place_shards() without PL/Proxy places 6 shards');
is($router->safe_psql('app', 'SELECT count(*) FROM pg_foreign_server'),
	'0', 'no PL/Proxy cluster (no foreign server) is made');
is($router->safe_psql('app', "SELECT shardid.freeze_shard(5)") . ' '
	  . $router->safe_psql('app', "SELECT frozen FROM shardid.placement WHERE shard = 5") . ' '
	  . $router->safe_psql('app', "SELECT shardid.unfreeze_shard(5); SELECT frozen FROM shardid.placement WHERE shard = 5"),
	"b t \nf", 'freeze_shard() and unfreeze_shard() work without PL/Proxy');
my ($ret, $out, $err) = $router->psql('app', "\\set VERBOSITY verbose\nSELECT shardid.refresh_cluster()");
like($err, qr/ERROR:\s+55000: PL\/Proxy is not installed/, 'refresh_cluster() alone reports PL/Proxy missing (55000)');

# The application's routing: the placement, read at each call (a shard
# map), and the node called over dblink. A frozen shard's writes fail with
# 25006 and are retried, as are those that reach the retired copy.
$router->safe_psql('app', q{
CREATE FUNCTION public.insert_post(i_shard integer, i_body text) RETURNS bigint LANGUAGE sql AS $$
    SELECT t.id FROM public.dblink((SELECT n.connstr FROM shardid.placement AS p JOIN shardid.nodes AS n USING (node)
                                     WHERE p.shard = i_shard),
                                   format('SELECT public.insert_post(%s, %L)', i_shard, i_body)) AS t(id bigint)
$$;
} . writer_sql());

# --- an online move of shard 1 (a -> b) under the writer ---------------------
my $writer = $router->background_psql('app', on_error_stop => 0);
$writer->query_until(qr/writing/, "\\echo writing\nCALL public.writer('{1,2,1,4}', NULL, 0.002);\n");
$router->poll_query_until('app', 'SELECT count(*) >= 50 FROM public.written')
  or die 'the writer did not start';
my $move = $router->safe_psql('app', "CALL shardid.move_shard(1, 'b')");
note("move: $move");
my $before_stop = $router->safe_psql('app', 'SELECT count(*) FROM public.written');
$router->poll_query_until('app', "SELECT count(*) > $before_stop + 50 FROM public.written")
  or die 'the writer stopped after the move';
$router->safe_psql('app', 'INSERT INTO public.stop_writer VALUES (true)');
my $writer_out = $writer->query_safe("SELECT 'writer done'");
$writer->quit;
like($writer_out, qr/writer done/, 'the writer ran across the move without an error');

is($router->safe_psql('app', 'SELECT node FROM shardid.placement WHERE shard = 1'), 'b', 'shard 1 is placed on b');
is($node{b}->safe_psql('app', 'SELECT count(*) FROM shardid.shard_registry WHERE shard = 1')
	  . $node{a}->safe_psql('app', 'SELECT count(*) FROM shardid.shard_registry WHERE shard = 1'),
	'10', 'shard 1 is registered on b, not on a');
my $acked = $router->safe_psql('app', 'SELECT string_agg(id::text, \',\') FROM public.written WHERE shardid.id_shard(id) = 1');
my $acked_n = $router->safe_psql('app', 'SELECT count(*) FROM public.written WHERE shardid.id_shard(id) = 1');
ok($acked_n > 0, "the writer wrote $acked_n rows to shard 1");
is($node{b}->safe_psql('app', "SELECT count(*) || ' ' || count(DISTINCT id) FROM shard_0001.posts WHERE id = ANY ('{$acked}'::bigint[])"),
	"$acked_n $acked_n", 'every acknowledged shard-1 row is on b exactly once');
is($node{b}->safe_psql('app', "SELECT count(*) FROM shard_0001.posts WHERE body NOT IN ('old', repeat('x', 100)) AND body NOT LIKE 'writer %'")
	  . ' ' . $node{b}->safe_psql('app', 'SELECT count(*) FROM shard_0001.posts'),
	'0 ' . (20100 + $acked_n), 'shard 1 on b holds its 20,100 loaded rows and the written ones, nothing else');

# --- rebalance by count: c receives shards -------------------------------------
$router->safe_psql('app', "CALL shardid.rebalance(strategy => 'by_count')");
is($router->safe_psql('app', "SELECT count(*) FROM shardid.rebalance_plan('by_count')"), '0', 'balanced: nothing left to plan');
is($router->safe_psql('app', "SELECT string_agg(node || '=' || n, ' ' ORDER BY node) FROM (SELECT node, count(*) AS n FROM shardid.placement GROUP BY node) AS x"),
	'a=2 b=2 c=2', 'by count: two shards on each node');
is(misplaced($router, \%node, 0 .. 5), '', 'every shard is registered on exactly the node it is placed on');
my $total = 0;
for my $n (qw(a b c))
{
	$total += $node{$n}->safe_psql('app', q{
SELECT COALESCE(sum((xpath('/row/c/text()', query_to_xml(format('SELECT count(*) AS c FROM %I.posts', s.schema), false, true, '')))[1]::text::int), 0)
  FROM shardid.shards AS s});
}
my $written = $router->safe_psql('app', 'SELECT count(*) FROM public.written');
is($total, 20100 + 5 * 100 + $written, 'every row of every shard is kept across the move and the rebalance');
my $left = join ' ', map {
	$node{$_}->safe_psql('app', 'SELECT (SELECT count(*) FROM pg_publication) + (SELECT count(*) FROM pg_subscription) + (SELECT count(*) FROM pg_replication_slots)')
} qw(a b c);
is($left . ' ' . $router->safe_psql('app', 'SELECT count(*) FROM shardid.shard_moves'),
	'0 0 0 0', 'no publication, subscription, slot or move row is left');
is($router->safe_psql('app', "SELECT string_agg(shardid.id_shard(public.insert_post(s, 'after'))::text, ' ' ORDER BY s) FROM generate_series(0, 5) AS s"),
	'0 1 2 3 4 5', 'writes routed by the placement reach every shard after the rebalance');

done_testing();
