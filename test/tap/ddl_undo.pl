# ddl_undo.pl — the way back from a failed apply_ddl() in one call, and the
# way forward, on a router and two nodes (issue 46).
#
# A router (dblink and shardid) and nodes a (shards 0-23) and b (shards
# 24-47); shard 19 on a holds two rows of one user. apply_ddl() of CREATE
# UNIQUE INDEX CONCURRENTLY from the router fails there: a's template and
# shards 0-18 have the index, shard 19 an invalid one, b nothing, and a
# move from b into a is refused. abandon_ddl(template, undo => true) on
# the router takes it all back in one call (the index dropped
# CONCURRENTLY where it was made, the invalid one too; b has nothing to
# undo): no index of that name is left, the ledgers say abandoned and
# undone, a move into a succeeds and check_cluster() has nothing to say.
# The same failure again, its undo cancelled mid-way from the router (a
# session holds one of a's tables): the undo stays open, check_cluster()
# names it, and calling it again finishes it. Then the same failure, the
# duplicates deleted, and the way forward: the
# re-CALL of apply_ddl() completes it on both nodes (shard 19's invalid
# index dropped first), a move into a succeeds, check_cluster() is clean.
# check_cluster()'s fix for a copy that lacks the index builds it
# CONCURRENTLY: a write to the copy goes on while the build waits for an
# open writer; cancelled there, it is reported and the same call finishes
# it. Last, a change with no safe inverse (ADD COLUMN with a
# CHECK that shard 19's rows fail): the undo is refused (0A000) before
# anything changes, its HINT the apply_ddl() call that completes it.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use ShardidTest;
use Test::More;
use Time::HiRes qw(time);

my $index = q{CREATE UNIQUE INDEX CONCURRENTLY posts_user_uq ON %s (user_id)};

# dblink on the nodes too: check_cluster()'s index fix builds on a connection of its own
my %node = map {
	$_ => data_node($_, sql => 'CREATE EXTENSION dblink; CREATE TABLE public.posts (id bigint PRIMARY KEY, user_id bigint NOT NULL, body text)')
} qw(a b);
$node{a}->safe_psql('app', 'SELECT shardid.create_shards(0, 23)');
$node{b}->safe_psql('app', 'SELECT shardid.create_shards(24, 47)');
for my $n (qw(a b))
{
	$node{$n}->safe_psql('app', q{SELECT shardid.create_table('public.posts');
DO $$ DECLARE s record; BEGIN
    FOR s IN SELECT shard, schema FROM shardid.shards LOOP
        EXECUTE format('INSERT INTO %I.posts (user_id, body) SELECT %s * 100 + g, ''x'' FROM generate_series(1, 3) AS g', s.schema, s.shard);
    END LOOP;
END $$;});
}
$node{a}->safe_psql('app', q{INSERT INTO shard_0019.posts (user_id, body) VALUES (7, 'one'), (7, 'two')});
my $router = router_node('router', \%node);
$router->safe_psql('app', "SELECT shardid.place_shards('a', 0, 23) + shardid.place_shards('b', 24, 47)");

# "tables with the index, valid or not / invalid ones" on a node: the
# template and the registered shards (not a move's retired copy)
sub indexes
{
	my ($node) = @_;
	return $node->safe_psql('app', q{
SELECT count(*) || '/' || count(*) FILTER (WHERE NOT x.indisvalid)
  FROM pg_index AS x JOIN pg_class AS i ON i.oid = x.indexrelid JOIN pg_namespace AS n ON n.oid = i.relnamespace
 WHERE i.relname = 'posts_user_uq' AND (n.nspname = 'public' OR n.nspname IN (SELECT schema_name FROM shardid.shard_registry))});
}

sub check_cluster
{
	return $router->safe_psql('app',
		q{SELECT COALESCE(string_agg(kind || ' ' || COALESCE(shard::text, '-') || ' ' || node || ': ' || detail, '; '), 'clean') FROM shardid.check_cluster()});
}

# the failure: a's template and shards 0-18 (and those of a's shards after
# 19 that the node's other connections built meanwhile: apply_ddl() builds
# 4 tables of a node at once from the router), an invalid index on 19, b
# nothing. Returns how many tables of a have the index, valid or not.
sub fail_on_19
{
	my ($ret, $out, $err) = $router->psql('app', "CALL shardid.apply_ddl('public.posts', '$index')");
	like($err, qr/could not create unique index "posts_user_uq" \(on shard_0019\)/, 'apply_ddl() fails on shard 19\'s duplicates');
	my ($with, $invalid) = split m{/}, indexes($node{a});
	my $after = $router->safe_psql('app', q{SELECT count(*) FROM shardid.placement WHERE node = 'a' AND shard > 19});
	ok($with >= 21 && $with <= 21 + $after && $invalid == 1 && indexes($node{b}) eq '0/0',
		"a: the template, shards 0-18 and " . ($with - 21) . " of its $after shards after 19 have the index, shard 19 an invalid one; b has none")
	  or diag('a: ' . indexes($node{a}) . ', b: ' . indexes($node{b}));
	return $with;
}

# --- the way back ----------------------------------------------------------------
my $applied = fail_on_19();
my ($ret, $out, $err) = $router->psql('app', "CALL shardid.move_shard(30, 'a')");
isnt($ret, 0, 'a move into a is refused while the change is half-made');
note("the move's refusal: $err");

my $t0 = time;
is($router->safe_psql('app', q{
SELECT string_agg(node || ' ' || targets_with || ' ' || targets_without || ' ' || command, ', ' ORDER BY node)
  FROM shardid.abandon_ddl('public.posts', undo => true)}),
	"a $applied 0 DROP INDEX CONCURRENTLY IF EXISTS %s_user_uq, b 0 0 DROP INDEX CONCURRENTLY IF EXISTS %s_user_uq",
	"abandon_ddl(undo => true) on the router: one call; on a it reverses the $applied tables that have the index, on b none");
note(sprintf('undo from the router, 2 nodes of 25 tables: %.2f s', time - $t0));
is(indexes($node{a}) . ' ' . indexes($node{b}), '0/0 0/0', 'no index of that name is left, valid or invalid, on either node');
is($router->safe_psql('app', q{
SELECT string_agg(kind || ' ' || abandoned || ' ' || (finished_at IS NOT NULL), ', ' ORDER BY change_id) FROM shardid.ddl_changes}),
	'CREATE INDEX true true, DROP INDEX (undo of change 1) false true',
	'the router: the change abandoned, its undo finished');
is($node{a}->safe_psql('app', q{
SELECT string_agg(kind || ' ' || abandoned || ' ' || (finished_at IS NOT NULL), ', ' ORDER BY change_id) FROM shardid.ddl_changes}),
	'CREATE INDEX true true, DROP INDEX (undo of change 1) false true',
	'node a: the same');
$router->safe_psql('app', "CALL shardid.move_shard(30, 'a')");
is($router->safe_psql('app', 'SELECT node FROM shardid.placement WHERE shard = 30'), 'a', 'after the undo, a move into a succeeds');
is(check_cluster(), 'clean', 'check_cluster() has nothing to say after the undo');

# --- an interrupted undo, and the call that finishes it --------------------------
# The undo's DROP INDEX CONCURRENTLY of shard 5's copy on a waits for a
# session that holds that table; the router's call is cancelled (Ctrl-C)
# meanwhile. The cancel reaches a; the undo stays open, check_cluster()
# names it, and calling abandon_ddl(undo => true) again finishes it.
fail_on_19();
my $locker = $node{a}->background_psql('app');
$locker->query_safe('BEGIN; LOCK TABLE shard_0005.posts IN ACCESS SHARE MODE;');
my ($caller, $caller_pid) = background_call($router, 'app', "SELECT * FROM shardid.abandon_ddl('public.posts', undo => true);");
$node{a}->poll_query_until('app', q{SELECT EXISTS (SELECT FROM pg_stat_activity WHERE query LIKE 'DROP INDEX CONCURRENTLY%shard\_0005%' AND wait_event_type = 'Lock')})
  or die 'the undo never waited for shard 5';
$router->safe_psql('app', "SELECT pg_cancel_backend($caller_pid)");
ok($node{a}->poll_query_until('app', q{SELECT NOT EXISTS (SELECT FROM pg_stat_activity WHERE application_name = 'shardid_apply_ddl' AND state = 'active')}),
	'a cancel of the router\'s call ends the undo\'s statements on a too');
$caller->quit;
$locker->query_safe('COMMIT');
$locker->quit;
my ($left) = split m{/}, indexes($node{a});
ok($left >= 1, "the cancelled undo left $left of a's tables with the index")
  or diag(indexes($node{a}));
is($node{a}->safe_psql('app', q{SELECT count(*) FROM pg_indexes WHERE schemaname = 'shard_0005' AND indexname = 'posts_user_uq'}), '1',
	'shard 5 still has the index');
my $meanwhile = check_cluster();
like($meanwhile, qr/ddl_unfinished - a: apply_ddl\(\) of DROP INDEX CONCURRENTLY IF EXISTS %s_user_uq on public\.posts is unfinished on node "a"/,
	'meanwhile check_cluster() names the unfinished undo on a');
note("check_cluster() after the cancel: $meanwhile");
$router->safe_psql('app', q{SELECT * FROM shardid.abandon_ddl('public.posts', undo => true)});
is(indexes($node{a}) . ' ' . indexes($node{b}), '0/0 0/0', 'calling abandon_ddl(undo => true) again finishes the undo: no index of that name on either node');
is(join(' ', map { $_->safe_psql('app', 'SELECT count(*) FROM shardid.ddl_changes WHERE finished_at IS NULL') } $router, $node{a}, $node{b}),
	'0 0 0', 'no change is left open on the router or a node');
is(check_cluster(), 'clean', 'check_cluster() has nothing to say after the finished undo');

# --- the way forward -------------------------------------------------------------
fail_on_19();
$node{a}->safe_psql('app', q{DELETE FROM shard_0019.posts WHERE body = 'two'});
$router->safe_psql('app', "CALL shardid.apply_ddl('public.posts', '$index')");
is(indexes($node{a}) . ' ' . indexes($node{b}), '26/0 24/0',
	'the re-CALL completes it: a\'s template and 25 shards, b\'s template and 23 shards, all valid');
$router->safe_psql('app', "CALL shardid.move_shard(31, 'a')");
is($router->safe_psql('app', 'SELECT node FROM shardid.placement WHERE shard = 31'), 'a', 'after the completing call, a move into a succeeds');
is(indexes($node{a}) . ' ' . indexes($node{b}), '27/0 23/0', 'shard 31 came with its index');
is(check_cluster(), 'clean', 'check_cluster() has nothing to say after the completing call');

# --- check_cluster()'s index fix never blocks writes ---------------------------------
$node{a}->safe_psql('app', 'DROP INDEX shard_0005.posts_user_uq');
is($router->safe_psql('app', q{SELECT string_agg(kind || ' ' || shard || ' ' || node || ' ' || run_on || ': ' || fix, '; ') FROM shardid.check_cluster()}),
	q{copy_differs 5 a a: CALL shardid.build_copy_index(5, 'posts', 'posts_user_uq');},
	'check_cluster(): shard 5\'s copy lacks the index; its fix builds it, on a');
my $hold = $node{a}->background_psql('app');
$hold->query_safe(q{BEGIN; INSERT INTO shard_0005.posts (user_id, body) VALUES (90001, 'held')});
my $building = q{
SELECT EXISTS (SELECT FROM pg_stat_activity
                WHERE query LIKE 'CREATE UNIQUE INDEX CONCURRENTLY posts_user_uq ON shard_0005.posts %' AND wait_event_type = 'Lock')};
my ($fix, $fix_pid) = background_call($node{a}, 'app', "CALL shardid.build_copy_index(5, 'posts', 'posts_user_uq');");
ok($node{a}->poll_query_until('app', $building), 'the fix builds CONCURRENTLY: it waits for the open writer');
is($node{a}->safe_psql('app', q{SET lock_timeout = '3s'; INSERT INTO shard_0005.posts (user_id, body) VALUES (90002, 'meanwhile') RETURNING body}),
	'meanwhile', 'a write to the copy goes on while the index is built (a plain CREATE INDEX would queue it)');
# the fix interrupted (Ctrl-C) while it waits: its build ends too, the
# invalid index it leaves is reported, and the same call finishes it
$node{a}->safe_psql('app', "SELECT pg_cancel_backend($fix_pid)");
ok($node{a}->poll_query_until('app', q{SELECT NOT EXISTS (SELECT FROM pg_stat_activity WHERE query LIKE 'CREATE UNIQUE INDEX CONCURRENTLY posts_user_uq%' AND state = 'active')}),
	'a cancel of the fix ends its build too');
$fix->quit;
is($node{a}->safe_psql('app', q{SELECT indisvalid FROM pg_index WHERE indexrelid = 'shard_0005.posts_user_uq'::regclass}),
	'f', 'the cancelled build left an invalid index');
is(check_cluster(),
	'copy_differs 5 a: shard_0005.posts on node "a" lacks index posts_user_uq of its template (or has it invalid); the fix builds it CONCURRENTLY',
	'meanwhile check_cluster() reports it, with the same fix');
$fix = $node{a}->background_psql('app');
$fix->query_until(qr/building/, "\\echo building\nCALL shardid.build_copy_index(5, 'posts', 'posts_user_uq');\n");
ok( $node{a}->poll_query_until(
		'app', q{
SELECT EXISTS (SELECT FROM pg_stat_activity
                WHERE query ~ '^(DROP INDEX CONCURRENTLY shard_0005\.posts_user_uq|CREATE UNIQUE INDEX CONCURRENTLY posts_user_uq ON shard_0005\.posts)'
                  AND wait_event_type = 'Lock')}),
	'the fix called again drops the invalid index and builds it again, CONCURRENTLY: it waits for the writer');
$hold->query_safe('COMMIT');
$hold->quit;
$fix->quit;
is($node{a}->safe_psql('app', q{SELECT indisvalid FROM pg_index WHERE indexrelid = 'shard_0005.posts_user_uq'::regclass}),
	't', 'the index is built, valid');
is(check_cluster(), 'clean', 'check_cluster() has nothing to say once it is built');

# --- no safe inverse: refused, the completing call in the HINT -------------------
($ret, $out, $err) = $router->psql('app', q{CALL shardid.apply_ddl('public.posts', 'ALTER TABLE %s ADD COLUMN n integer CHECK (user_id <> 7)', 4)});
like($err, qr/check constraint "posts_user_id_check" of relation "posts" is violated by some row \(on shard_0019\.posts\)/,
	'an ADD COLUMN with a CHECK fails on shard 19, after other tables of a have it');
($ret, $out, $err) = $router->psql('app', q{\set VERBOSITY verbose
SELECT * FROM shardid.abandon_ddl('public.posts', undo => true)});
like($err, qr/ERROR:\s+0A000: abandon_ddl\(\) cannot undo ADD COLUMN of public\.posts: it has no safe inverse/,
	'its undo is refused (0A000)');
like($err, qr/HINT:\s+Complete it on the tables that lack it instead: CALL shardid\.apply_ddl\('public\.posts', 'ALTER TABLE %s ADD COLUMN n integer CHECK \(user_id <> 7\)'\);/,
	'the HINT is the apply_ddl() call that completes it');
is($router->safe_psql('app', q{SELECT count(*) FROM shardid.ddl_changes WHERE finished_at IS NULL AND command LIKE '%ADD COLUMN n%'}),
	'1', 'nothing changed: the change is still open on the router');

done_testing();
