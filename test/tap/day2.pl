# day2.pl — day-2 operations on a router without PL/Proxy and three nodes:
# a background rebalance (rebalance_start(), rebalance_status(),
# rebalance_wait(), rebalance_stop(), a restart of the router mid-job and
# the resume), drain_node() and remove_node(), drop_retired_copies(),
# check_cluster(), and no background worker slot free.
#
# Node a holds shards 0-5 (shard 1 and 2 with more rows), b shards 6-7, c
# only the extension (check_cluster() finds nothing wrong with it; the
# first move there makes the template). A writer inserts through the router
# (routing by shardid.placement, retrying what a move refuses) while the
# jobs move shards; every acknowledged row must be kept, once.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use ShardidTest;
use Test::More;
use Time::HiRes qw(time);

my %node = map { $_ => data_node($_) } qw(a b c);
$node{a}->safe_psql('app', "SELECT shardid.create_shards(0, 5)");
$node{b}->safe_psql('app', "SELECT shardid.create_shards(6, 7)");
# the template on a and b; c has only the extension (the first move there makes it)
$node{$_}->safe_psql('app', q{
CREATE TABLE public.posts (id bigint PRIMARY KEY, user_id bigint NOT NULL, body text NOT NULL);
SELECT shardid.create_table('public.posts');
}) for qw(a b);
$node{a}->safe_psql('app', q{
INSERT INTO shard_0001.posts (user_id, body) SELECT g, repeat('x', 100) FROM generate_series(1, 20000) AS g;
INSERT INTO shard_0002.posts (user_id, body) SELECT g, repeat('x', 100) FROM generate_series(1, 10000) AS g;
INSERT INTO shard_0003.posts (user_id, body) SELECT g, repeat('x', 100) FROM generate_series(1, 5000) AS g;
});
my $loaded = 35000;

my $router = router_node('router', \%node);
$router->safe_psql('app', "SELECT shardid.place_shards('a', 0, 5), shardid.place_shards('b', 6, 7)");
is($router->safe_psql('app', 'SELECT count(*) FROM shardid.check_cluster()'), '0', 'check_cluster(): a healthy cluster has no problem');

# The writer: through the router, by the placement, retrying refusals.
install_writer($router, [ values %node ]);
my $writer = $router->background_psql('app', on_error_stop => 0);
$writer->query_until(qr/writing/, "\\echo writing\nCALL public.writer();\n");
$router->poll_query_until('app', 'SELECT count(*) >= 20 FROM public.written') or die 'the writer did not start';

# --- a background rebalance ----------------------------------------------------
my $t0 = time;
my $job = $router->safe_psql('app', "SELECT shardid.rebalance_start('by_size')");
my $took = time - $t0;
note(sprintf('rebalance_start() returned in %.2f s, job %s', $took, $job));
# it returns while the job runs its moves (how long the call takes is the load's)
like($router->safe_psql('app', 'SELECT state FROM shardid.rebalance_status()'), qr/^(starting|running)$/,
	'rebalance_start() returns at once: the job is running');
$router->poll_query_until('app', 'SELECT current_shard IS NOT NULL AND moves_planned > 0 FROM shardid.rebalance_status()')
  or die 'no progress reported';
pass('rebalance_status() reports the current move and the moves planned');
my ($ret, $out, $err) = $router->psql('app', "\\set VERBOSITY verbose\nCALL shardid.rebalance()");
like($err, qr/55P03: another rebalance is running/, 'rebalance() is refused while the job runs (55P03)');
($ret, $out, $err) = $router->psql('app', "\\set VERBOSITY verbose\nSELECT shardid.rebalance_start()");
like($err, qr/55P03: background rebalance job $job is running/, 'a second rebalance_start() is refused (55P03)');
my $done = $router->safe_psql('app', "SELECT state || ' ' || moves_done || ' ' || (moves_done = moves_planned) FROM shardid.rebalance_wait()");
like($done, qr/^finished [1-9]\d* true$/, "rebalance_wait() returns when the job has finished: $done");
is($router->safe_psql('app', "SELECT count(*) FROM shardid.rebalance_plan('by_size')"), '0', 'balanced: nothing left to plan');
ok($router->safe_psql('app', "SELECT count(*) FROM shardid.placement WHERE node = 'c'") > 0, 'c received shards');

# --- drain_node() and remove_node() ---------------------------------------------
$router->safe_psql('app', "CALL shardid.drain_node('c')");
is($router->safe_psql('app', "SELECT count(*) FROM shardid.placement WHERE node = 'c'"), '0', 'drain_node() leaves no shard on c');
is($node{c}->safe_psql('app', 'SELECT count(*) FROM shardid.shard_registry'), '0', 'c registers no shard');
$router->safe_psql('app', "SELECT shardid.remove_node('c')");
is($router->safe_psql('app', "SELECT count(*) FROM shardid.nodes WHERE node = 'c'"), '0', 'remove_node() succeeds after the drain');
my $c_connstr = $node{c}->connstr('app');
$router->safe_psql('app', "SELECT shardid.add_node('c', \$\$$c_connstr\$\$)");

# --- rebalance_stop(): the job ends after its current move ----------------------
$job = $router->safe_psql('app', "SELECT shardid.rebalance_start('by_count')");
$router->poll_query_until('app', 'SELECT current_shard IS NOT NULL FROM shardid.rebalance_status()') or die 'no move started';
is($router->safe_psql('app', 'SELECT shardid.rebalance_stop()'), 't', 'rebalance_stop() asks the running job to stop');
$done = $router->safe_psql('app', "SELECT state || ' ' || moves_done FROM shardid.rebalance_wait()");
is($done, 'stopped 1', 'the job stopped after finishing its current move');
is($router->safe_psql('app', 'SELECT count(*) FROM shardid.shard_moves'), '0', 'no move is left in progress');

# The writer must still be writing, then stops.
my $before = $router->safe_psql('app', 'SELECT count(*) FROM public.written');
$router->poll_query_until('app', "SELECT count(*) > $before + 20 FROM public.written") or die 'the writer stopped';
$router->safe_psql('app', 'INSERT INTO public.stop_writer VALUES (true)');
like($writer->query_safe("SELECT 'writer done'"), qr/writer done/, 'the writer ran across the jobs without an error (stopped before the restart, which would end its session)');
$writer->quit;

# --- a restart of the router mid-job, and the resume ---------------------------
$job = $router->safe_psql('app', "SELECT shardid.rebalance_start('by_count')");
$router->poll_query_until('app', "SELECT phase = 'copy' FROM shardid.shard_moves") or die 'no move reached copy';
$router->restart;
is($router->safe_psql('app', 'SELECT state FROM shardid.rebalance_status()'), 'interrupted',
	'after a restart of the router, rebalance_status() reports the job interrupted');
is($router->safe_psql('app', 'SELECT count(*) FROM shardid.shard_moves'), '1', 'its move is left in progress');
($ret, $out, $err) = $router->psql('app', "SELECT shardid.rebalance_start('by_count')");
like($err, qr/job $job was interrupted .*this job resumes the work/, 'rebalance_start() resumes the interrupted job');
$done = $router->safe_psql('app', "SELECT state FROM shardid.rebalance_wait()");
is($done, 'finished', 'the resumed job finished');
is($router->safe_psql('app', 'SELECT count(*) FROM shardid.shard_moves')
	  . ' ' . $router->safe_psql('app', "SELECT count(*) FROM shardid.rebalance_plan('by_count')"),
	'0 0', 'the interrupted move was finished and the nodes are balanced');
is($router->safe_psql('app', "SELECT string_agg(state, ' ' ORDER BY job_id) FROM shardid.rebalance_jobs WHERE NOT in_session"),
	'finished stopped interrupted finished', 'every background job keeps its outcome');
is($router->safe_psql('app', "SELECT string_agg(kind || ' ' || state, ' ' ORDER BY job_id) FROM shardid.rebalance_jobs WHERE in_session"),
	'drain finished', 'so does the CALL of drain_node(), a job of the one driver run in its session');

# --- every row kept; every shard on exactly its node ---------------------------
is(misplaced($router, \%node, 0 .. 7), '', 'every shard is registered on exactly the node it is placed on');
my $acked = $router->safe_psql('app', 'SELECT count(*) FROM public.written');
my $ids = $router->safe_psql('app', "SELECT string_agg(id::text, ',') FROM public.written");
my ($total, $found) = (0, 0);
for my $n (qw(a b c))
{
	$total += $node{$n}->safe_psql('app', q{
SELECT COALESCE(sum((xpath('/row/c/text()', query_to_xml(format('SELECT count(*) AS c FROM %I.posts', s.schema), false, true, '')))[1]::text::int), 0)
  FROM shardid.shards AS s});
	$found += $node{$n}->safe_psql('app', qq{
SELECT COALESCE(sum((xpath('/row/c/text()', query_to_xml(format('SELECT count(*) AS c FROM %I.posts WHERE id = ANY (''{$ids}''::bigint[])', s.schema), false, true, '')))[1]::text::int), 0)
  FROM shardid.shards AS s});
}
is($found, $acked, "every acknowledged row ($acked) is on its shard's node, once");
is($total, $loaded + $acked, 'no row was lost or doubled');

# --- retired copies ----------------------------------------------------------------
ok($router->safe_psql('app', 'SELECT count(*) FROM shardid.retired_copies') > 0, 'the moves left retired copies');
$router->safe_psql('app', 'CALL shardid.drop_retired_copies()');
is(join(' ', map { $node{$_}->safe_psql('app', "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'shard\\_%\\_moved\\_%'") } qw(a b c)),
	'0 0 0', 'drop_retired_copies() leaves no shard_%_moved_% schema');

# --- check_cluster(): a shard made live on two nodes ---------------------------
is($router->safe_psql('app', 'SELECT count(*) FROM shardid.check_cluster()'), '0', 'check_cluster(): healthy after the jobs');
my $s0 = $router->safe_psql('app', 'SELECT node FROM shardid.placement WHERE shard = 0');
my $other = $s0 eq 'a' ? 'b' : 'a';
$node{$other}->safe_psql('app', 'SELECT shardid.create_shard(0)');
is($router->safe_psql('app', "SELECT kind || ' ' || shard || ' ' || node FROM shardid.check_cluster()"),
	"shard_live_twice 0 $other", 'check_cluster() reports the shard made live on two nodes');
$node{$other}->safe_psql('app', 'SELECT shardid.detach_shard(0); DROP SCHEMA shard_0000 CASCADE');

# --- check_cluster(): a template that differs -------------------------------------
# c's template was made by the first move there; a column added to it alone
$node{c}->safe_psql('app', 'ALTER TABLE public.posts ADD COLUMN mood text');
is($router->safe_psql('app', "SELECT kind || ' ' || COALESCE(shard::text, '-') || ' ' || node || ': ' || detail FROM shardid.check_cluster() WHERE kind <> 'copy_differs'"),
	'template_differs - c: the template of sharded table posts on node "c" differs from node "a": columns',
	'check_cluster() reports the template that differs, and what');
# and c's copies, which now differ from their template (issue 36)
is($router->safe_psql('app', q{SELECT count(*) FILTER (WHERE detail LIKE '%column mood is missing') || '/' || count(*) FROM shardid.check_cluster() WHERE kind = 'copy_differs'}),
	$router->safe_psql('app', q{SELECT count(*) || '/' || count(*) FROM shardid.placement WHERE node = 'c'}),
	'check_cluster() reports each of c\'s copies as lacking the template\'s new column');
$node{c}->safe_psql('app', 'ALTER TABLE public.posts DROP COLUMN mood');
is($router->safe_psql('app', 'SELECT count(*) FROM shardid.check_cluster()'), '0', 'and nothing once it agrees again');

# --- no background worker slot free ----------------------------------------------
$router->append_conf('postgresql.conf', "max_worker_processes = 1\n");
$router->restart;
($ret, $out, $err) = $router->psql('app', "\\set VERBOSITY verbose\nSELECT shardid.rebalance_start()");
like($err, qr/53400: no background worker slot is free.*\n.*max_worker_processes \(1\)/,
	'no worker slot free: 53400 naming max_worker_processes');

done_testing();
