# grants.pl — privileges follow the shards (issue 46): one call on a
# router gives a role what it needs on every shard of a template, on every
# node, and shards made or moved later have it too.
#
# A router and nodes a (shards 0-3), b (4-7) and c (8-11), each with roles
# reporting, writer and mallory. grant_shards() from the router, once per
# role: reporting reads (SELECT) and writer inserts (SELECT, INSERT: the
# generator's USAGE, which next_id() needs) through every shard's copy on
# the three nodes, with nothing granted by hand (no schema USAGE, no
# generator USAGE). Then shards made afterwards (12, 13 on c) and a shard
# moved afterwards (1, a to c) work for both roles; check_cluster() has
# nothing to say. A privilege taken from one copy and a schema's USAGE
# taken from one shard (REVOKE by hand) are privileges_differ rows whose
# fix, a call of align_privileges() on the node, restores them. mallory,
# who owns nothing, cannot grant herself anything on the tables through
# grant_shards(), run_on_shards() or the internal helpers (42501).
# revoke_shards() takes INSERT back, and the generators' USAGE with it.
# Error paths with their SQLSTATEs.
#
# GRANTS_SHARDS=N (e.g. 8192) adds the closing figure of issue 46: N
# shards of one table over two nodes with default settings, and the time
# grant_shards() takes from a router to grant a role every shard.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use ShardidTest;
use Test::More;
use Time::HiRes qw(time);

my $setup = q{
CREATE ROLE reporting LOGIN;
CREATE ROLE writer LOGIN;
CREATE ROLE mallory LOGIN;
CREATE TABLE public.posts (id bigint PRIMARY KEY, user_id bigint, body text);
};

# as ROLE on NODE: every registered shard's copy read (or, write, one row
# inserted into each), "shards ok/shards", the failures' first message.
sub through_every_shard
{
	my ($node, $role, $write) = @_;
	my $stmt = $write
	  ? q{EXECUTE format('INSERT INTO %I.posts (user_id, body) VALUES (1, ''via every shard'')', s)}
	  : q{EXECUTE format('SELECT count(*) FROM %I.posts', s) INTO m};
	my ($ret, $out, $err) = $node->psql('app', qq{
DO \$\$
DECLARE s name; m bigint; ok integer := 0; k integer := 0; msg text;
BEGIN
    FOR s IN SELECT schema FROM shardid.shards ORDER BY shard LOOP
        k := k + 1;
        BEGIN
            $stmt;
            ok := ok + 1;
        EXCEPTION WHEN OTHERS THEN
            msg := COALESCE(msg, SQLERRM);
        END;
    END LOOP;
    RAISE NOTICE 'result: %/% %', ok, k, COALESCE(msg, '');
END \$\$;}, extra_params => [ '-U', $role ]);
	return $err =~ /result: (.*?)\s*$/m ? $1 : "failed: $err";
}

# every node's shards, for both roles: "node reads/writes" on each node
sub both_roles_everywhere
{
	my ($nodes, $label) = @_;
	for my $n (sort keys %$nodes)
	{
		my $count = $nodes->{$n}->safe_psql('app', 'SELECT count(*) FROM shardid.shard_registry');
		is(through_every_shard($nodes->{$n}, 'reporting', 0), "$count/$count", "$label: node $n: reporting reads every copy");
		is(through_every_shard($nodes->{$n}, 'writer', 1), "$count/$count", "$label: node $n: writer inserts into every copy");
	}
}

my %node = map { $_ => data_node($_, sql => $setup) } qw(a b c);
my %range = (a => [ 0, 3 ], b => [ 4, 7 ], c => [ 8, 11 ]);
for my $n (qw(a b c))
{
	$node{$n}->safe_psql('app', "SELECT shardid.create_shards($range{$n}[0], $range{$n}[1]); SELECT shardid.create_table('public.posts');");
}
my $router = router_node('router', \%node);
$router->safe_psql('app', join(' + ', 'SELECT 0', map { "shardid.place_shards('$_', $range{$_}[0], $range{$_}[1])" } qw(a b c)));

like(through_every_shard($node{a}, 'reporting', 0), qr{^0/4 permission denied for schema shard_0000}, 'before: reporting may not even look into a shard\'s schema');

# --- one call per role, on the router ------------------------------------------
my $t0 = time;
is($router->safe_psql('app', q{
SELECT count(*) || ' ' || bool_and(success) || ' ' || string_agg(DISTINCT result, ',') || ' ' || count(DISTINCT node)
  FROM shardid.grant_shards('public.posts', 'reporting')}),
	'15 true GRANT 3', 'grant_shards(reporting) from the router: 3 templates and 12 copies, on 3 nodes');
is($router->safe_psql('app', q{
SELECT count(*) || ' ' || bool_and(success) FROM shardid.grant_shards('public.posts', 'writer', ARRAY['select', 'INSERT'])}),
	'15 true', 'grant_shards(writer, SELECT and INSERT) from the router');
note(sprintf('two grant_shards() calls over 3 nodes of 4 shards: %.2f s', time - $t0));
both_roles_everywhere(\%node, 'after one call per role');
is($node{b}->safe_psql('app', q{
SELECT string_agg(format('%s %s %s', r, has_schema_privilege(r, 'shard_0005', 'USAGE'), has_sequence_privilege(r, 'shard_0005.id_seq', 'USAGE')), ', ' ORDER BY r)
  FROM unnest(ARRAY['mallory', 'reporting', 'writer']) AS r}),
	'mallory f f, reporting t f, writer t t', 'the schema\'s USAGE to both roles, the generator\'s to the writer only');
is(through_every_shard($node{a}, 'mallory', 0), '0/4 permission denied for schema shard_0000', 'mallory got nothing');

# --- shards made afterwards, a shard moved afterwards --------------------------
$node{c}->safe_psql('app', 'SELECT shardid.create_shards(12, 13)');
$router->safe_psql('app', "SELECT shardid.place_shards('c', 12, 13)");
$router->safe_psql('app', "CALL shardid.move_shard(1, 'c')");
is($node{c}->safe_psql('app', 'SELECT string_agg(shard::text, \',\' ORDER BY shard) FROM shardid.shard_registry'), '1,8,9,10,11,12,13',
	'c holds shards 8-11, the new 12 and 13, and shard 1 moved from a');
both_roles_everywhere(\%node, 'shards made and moved afterwards');
is($router->safe_psql('app', 'SELECT count(*) FROM shardid.check_cluster()'), '0', 'check_cluster() has nothing to say');

# --- drift: check_cluster() reports it, its fix restores it ---------------------
$node{b}->safe_psql('app', 'REVOKE SELECT ON shard_0005.posts FROM reporting; REVOKE USAGE ON SCHEMA shard_0006 FROM writer;');
$node{b}->safe_psql('app', 'GRANT DELETE ON shard_0007.posts TO mallory');
# one check_cluster() call, its rows kept: kind|shard|node|run_on|fix, then the details
my @rows = split /\n/, $router->safe_psql('app', q{
SELECT format('%s|%s|%s|%s|%s', kind, shard, node, run_on, fix) FROM shardid.check_cluster() ORDER BY shard});
my %detail = split /\|/, join('|', split /\n/, $router->safe_psql('app', q{
SELECT format('%s|%s', shard, detail) FROM shardid.check_cluster() ORDER BY shard}));
is(join("\n", @rows),
	join("\n",
		'privileges_differ|5|b|b|SELECT * FROM shardid.align_privileges(5);',
		'privileges_differ|6|b|b|SELECT * FROM shardid.align_privileges(6);',
		'privileges_differ|7|b|b|SELECT * FROM shardid.align_privileges(7);'),
	'check_cluster(): a privilege taken from a copy, a schema\'s USAGE taken, a grant the template does not give');
like($detail{5} // '', qr/^shard 5 on node "b" differs from the privileges its templates record: table shard_0005\.posts: reporting lacks SELECT$/,
	'the detail names the copy, the role and the privilege');
like($detail{6} // '', qr/schema shard_0006: writer lacks USAGE$/, 'the schema\'s missing USAGE');
like($detail{7} // '', qr/table shard_0007\.posts: mallory has DELETE, which its template does not give$/, 'a copy\'s grant its template does not give');

# mallory cannot run the fix, nor the steps behind it
my ($ret, $out, $err) = $node{b}->psql('app', 'SELECT * FROM shardid.align_privileges(5)', extra_params => [ '-U', 'mallory', '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ERROR:\s+42501: permission denied for function align_privileges/, 'mallory may not call align_privileges(): 42501');
($ret, $out, $err) = $node{b}->psql('app', q{SELECT * FROM shardid_internal._align_privileges(ARRAY[5], NULL, false, false)},
	extra_params => [ '-U', 'mallory', '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ERROR:\s+42501: permission denied to run a statement as role "postgres"/, 'nor its steps: the fence wants the owner\'s privileges (42501)');
($ret, $out, $err) = $node{b}->psql('app', q{SELECT * FROM shardid_internal._align_privileges(ARRAY[5], NULL, false, false, 'mallory')});
like($err, qr/ERROR:  permission denied to run a statement as role postgres, the owner of the table/,
	'a step for a role without the owner\'s privileges is refused before anything runs (42501)');

# each fix on its node (run_on), as check_cluster() gave it
for my $row (@rows)
{
	my (undef, undef, undef, $run_on, $fix) = split /\|/, $row;
	$node{$run_on}->safe_psql('app', $fix);
}
is($router->safe_psql('app', 'SELECT count(*) FROM shardid.check_cluster()'), '0', 'the three fixes run on b: check_cluster() clean');
is($node{b}->safe_psql('app', q{SELECT has_table_privilege('reporting', 'shard_0005.posts', 'SELECT') AND has_schema_privilege('writer', 'shard_0006', 'USAGE')
                                       AND NOT has_table_privilege('mallory', 'shard_0007.posts', 'DELETE')}),
	't', 'the fixes restored the privileges and took the stray one');
both_roles_everywhere({ b => $node{b} }, 'after the fixes');

# --- mallory cannot grant herself anything on the tables -----------------------
for my $n (qw(a c))
{
	($ret, $out, $err) = $node{$n}->psql('app', q{SELECT * FROM shardid.grant_shards('public.posts', 'mallory', ARRAY['SELECT', 'INSERT'])},
		extra_params => [ '-U', 'mallory', '-v', 'VERBOSITY=verbose' ]);
	like($err, qr/ERROR:\s+42501: permission denied to run a command on every shard of this node/, "node $n: mallory's grant_shards(): 42501");
}
$router->safe_psql('app', 'CREATE ROLE mallory LOGIN');
($ret, $out, $err) = $router->psql('app', q{SELECT * FROM shardid.grant_shards('public.posts', 'mallory')},
	extra_params => [ '-U', 'mallory', '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ERROR:\s+42501: permission denied/, 'on the router too: 42501');
($ret, $out, $err) = $node{a}->psql('app', q{
SELECT * FROM shardid_internal._run_on_shards_batch('public.posts', 'GRANT SELECT, INSERT ON %s TO mallory', ARRAY[0, 2], true)},
	extra_params => [ '-U', 'mallory', '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ERROR:\s+42501: permission denied to run a command on the copies of sharded table posts/,
	'the batch helper grant_shards() runs on a node: 42501 for a role without the template owner\'s privileges');
is(through_every_shard($node{$_}, 'mallory', 0), '0/' . $node{$_}->safe_psql('app', 'SELECT count(*) FROM shardid.shard_registry') . ' permission denied for schema shard_000' . { a => 0, b => 4, c => 1 }->{$_},
	"node $_: mallory still reads nothing") for qw(a b c);

# --- revoke_shards(): INSERT taken back, and the generators' USAGE -------------
is($router->safe_psql('app', q{SELECT count(*) || ' ' || bool_and(success) FROM shardid.revoke_shards('public.posts', 'writer', ARRAY['INSERT'])}),
	'17 true', 'revoke_shards(writer, INSERT) from the router: 3 templates and 14 copies');
like(through_every_shard($node{c}, 'writer', 1), qr{^0/7 permission denied for table posts$}, 'writer inserts nowhere any more');
is(through_every_shard($node{c}, 'writer', 0), '7/7', 'and still reads everywhere');
is($node{c}->safe_psql('app', q{SELECT bool_or(has_sequence_privilege('writer', format('%I.id_seq', schema), 'USAGE')) FROM shardid.shards}),
	'f', 'no generator\'s USAGE is left to writer');
is($router->safe_psql('app', 'SELECT count(*) FROM shardid.check_cluster()'), '0', 'check_cluster() clean after the revoke');

# --- refusals -------------------------------------------------------------------
($ret, $out, $err) = $router->psql('app', q{SELECT * FROM shardid.grant_shards('public.posts', 'writer', ARRAY['SELECT', 'EXECUTE'])},
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ERROR:\s+22023: grant_shards\(\) takes table privileges, not 'EXECUTE'/, 'a privilege no table has: 22023');
($ret, $out, $err) = $router->psql('app', q{SELECT * FROM shardid.grant_shards('public.posts', 'writer', ARRAY['ALL', 'SELECT'])},
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ERROR:\s+22023: grant_shards\(\) takes table privileges/, 'ALL with another: 22023');
($ret, $out, $err) = $router->psql('app', q{SELECT * FROM shardid.revoke_shards('public.posts', NULL)},
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ERROR:\s+22004: revoke_shards arguments must not be NULL/, 'a NULL role: 22004');
($ret, $out, $err) = $router->psql('app', q{SELECT * FROM shardid.grant_shards('posts', 'writer')},
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ERROR:\s+22023: template "posts" must be schema-qualified on a router/, 'a template not schema-qualified on a router: 22023');
like($router->safe_psql('app', q{SELECT string_agg(DISTINCT result, ', ') FROM shardid.grant_shards('public.nothing', 'writer') WHERE NOT success}),
	qr/"public\.nothing" is not the template of a sharded table .*\(SQLSTATE 42P01\)/, 'no such template: each node\'s failed row, 42P01');
like($router->safe_psql('app', q{SELECT string_agg(DISTINCT result, ', ') FROM shardid.grant_shards('public.posts', 'nobody') WHERE NOT success}),
	qr/role "nobody" does not exist \(SQLSTATE 42704\)/, 'no such role: failed rows, 42704');
($ret, $out, $err) = $node{a}->psql('app', 'SELECT * FROM shardid.align_privileges(99)', extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ERROR:\s+42704: shard 99 is not registered on this node/, 'align_privileges() of a shard not here: 42704');

$router->stop;
$node{$_}->stop for qw(a b c);

# --- the closing figure: GRANTS_SHARDS shards over two nodes --------------------
if (my $shards = $ENV{GRANTS_SHARDS})
{
	my $half = $shards / 2;
	my %big;
	for my $n (qw(d e))
	{
		my $node = PostgreSQL::Test::Cluster->new($n);
		$node->init;
		# Cluster.pm's settings that size the lock table, back to the defaults
		$node->adjust_conf('postgresql.conf', $_, undef) for qw(wal_level max_wal_senders log_statement);
		$node->start;
		$node->safe_psql('postgres', 'CREATE DATABASE app');
		$node->safe_psql('app', "CREATE EXTENSION shardid; $setup");
		$big{$n} = $node;
	}
	$t0 = time;
	my %bg;
	for my $n (qw(d e))
	{
		my ($from, $to) = $n eq 'd' ? (0, $half - 1) : ($half, $shards - 1);
		$bg{$n} = $big{$n}->background_psql('app');
		$bg{$n}->query_until(qr/started/, "\\echo started\nSET client_min_messages = warning;\n"
			  . "CALL shardid.create_shards_proc($from, $to);\nCALL shardid.create_table_proc('public.posts');\n\\echo made\n");
	}
	for my $n (qw(d e))
	{
		$bg{$n}->query_until(qr/made/, '');
		$bg{$n}->quit;
	}
	note(sprintf('%d shards of one table over 2 nodes (in parallel): %.1f s', $shards, time - $t0));
	my $big_router = router_node('big_router', \%big);
	$big_router->safe_psql('app', "SELECT shardid.place_shards('d', 0, $half - 1) + shardid.place_shards('e', $half, $shards - 1)");
	$t0 = time;
	is($big_router->safe_psql('app', q{
SELECT count(*) || ' ' || count(*) FILTER (WHERE success) FROM shardid.grant_shards('public.posts', 'writer', ARRAY['SELECT', 'INSERT'])}),
		($shards + 2) . ' ' . ($shards + 2), "grant_shards() of $shards shards over two nodes: every row succeeded");
	my $took = time - $t0;
	diag(sprintf('grant_shards(SELECT, INSERT) from a router, %d shards over 2 nodes, default settings: %.1f s', $shards, $took));
	for my $n (qw(d e))
	{
		is($big{$n}->safe_psql('app', q{
SELECT count(*) FILTER (WHERE has_table_privilege('writer', format('%I.posts', schema), 'INSERT')
                          AND has_schema_privilege('writer', schema, 'USAGE')
                          AND has_sequence_privilege('writer', format('%I.id_seq', schema), 'USAGE'))
  FROM shardid.shards}), $half, "node $n: writer may insert into each of its $half shards");
	}
	$t0 = time;
	is($big_router->safe_psql('app', 'SELECT count(*) FROM shardid.check_cluster()'), '0', 'check_cluster() clean');
	diag(sprintf('check_cluster() over %d shards: %.1f s', $shards, time - $t0));
	$big_router->stop;
	$big{$_}->stop for qw(d e);
}

done_testing();
