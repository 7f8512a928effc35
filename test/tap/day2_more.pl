# day2_more.pl — the day-2 paths day2.pl leaves out, on a router without
# PL/Proxy and two nodes: rebalance_stop(cancel_move => true) while the
# job's move waits in its cut-over (the move is rolled back: no move in
# progress, the shard writable where it was, nothing left on the target,
# the job stopped) and once more after its repoint (the move is kept, for
# the next job to finish), then drain_node_start() (a background drain:
# reported by rebalance_status(), waited for by rebalance_wait(), the kept
# move finished first, the node empty); then drop_retired_copies() racing
# attach_shard(), a move onto the node and a second cleanup, each holding
# the registry's lock of the node in turn (issue 35, finding 2).
#
# Node a holds shards 0-3 with rows, b only the extension and the template.
use strict;
use warnings;

use File::Basename qw(dirname);
use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use ShardidTest;
use Test::More;

# the rows of every shard a node holds, as "shard:count ..."
sub shard_rows
{
	my ($node) = @_;
	return $node->safe_psql('app', q{
SELECT COALESCE(string_agg(s.shard || ':' || (xpath('/row/c/text()', query_to_xml(format('SELECT count(*) AS c FROM %I.posts', s.schema), false, true, '')))[1]::text,
                           ' ' ORDER BY s.shard), '')
  FROM shardid.shards AS s});
}

# Starts a by_count rebalance whose move the test hook holds in PHASE
# (test/lib/move_pause.sql, loaded on the router below): the move's worker reads the database's settings when it
# connects, and waits in that phase while the returned session holds the
# hook's advisory lock of the shard. Returns the job, that session and the
# shard, source and target of the move.
my $pause_key = "hashtext('shardid_test.move_pause')";

sub start_held
{
	my ($router, $phase) = @_;
	$router->safe_psql('app', "ALTER DATABASE app SET shardid_test.move_pause = '$phase'");
	my $holder = $router->background_psql('app');
	$holder->query_safe("SELECT pg_advisory_lock($pause_key, s) FROM generate_series(0, 3) AS s");
	my $job = $router->safe_psql('app', "SELECT shardid.rebalance_start('by_count')");
	$router->poll_query_until('app', qq{
SELECT s.current_phase = '$phase'
       AND EXISTS (SELECT FROM pg_locks AS l
                    WHERE l.pid IN (SELECT (e->>'worker_pid')::int FROM jsonb_array_elements(s.moves_in_flight) AS e)
                      AND l.locktype = 'advisory' AND l.classid = (${pause_key})::oid AND NOT l.granted)
  FROM shardid.rebalance_status() AS s})
	  or die "the job's move did not reach $phase";
	my ($shard, $source, $target) = split /\|/,
	  $router->safe_psql('app', 'SELECT current_shard, current_source, current_target FROM shardid.rebalance_status()');
	return ($job, $holder, $shard, $source, $target);
}

sub release_held
{
	my ($router, $holder) = @_;
	$router->safe_psql('app', 'ALTER DATABASE app RESET shardid_test.move_pause');
	$holder->quit;
	return;
}

my %node = map {
	$_ => data_node($_, sql => 'CREATE TABLE public.posts (id bigint PRIMARY KEY, user_id bigint NOT NULL, body text NOT NULL)')
} qw(a b);
$node{a}->safe_psql('app', "SELECT shardid.create_shards(0, 3)");
$node{$_}->safe_psql('app', "SELECT shardid.create_table('public.posts')") for qw(a b);
$node{a}->safe_psql('app', q{
DO $$
BEGIN
    FOR s IN 0 .. 3 LOOP
        EXECUTE format('INSERT INTO %I.posts (user_id, body) SELECT g, repeat(''x'', 100) FROM generate_series(1, %s) AS g',
                       shardid.shard_schema(s), 1000 * (s + 1));
    END LOOP;
END $$;
});
my %rows = map { $_ => 1000 * ($_ + 1) } 0 .. 3;
is(shard_rows($node{a}), join(' ', map { "$_:$rows{$_}" } 0 .. 3), 'node a holds shards 0-3 with their rows');

my $router = router_node('router', \%node);
# the pause point start_held() uses (not part of the extension)
$router->safe_psql('app', slurp_file(dirname(__FILE__) . '/../lib/move_pause.sql'));
$router->safe_psql('app', "SELECT shardid.place_shards('a', 0, 3)");
is($router->safe_psql('app', 'SELECT count(*) FROM shardid.check_cluster()'), '0', 'check_cluster(): a healthy cluster has no problem');

# --- rebalance_stop(cancel_move => true) in the cut-over --------------------------
# Held in caught_up: the shard frozen on a, the copy on b caught up, the
# router not yet pointing at b.
my ($job, $holder, $s, $source, $target) = start_held($router, 'caught_up');
is("$source $target", 'a b', "the job moves shard $s from a to b, held in caught_up");
my $schema = $node{a}->safe_psql('app', "SELECT shardid.shard_schema($s)");
my ($ret, $out, $err) = $node{a}->psql('app', "\\set VERBOSITY verbose\nINSERT INTO $schema.posts (user_id, body) VALUES (0, 'frozen')");
like($err, qr/ERROR:\s+25006:/, 'meanwhile the shard is frozen on a (25006)');

is($router->safe_psql('app', "SELECT shardid.rebalance_stop(cancel_move => true)"), 't',
	'rebalance_stop(cancel_move => true) asks the running job to stop');
like($router->safe_psql('app', "SELECT state FROM shardid.rebalance_status($job)"), qr/^(stopping|stopped)$/,
	'the job is stopping (or has stopped already)');
my $done = $router->safe_psql('app', "SELECT state || ' ' || moves_done FROM shardid.rebalance_wait($job, timeout => '2 min')");
is($done, 'stopped 0', 'rebalance_wait() returns: the job stopped with no move done');
like($router->safe_psql('app', "SELECT last_error FROM shardid.rebalance_status($job)"),
	qr/^canceling statement due to user request \(The move was rolled back: the shard stays where it was, writable\.\)$/,
	'its last error is the cancel, and the move was rolled back');
is($router->safe_psql('app', 'SELECT count(*) FROM shardid.shard_moves'), '0', 'no move is left in progress');
is($router->safe_psql('app', "SELECT node || ' ' || frozen FROM shardid.placement WHERE shard = $s"), 'a false',
	'the router still places the shard on a, not frozen');
is($node{b}->safe_psql('app', "SELECT count(*) FROM shardid.shard_registry WHERE shard = $s")
	  . ' ' . $node{b}->safe_psql('app', "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'shard\\_%'"),
	'0 0', 'b holds no copy of it, registered or not');
is($node{a}->safe_psql('app', "INSERT INTO $schema.posts (user_id, body) VALUES (0, 'after the cancel') RETURNING shardid.id_shard(id)"),
	$s, 'the shard is writable on a again');
$node{a}->safe_psql('app', "DELETE FROM $schema.posts WHERE body = 'after the cancel'");
is($router->safe_psql('app', 'SELECT count(*) FROM shardid.check_cluster()'), '0',
	'check_cluster(): no leftover of the move (publication, slot, subscription, role, freeze trigger)');
is($router->safe_psql('app', 'SELECT shardid.rebalance_stop()'), 'f', 'rebalance_stop() with no job running: false');
release_held($router, $holder);

# --- rebalance_stop(cancel_move => true) after the repoint ----------------------
# Held in repointed: the router points at b, a's copy not yet retired. The
# cancel cannot roll the move back: the job finishes it (a worker resumes
# it once the hook lets it go) before it says stopped, and no move is left.
($job, $holder, my $r) = start_held($router, 'repointed');
is($router->safe_psql('app', "SELECT shardid.rebalance_stop(cancel_move => true)"), 't',
	"rebalance_stop(cancel_move => true) while the move of shard $r is repointed");
$router->poll_query_until('app', qq{SELECT EXISTS (SELECT FROM shardid.rebalance_job_moves
                                                  WHERE job_id = $job AND shard = $r AND action = 'resume' AND outcome = 'cancelled')})
  or die 'the cancelled move was not resumed';
pass('the cancelled move, repointed, is resumed to its end rather than rolled back');
is($router->safe_psql('app', "SELECT node FROM shardid.placement WHERE shard = $r"), 'b', 'the router points at b');
is($node{b}->safe_psql('app', "INSERT INTO " . $node{b}->safe_psql('app', "SELECT quote_ident(shardid.shard_schema($r))")
	  . ".posts (user_id, body) VALUES (0, 'on b') RETURNING shardid.id_shard(id)"),
	$r, 'and b takes its writes');
$rows{$r}++;
release_held($router, $holder);
is($router->safe_psql('app', "SELECT state || ' ' || moves_done || ' ' || last_error FROM shardid.rebalance_wait($job, timeout => '2 min')"),
	'stopped 1 canceling statement due to user request', 'the job stopped, the cancel its last error, the repointed move counted');
is($router->safe_psql('app', 'SELECT count(*) FROM shardid.shard_moves'), '0', 'no move is left in progress');

# --- drain_node_start() --------------------------------------------------------
($ret, $out, $err) = $router->psql('app', "\\set VERBOSITY verbose\nSELECT shardid.drain_node_start('nowhere')");
like($err, qr/ERROR:\s+42704: node "nowhere" does not exist/, 'drain_node_start() of an unknown node: 42704');
$job = $router->safe_psql('app', "SELECT shardid.drain_node_start('a')");
$router->poll_query_until('app', q{
SELECT kind = 'drain' AND drain_node = 'a' AND state = 'running' AND moves_planned = 3
       AND current_source = 'a' AND current_target = 'b' AND current_shard IS NOT NULL
  FROM shardid.rebalance_status()})
  or die 'the drain did not report its first planned move';
pass("rebalance_status() reports the drain of a (job $job): running, 3 moves planned, from a to b");
($ret, $out, $err) = $router->psql('app', "\\set VERBOSITY verbose\nSELECT shardid.rebalance_start()");
like($err, qr/55P03: background rebalance job $job is running/, 'rebalance_start() is refused while the drain runs (55P03)');
$done = $router->safe_psql('app', "SELECT kind || ' ' || state || ' ' || moves_done || ' ' || moves_planned || ' ' || (last_error IS NULL)
  FROM shardid.rebalance_wait(timeout => '5 min')");
is($done, 'drain finished 3 3 true', 'rebalance_wait() returns when the drain has finished: 3 of 3 moves, no error');
is($router->safe_psql('app', "SELECT count(*) FROM shardid.placement WHERE node = 'a'")
	  . ' ' . $router->safe_psql('app', "SELECT count(*) FROM shardid.placement WHERE node = 'b'"),
	'0 4', 'the router places no shard on a, all four on b');
is($node{a}->safe_psql('app', 'SELECT count(*) FROM shardid.shard_registry'), '0', 'a registers no shard');
is($router->safe_psql('app', "SELECT $r = ANY (moved) FROM shardid.rebalance_jobs WHERE job_id = $job"), 'f',
	'the drain did not move again the shard the stopped job had finished moving');
is(shard_rows($node{b}), join(' ', map { "$_:$rows{$_}" } 0 .. 3), 'b holds shards 0-3 with every row, and the one written on b');
is($router->safe_psql('app', 'SELECT count(*) FROM shardid.check_cluster()'), '0', 'check_cluster(): healthy after the drain');
$router->safe_psql('app', "SELECT shardid.remove_node('a')");
is($router->safe_psql('app', "SELECT string_agg(node, ' ') FROM shardid.nodes"), 'b', 'remove_node() succeeds after the drain');
is($router->safe_psql('app', "SELECT string_agg(kind || ' ' || state, ', ' ORDER BY job_id) FROM shardid.rebalance_jobs WHERE NOT in_session"),
	'rebalance stopped, rebalance stopped, drain finished', 'every job keeps its outcome');

# --- drop_retired_copies() under the registry's lock (issue 35, finding 2) ------
# The drain left a's retired copies of shards 0-3, recorded there. With a
# added back, a cleanup's work on a waits for the lock (SHARE ROW EXCLUSIVE
# on shardid.shard_registry) that attach_shard() holds to its commit, and a
# move onto a and a second cleanup wait for the cleanup's: each holder is a
# session that has not committed.
$router->safe_psql('app', "SELECT shardid.add_node('a', \$\$" . $node{a}->connstr('app') . "\$\$)");
my %copy = map { split /\|/ } split /\n/, $node{a}->safe_psql('app',
	q{SELECT substring(nspname, '^shard_000(\d)_moved_'), nspname FROM pg_namespace WHERE nspname LIKE 'shard\_000_\_moved\_%'});
is(join(' ', sort keys %copy), '0 1 2 3', 'a keeps a retired copy of each shard it drained');
is($node{a}->safe_psql('app', 'SELECT string_agg(shard::text, \' \' ORDER BY shard) FROM shardid.retired_schemas'),
	'0 1 2 3', 'each recorded in shardid.retired_schemas');

# a session of a that waits for a lock, in database app
sub lock_waiter
{
	my ($n) = @_;
	return $n->poll_query_until('app', q{
SELECT EXISTS (SELECT FROM pg_locks AS l JOIN pg_stat_activity AS a ON a.pid = l.pid
                WHERE NOT l.granted AND a.datname = 'app' AND a.pid <> pg_backend_pid())});
}

# attach_shard() of a retired copy, not committed: the cleanup waits, then
# keeps that copy (registered again) and drops the others.
my $attacher = $node{a}->background_psql('app');
$attacher->query_safe("BEGIN; SELECT shardid.attach_shard(0, '$copy{0}')");
my $cleaner = $router->background_psql('app');
$cleaner->query_until(qr/cleanup started/, "\\echo cleanup started\nCALL shardid.drop_retired_copies();\n");
ok(lock_waiter($node{a}), "the cleanup waits on a while attach_shard() holds the registry's lock");
$attacher->query_safe('COMMIT');
$attacher->quit;
$cleaner->query_until(qr/cleanup done/, "\\echo cleanup done\n");
my $copy0 = $copy{0};
like($cleaner->{stderr}, qr/WARNING:  kept the retired copy \Q$copy0\E on node "a": it is registered as shard 0 here/,
	'the cleanup keeps the copy attach_shard() registered, and says why');
is($node{a}->safe_psql('app', "SELECT schema_name FROM shardid.shard_registry WHERE shard = 0") . ' '
	  . $node{a}->safe_psql('app', "SELECT count(*) FROM $copy{0}.posts"),
	"$copy{0} $rows{0}", 'shard 0 is registered on a in its schema, with every row (not registered with its schema gone)');
is($node{a}->safe_psql('app', q{SELECT string_agg(nspname, ' ' ORDER BY nspname) FROM pg_namespace WHERE nspname LIKE 'shard\_000_\_moved\_%'}),
	$copy{0}, 'the other copies are dropped');
$cleaner->{stderr} = '';
# a is not to serve shard 0: its copy retired again, by hand
is($node{a}->safe_psql('app', "SELECT shardid.retire_shard(0, 'b', '$copy{0}_2')"), "$copy{0}_2",
	'the copy retired again (recorded again)');

# The cleanup's transaction on a holds the lock (as when it drops a copy):
# a move of shard 1 onto a waits, and so does a second cleanup; both go on
# when it commits.
my $dropper = $node{a}->background_psql('app');
$dropper->query_safe("BEGIN; SELECT shardid_internal._drop_retired_copy('$copy{0}_2')");
my $mover = $router->background_psql('app');
$mover->query_until(qr/move started/, "\\echo move started\nCALL shardid.move_shard(1, 'a');\n");
ok(lock_waiter($node{a}), 'a move onto a waits while a cleanup there holds the lock');
is($node{a}->safe_psql('app', 'SELECT count(*) FROM shardid.shard_registry WHERE shard = 1'), '0', 'meanwhile a has made no copy of shard 1');
$cleaner->query_until(qr/second cleanup started/, "\\echo second cleanup started\nCALL shardid.drop_retired_copies();\n");
$dropper->query_safe('COMMIT');
$dropper->quit;
$mover->query_until(qr/move done/, "\\echo move done\n");
unlike($mover->{stderr}, qr/ERROR/, 'the move finished once the cleanup committed')
  or diag($mover->{stderr});
$mover->quit;
$cleaner->query_until(qr/second cleanup done/, "\\echo second cleanup done\n");
unlike($cleaner->{stderr}, qr/ERROR|WARNING/, 'the second cleanup found the copy gone and failed on nothing')
  or diag($cleaner->{stderr});
$cleaner->quit;
is($router->safe_psql('app', 'SELECT node FROM shardid.placement WHERE shard = 1') . ' '
	  . $node{a}->safe_psql('app', "SELECT count(*) FROM " . $node{a}->safe_psql('app', 'SELECT quote_ident(shardid.shard_schema(1))') . '.posts'),
	"a $rows{1}", 'shard 1 is on a with every row');
is($node{a}->safe_psql('app', q{SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'shard\_000_\_moved\_%'}), '0',
	'a keeps no retired copy');
$router->safe_psql('app', 'CALL shardid.drop_retired_copies()');
is($router->safe_psql('app', 'SELECT count(*) FROM shardid.retired_copies'), '0',
	"the move's retired copy on b is dropped too: none left");
is($router->safe_psql('app', 'SELECT count(*) FROM shardid.check_cluster()'), '0', 'check_cluster(): healthy');

done_testing();
