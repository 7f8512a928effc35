# run_on_shards.pl — run_on_shards() from a router over two nodes (issue 39).
#
# A router (dblink and shardid) and nodes a (shards 0-3) and b (shards
# 4-7), each with role reporting: the router's run_on_shards() grants
# reporting SELECT on both nodes' templates and every shard's copy, one row
# each; reporting then reads every copy on both nodes, and the router reads
# a count from each copy. A move keeps the grant (a move copies the
# source's privileges). A node that cannot be reached is one failed row,
# the other node's rows are there; refusals from the router (a template
# not schema-qualified, a definition change, a caller who may not read the
# nodes). A cancel of the router's call cancels the batch running on the
# node, and check_cluster() has nothing to say; a re-run does it all (a
# GRANT run twice is the same GRANT).
#
# At scale, on two nodes with default settings (max_locks_per_transaction =
# 64): RUN_ON_SHARDS_SHARDS shards (default 1024; 8192 for Instagram's
# layout, bench/SCALE.md) over the two, one sharded table, the GRANT from
# the router, then every copy's ACL checked on each node; the times noted.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use ShardidTest;
use Test::More;
use Time::HiRes qw(time);

my $templates = q{
CREATE ROLE reporting LOGIN;
CREATE TABLE public.items (id bigint PRIMARY KEY, body text);
};

# "copies reporting may read / copies" on a node: the template and the
# registered shards' copies of items.
sub readable
{
	my ($node) = @_;
	return $node->safe_psql('app', q{
SELECT count(*) FILTER (WHERE has_table_privilege('reporting', c.oid, 'SELECT')) || '/' || count(*)
  FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
 WHERE c.relname = 'items' AND c.relkind = 'r'
   AND (n.nspname = 'public' OR n.nspname IN (SELECT r.schema_name FROM shardid.shard_registry AS r))});
}

# --- a router and two nodes ----------------------------------------------------
my %node = map { $_ => data_node($_, sql => $templates) } qw(a b);
$node{a}->safe_psql('app', 'SELECT shardid.create_shards(0, 3)');
$node{b}->safe_psql('app', 'SELECT shardid.create_shards(4, 7)');
for my $n (qw(a b))
{
	$node{$n}->safe_psql('app', q{
SELECT shardid.create_table('public.items');
DO $$ DECLARE s record; BEGIN
    FOR s IN SELECT shard, schema FROM shardid.shards LOOP
        EXECUTE format('INSERT INTO %I.items (body) SELECT ''x'' FROM generate_series(1, %s)', s.schema, s.shard + 1);
        -- reporting may look into each shard's schema (the schema's
        -- privilege, not the table's)
        EXECUTE format('GRANT USAGE ON SCHEMA %I TO reporting', s.schema);
    END LOOP;
END $$;
});
}
my $router = router_node('router', \%node);
$router->safe_psql('app', "SELECT shardid.place_shards('a', 0, 3) + shardid.place_shards('b', 4, 7)");

is(readable($node{$_}), '0/5', "node $_: reporting may read no copy yet") for qw(a b);
my ($ret, $out, $err) = $node{a}->psql('app', 'SELECT count(*) FROM shard_0001.items', extra_params => [ '-U', 'reporting' ]);
like($err, qr/permission denied for table items/, 'reporting cannot read a copy');

my $t0 = time;
is($router->safe_psql('app', q{
SELECT string_agg(format('%s %s %s %s', node, COALESCE(shard::text, 'template'), success, result), ', ' ORDER BY node, shard NULLS FIRST)
  FROM shardid.run_on_shards('public.items', 'GRANT SELECT ON %s TO reporting', 2)}),
	'a template t GRANT, a 0 t GRANT, a 1 t GRANT, a 2 t GRANT, a 3 t GRANT, '
	  . 'b template t GRANT, b 4 t GRANT, b 5 t GRANT, b 6 t GRANT, b 7 t GRANT',
	'the GRANT from the router: a row for each node\'s template and each shard, all succeeded');
note(sprintf('run_on_shards GRANT from the router, 2 nodes of 5 tables, batches of 2: %.2f s', time - $t0));
is(readable($node{$_}), '5/5', "node $_: reporting may read the template and every copy") for qw(a b);
for my $n (qw(a b))
{
	($ret, $out, $err) = $node{$n}->psql('app', q{
DO $$
DECLARE s name; m bigint; n bigint := 0; k integer := 0;
BEGIN
    FOR s IN SELECT schema FROM shardid.shards ORDER BY shard LOOP
        EXECUTE format('SELECT count(*) FROM %I.items', s) INTO m;
        n := n + m;
        k := k + 1;
    END LOOP;
    RAISE NOTICE '% copies read: % rows', k, n;
END $$;}, extra_params => [ '-U', 'reporting' ]);
	is($ret, 0, "node $n: reporting's reads of every copy succeed");
	like($err, $n eq 'a' ? qr/4 copies read: 10 rows/ : qr/4 copies read: 26 rows/, "node $n: reporting read each copy's rows");
}
is($router->safe_psql('app', q{
SELECT string_agg(format('%s %s', shard, result), ', ' ORDER BY shard) || ' ' || bool_and(success)
  FROM shardid.run_on_shards('public.items', 'SELECT count(*) FROM %s')}),
	'0 1, 1 2, 2 3, 3 4, 4 5, 5 6, 6 7, 7 8 true', 'a read from the router: one count per shard, no template row');

# --- a move keeps the grant: it copies the source copy's privileges -------------
$router->safe_psql('app', "CALL shardid.move_shard(1, 'b')");
is($node{b}->safe_psql('app', q{SELECT has_table_privilege('reporting', 'shard_0001.items', 'SELECT')}), 't',
	'shard 1 moved to b: reporting may read its copy there');
is($router->safe_psql('app', q{
SELECT string_agg(format('%s %s', node, COALESCE(shard::text, 'template')), ', ' ORDER BY node, shard NULLS FIRST)
  FROM shardid.run_on_shards('public.items', 'COMMENT ON TABLE %s IS ''items, readable by reporting''') WHERE success}),
	'a template, a 0, a 2, a 3, b template, b 1, b 4, b 5, b 6, b 7',
	'after the move, rows follow the placement (shard 1 on b; the retired copy on a is not run)');

# --- a node that cannot be reached: one row; the other node's rows are there ---
$node{b}->stop;
is($router->safe_psql('app', q{
SELECT string_agg(format('%s %s %s', node, COALESCE(shard::text, '-'), success), ', ' ORDER BY node, shard NULLS FIRST)
  FROM shardid.run_on_shards('public.items', 'SELECT count(*) FROM %s')}),
	'a 0 t, a 2 t, a 3 t, b - f', 'b stopped: its row says it failed, a\'s rows are there');
like($router->safe_psql('app', q{SELECT result FROM shardid.run_on_shards('public.items', 'SELECT 1 FROM %s') WHERE node = 'b'}),
	qr/node "b" is unreachable: .*\(SQLSTATE 08001\)$/s, 'the failed row names the node and the SQLSTATE');
$node{b}->start;

# --- refusals from the router ---------------------------------------------------
($ret, $out, $err) = $router->psql('app', q{\set VERBOSITY verbose
SELECT * FROM shardid.run_on_shards('items', 'GRANT SELECT ON %s TO reporting')});
like($err, qr/ERROR:\s+22023: template "items" must be schema-qualified on a router/, 'a template not schema-qualified: 22023');
($ret, $out, $err) = $router->psql('app', q{\set VERBOSITY verbose
SELECT * FROM shardid.run_on_shards('public.items', 'ALTER TABLE %s ADD COLUMN x int')});
like($err, qr/ERROR:\s+0A000: run_on_shards\(\) does not run ALTER TABLE/, 'a definition change: 0A000');
like($err, qr/HINT:\s+CALL shardid\.apply_ddl\(template, command\)/, 'the hint names apply_ddl()');
$router->safe_psql('app', 'CREATE ROLE clerk LOGIN');
($ret, $out, $err) = $router->psql('app', q{\set VERBOSITY verbose
SELECT * FROM shardid.run_on_shards('public.items', 'SELECT count(*) FROM %s')}, extra_params => [ '-U', 'clerk' ]);
like($err, qr/ERROR:\s+42501: permission denied to run a command on every shard of this node/,
	'a router role that may not read shardid.nodes is no administrator, and no superuser on this database: 42501');

# --- a cancel stops the batch on the node too; a re-run finishes ----------------
# b's copy of shard 5 is locked, so the router's read (batches of 1) waits
# there; a cancel of the router's call cancels b's batch; the re-run reads
# every copy.
my $locker = $node{b}->background_psql('app');
$locker->query_safe('BEGIN; LOCK TABLE shard_0005.items IN ACCESS EXCLUSIVE MODE;');
my ($caller, $caller_pid) =
  background_call($router, 'app', "SELECT count(*) FROM shardid.run_on_shards('public.items', 'SELECT count(*) FROM %s', 1);");
$node{b}->poll_query_until('app', q{SELECT EXISTS (SELECT FROM pg_locks WHERE NOT granted AND relation = 'shard_0005.items'::regclass)})
  or die 'b never waited for shard 5';
$router->safe_psql('app', "SELECT pg_cancel_backend($caller_pid)");
ok($node{b}->poll_query_until('app', q{
SELECT NOT EXISTS (SELECT FROM pg_stat_activity WHERE application_name = 'shardid_run_on_shards' AND state = 'active')}),
	'a cancel of the router\'s call cancels the batch running on the node');
$caller->quit;
$locker->query_safe('COMMIT');
$locker->quit;
is($router->safe_psql('app', 'SELECT count(*) FROM shardid.check_cluster()'), '0', 'check_cluster() has nothing to say');
is($router->safe_psql('app', q{SELECT count(*) || ' ' || bool_and(success) FROM shardid.run_on_shards('public.items', 'SELECT count(*) FROM %s', 1)}),
	'8 true', 'the re-run reads every copy');

$router->stop;
$node{$_}->stop for qw(a b);

# --- at scale: two nodes with default settings ---------------------------------
my $shards = $ENV{RUN_ON_SHARDS_SHARDS} // 1024;
my $half = $shards / 2;
my %big;
for my $n (qw(c d))
{
	my $node = PostgreSQL::Test::Cluster->new($n);
	$node->init;
	# Cluster.pm's settings that size the lock table, back to the defaults
	$node->adjust_conf('postgresql.conf', $_, undef) for qw(wal_level max_wal_senders log_statement);
	$node->start;
	$node->safe_psql('postgres', 'CREATE DATABASE app');
	$node->safe_psql('app', "CREATE EXTENSION shardid; $templates");
	$big{$n} = $node;
}
$t0 = time;
my %bg;
for my $n (qw(c d))
{
	my ($from, $to) = $n eq 'c' ? (0, $half - 1) : ($half, $shards - 1);
	$bg{$n} = $big{$n}->background_psql('app');
	$bg{$n}->query_until(qr/started/, "\\echo started\nSET client_min_messages = warning;\n"
		  . "CALL shardid.create_shards_proc($from, $to);\nCALL shardid.create_table_proc('public.items');\n\\echo made\n");
}
for my $n (qw(c d))
{
	$bg{$n}->query_until(qr/made/, '');
	$bg{$n}->quit;
}
note(sprintf('%d shards with one table over 2 nodes (in parallel): %.1f s', $shards, time - $t0));
is($big{c}->safe_psql('app', 'SHOW max_locks_per_transaction'), $big{c}->safe_psql('app', "SELECT boot_val FROM pg_settings WHERE name = 'max_locks_per_transaction'"),
	'max_locks_per_transaction is the default');
my $big_router = router_node('big_router', \%big);
$big_router->safe_psql('app', "SELECT shardid.place_shards('c', 0, $half - 1) + shardid.place_shards('d', $half, $shards - 1)");
$t0 = time;
is($big_router->safe_psql('app', q{
SELECT count(*) || ' ' || count(*) FILTER (WHERE success) || ' ' || count(DISTINCT node)
  FROM shardid.run_on_shards('public.items', 'GRANT SELECT ON %s TO reporting')}),
	($shards + 2) . ' ' . ($shards + 2) . ' 2', "the GRANT over $shards shards and 2 templates: a row each, all succeeded");
my $grant_time = time - $t0;
note(sprintf('run_on_shards GRANT over %d shards on 2 nodes, batches of 256: %.1f s (%.2f ms a copy)', $shards, $grant_time,
		1000 * $grant_time / $shards));
is(readable($big{c}), ($half + 1) . '/' . ($half + 1), "node c: the template and its $half copies grant reporting SELECT");
is(readable($big{d}), ($half + 1) . '/' . ($half + 1), "node d: the template and its $half copies grant reporting SELECT");
$t0 = time;
is($big_router->safe_psql('app', q{
SELECT count(*) || ' ' || count(*) FILTER (WHERE success AND result = '0')
  FROM shardid.run_on_shards('public.items', 'SELECT count(*) FROM %s')}),
	"$shards $shards", "a read of all $shards copies from the router (one transaction can hold no lock on every copy)");
note(sprintf('run_on_shards read over %d shards on 2 nodes: %.1f s', $shards, time - $t0));

$big_router->stop;
$big{$_}->stop for qw(c d);
done_testing();
