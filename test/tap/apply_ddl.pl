# apply_ddl.pl — apply_ddl() across nodes and across interruptions.
#
# A router (dblink and shardid, no PL/Proxy) and nodes a (shards 0-3) and b
# (shards 4-7): apply_ddl() from the router adds a column with a default,
# then, CONCURRENTLY, an index under a name PostgreSQL would not choose, on
# both nodes' templates and every shard. Moves then keep both: shard 1 from
# a to b, and shard 5, owned by a role of its own and with an index of its
# own (a DBA's CREATE INDEX on that shard alone), from b to a, where the
# index is made as the table's owner. A node with only the extension
# receives a shard: the move makes the templates there first (refused,
# with a hint, while a table of the template's name is in the way).
# One identity per change (issue 36): a cancel of the router's CALL
# cancels the node's statement, and a node that finished a change the
# router did not record is not run twice; a change the first node refuses
# is kept nowhere; abandon_ddl() closes a change part of the way, on the
# router and every node; a node with only the extension has nothing to
# change.
#
# One node with default settings (max_locks_per_transaction 64) and 4096
# shards: a plain ADD COLUMN (no IF NOT EXISTS) is ended by
# pg_terminate_backend() while it runs; the ledger agrees with the tables
# at that moment, another command is refused, and the re-CALL finishes it:
# every table has the column, the ledger is complete. The same for CREATE
# INDEX CONCURRENTLY over 512 shards: no second or invalid index is left.
# CONCURRENTLY on 4 connections at once: builds seen running together from
# another session, the CALL ended while they run, the re-CALL finishes.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use ShardidTest;
use Test::More;
use Time::HiRes qw(time);

# A data node with the role a shard is given to, and the templates.
my $templates = q{
CREATE ROLE app_owner;
CREATE TABLE public.posts (id bigint PRIMARY KEY, user_id bigint NOT NULL, body text COLLATE "C" NOT NULL CHECK (body <> ''),
                           body_len integer GENERATED ALWAYS AS (length(body)) STORED);
CREATE TABLE public.comments (id bigint PRIMARY KEY, post_id bigint NOT NULL REFERENCES public.posts (id), body text);
};

# "tables with the column / tables" and "valid copies of the index / tables"
# over the template and every shard's copy of posts.
sub column_and_index
{
	my ($node, $db, $column, $index) = @_;
	return $node->safe_psql($db, qq{
SELECT count(*) FILTER (WHERE EXISTS (SELECT FROM pg_attribute AS a
                                        WHERE a.attrelid = c.oid AND a.attname = '$column' AND NOT a.attisdropped))
       || '/' || count(*) || ' '
       || count(*) FILTER (WHERE EXISTS (SELECT FROM pg_index AS x JOIN pg_class AS i ON i.oid = x.indexrelid
                                          WHERE x.indrelid = c.oid AND i.relname = '$index' AND x.indisvalid))
       || '/' || count(*)
  FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
 WHERE c.relname = 'posts' AND c.relkind = 'r' AND (n.nspname = 'public' OR n.nspname LIKE 'shard\\_%')});
}

# --- a router and two nodes ----------------------------------------------------
my %node = map { $_ => data_node($_, sql => $templates) } qw(a b);
$node{a}->safe_psql('app', "SELECT shardid.create_shards(0, 3)");
$node{b}->safe_psql('app', "SELECT shardid.create_shards(4, 7)");
for my $n (qw(a b))
{
	$node{$n}->safe_psql('app', q{
SELECT shardid.create_table('public.posts');
SELECT shardid.create_table('public.comments');
DO $$ DECLARE s name; BEGIN
    FOR s IN SELECT schema FROM shardid.shards LOOP
        EXECUTE format('INSERT INTO %I.posts (user_id, body) SELECT g, ''old'' FROM generate_series(1, 100) AS g', s);
    END LOOP;
END $$;
});
}

my $router = router_node('router', \%node);
$router->safe_psql('app', "SELECT shardid.place_shards('a', 0, 3) + shardid.place_shards('b', 4, 7)");

my $t0 = time;
$router->safe_psql('app', q{CALL shardid.apply_ddl('public.posts', 'ALTER TABLE %s ADD COLUMN mood text NOT NULL DEFAULT ''ok''')});
$router->safe_psql('app', q{CALL shardid.apply_ddl('public.posts', 'CREATE INDEX CONCURRENTLY posts_by_user ON %s (user_id)')});
note(sprintf('apply_ddl from the router, 2 changes on 2 nodes of 5 tables each: %.1f s', time - $t0));
for my $n (qw(a b))
{
	is(column_and_index($node{$n}, 'app', 'mood', 'posts_by_user'), '5/5 5/5',
		"node $n: the template and its 4 shards have the column and the index (valid)");
}
is($router->safe_psql('app', q{
SELECT string_agg(kind || ' ' || concurrent || ' ' || targets_done || '/' || targets_total || ' ' || (finished_at IS NOT NULL), ', ' ORDER BY change_id)
  FROM shardid.ddl_progress}),
	'ALTER TABLE false 2/2 true, CREATE INDEX true 2/2 true', 'the router ledger: both changes done on both nodes');

# --- moves keep the change, and a shard's own index -----------------------------
# shard 5 belongs to a role of its own, whose index it gets
$node{b}->safe_psql('app', q{
ALTER SCHEMA shard_0005 OWNER TO app_owner;
ALTER TABLE shard_0005.posts OWNER TO app_owner;
CREATE INDEX posts_body_len ON shard_0005.posts (length(body));
});
$router->safe_psql('app', "CALL shardid.move_shard(1, 'b')");
is($router->safe_psql('app', 'SELECT node FROM shardid.placement WHERE shard = 1'), 'b', 'shard 1 moved to b');
is($node{b}->safe_psql('app', q{
SELECT count(*) FILTER (WHERE mood = 'ok') || ' ' || count(*) || ' '
       || (SELECT count(*) FROM pg_index AS x JOIN pg_class AS i ON i.oid = x.indexrelid
            WHERE x.indrelid = 'shard_0001.posts'::regclass AND i.relname = 'posts_by_user' AND x.indisvalid)
  FROM shard_0001.posts}),
	'100 100 1', 'on b, shard 1 has the column (its rows say ok) and the index posts_by_user');

$router->safe_psql('app', "CALL shardid.move_shard(5, 'a')");
is($router->safe_psql('app', 'SELECT node FROM shardid.placement WHERE shard = 5'), 'a', 'shard 5, with an index of its own, moved to a');
is($node{a}->safe_psql('app', q{
SELECT string_agg(i.relname || ' ' || pg_get_userbyid(i.relowner) || ' ' || x.indisvalid, ', ' ORDER BY i.relname)
  FROM pg_index AS x JOIN pg_class AS i ON i.oid = x.indexrelid WHERE x.indrelid = 'shard_0005.posts'::regclass}),
	'posts_body_len app_owner true, posts_by_user app_owner true, posts_pkey app_owner true',
	'on a, shard 5 has its own index (the table owner\'s), the template\'s and its key');
is($node{a}->safe_psql('app', q{SELECT pg_get_indexdef('shard_0005.posts_body_len'::regclass)}),
	'CREATE INDEX posts_body_len ON shard_0005.posts USING btree (length(body))', 'the index is the source\'s');
is($node{a}->safe_psql('app', "SELECT count(*) FROM shard_0005.posts WHERE mood = 'ok'"), '100', 'shard 5 has its rows on a');
is($node{a}->safe_psql('app', "SELECT count(*) FROM pg_index WHERE indrelid = 'public.posts'::regclass"),
	'2', 'the template on a did not get the shard\'s own index');

# A node with only the extension gets the templates from the move's source.
# First refused, before anything changes, while a table of the template's
# name is in the way; then the move makes the template (as node a has it,
# with the column and the index apply_ddl() added) and the shard.
my $bare = data_node('c', sql => 'CREATE ROLE app_owner; CREATE TABLE public.posts (x int);');
my $bare_connstr = $bare->connstr('app');
$router->safe_psql('app', "SELECT shardid.add_node('c', \$\$$bare_connstr\$\$)");
my ($ret, $out, $err) = $router->psql('app', "\\set VERBOSITY verbose\nCALL shardid.move_shard(2, 'c')");
like($err, qr/ERROR:\s+42P07: node "c": relation public\.posts exists here but is not the template of a sharded table/,
	'a node with only the extension and a table in the way of the template: refused');
like($err, qr/HINT:\s+If it is the template, register it here \(SELECT shardid\.create_table\('public\.posts', 'id'\);\)/,
	'the hint says how to register it');
is($router->safe_psql('app', 'SELECT node FROM shardid.placement WHERE shard = 2')
	  . ' ' . $bare->safe_psql('app', "SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0002'")
	  . ' ' . $bare->safe_psql('app', 'SELECT count(*) FROM shardid.sharded_tables'),
	'a 0 0', 'shard 2 stays on a; nothing is made or registered on c');
$bare->safe_psql('app', 'DROP TABLE public.posts');
$router->safe_psql('app', "CALL shardid.move_shard(2, 'c')");
is($router->safe_psql('app', 'SELECT node FROM shardid.placement WHERE shard = 2'), 'c',
	'shard 2 moved to c, a node that had only the extension');
my $template_defs = q{SELECT string_agg(shardid_internal._template_definition(table_name)::text, ' ' ORDER BY position) FROM shardid.sharded_tables};
is($bare->safe_psql('app', $template_defs), $node{a}->safe_psql('app', $template_defs),
	'c\'s templates of posts and comments are a\'s (columns, constraints, foreign key, indexes, id column, position)');
is(column_and_index($bare, 'app', 'mood', 'posts_by_user'), '2/2 2/2', 'on c, the template and shard 2 have the column and the index');
is($bare->safe_psql('app', "SELECT count(*) FILTER (WHERE mood = 'ok') || ' ' || count(*) FROM shard_0002.posts"),
	'100 100', 'shard 2 has its rows on c');
is($router->safe_psql('app', q{SELECT string_agg(kind || ' ' || shard || ' ' || node || ': ' || detail, '; ') FROM shardid.check_cluster()}),
	'copy_differs 5 a: shard_0005.posts on node "a" differs from its template: owner app_owner, the template\'s postgres',
	'check_cluster(): healthy but for shard 5\'s copy, which another role owns than the template\'s');
$router->safe_psql('app', "CALL shardid.move_shard(2, 'a')");
is($router->safe_psql('app', 'SELECT node FROM shardid.placement WHERE shard = 2'), 'a', 'and back to a');

# --- one change, one identity: a cancel of the router, a node that ran it ------
# (issue 36) b's copy of shard 4 is locked, so b's CALL waits there after its
# template and shard 1 (batches of 1); the router's CALL is cancelled: b's
# statement is cancelled with it (no statement left running there, nothing
# more committed). Then b finishes the change on its own under the router's
# origin, as if the router had lost the answer; the router's re-CALL skips b
# (finished) instead of running the change there twice.
my $seen = 'ALTER TABLE %s ADD COLUMN seen integer';
# "tables with the column / tables": the template and the registered shards
sub with_column
{
	my ($n, $col) = @_;
	return $node{$n}->safe_psql('app', qq{
SELECT count(*) FILTER (WHERE EXISTS (SELECT FROM pg_attribute AS a WHERE a.attrelid = c.oid AND a.attname = '$col' AND NOT a.attisdropped))
       || '/' || count(*)
  FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
 WHERE c.relname = 'posts' AND c.relkind = 'r'
   AND (n.nspname = 'public' OR n.nspname IN (SELECT r.schema_name FROM shardid.shard_registry AS r))});
}
# (shard 5, now on a, belongs to a role of its own: its code would run with
# the template owner's rights, so every change is refused until it is the
# template owner's again)
($ret, $out, $err) = $router->psql('app', "CALL shardid.apply_ddl('public.posts', '$seen')");
like($err, qr/node "a": sharded table posts: 1 of its copies is not owned by the template's owner postgres/,
	'a copy another role owns: the change is refused (issue 35)');
is($router->safe_psql('app', q{SELECT count(*) FROM shardid.ddl_changes WHERE command LIKE '%seen%' AND NOT abandoned}), '0',
	'and kept nowhere');
$node{a}->safe_psql('app', 'ALTER TABLE shard_0005.posts OWNER TO postgres');
my $locker = $node{b}->background_psql('app');
$locker->query_safe('BEGIN; LOCK TABLE shard_0004.posts IN ACCESS SHARE MODE;');
my ($caller, $caller_pid) = background_call($router, 'app', "CALL shardid.apply_ddl('public.posts', '$seen', 1);");
$node{b}->poll_query_until('app', q{SELECT EXISTS (SELECT FROM pg_locks WHERE NOT granted AND relation = 'shard_0004.posts'::regclass)})
  or die 'b never waited for shard 4';
$router->safe_psql('app', "SELECT pg_cancel_backend($caller_pid)");
ok($node{b}->poll_query_until('app', q{SELECT NOT EXISTS (SELECT FROM pg_stat_activity WHERE query LIKE '%_apply_ddl_here%' AND state = 'active' AND pid <> pg_backend_pid())}),
	'a cancel of the router\'s CALL cancels the node\'s statement too');
$caller->quit;
$locker->query_safe('COMMIT');
$locker->quit;
is($router->safe_psql('app', q{SELECT targets_done || ' ' || (finished_at IS NULL) FROM shardid.ddl_progress WHERE command LIKE '%seen%' AND NOT abandoned}),
	'1 true', 'the router\'s change is open: node a has it, b not');
my $origin = $router->safe_psql('app', q{SELECT shardid_internal._apply_ddl_origin(change_id) FROM shardid.ddl_changes WHERE command LIKE '%seen%' AND NOT abandoned});
is($node{b}->safe_psql('app', qq{SELECT count(*) || ' ' || count(*) FILTER (WHERE finished_at IS NULL) FROM shardid.ddl_changes WHERE origin = '$origin'}),
	'1 1', 'b holds the change under the router\'s origin, open (its template and shard 1)');
$node{b}->safe_psql('app', "CALL shardid_internal._apply_ddl_here('public.posts', '$seen', shardid_internal._ddl_options('{}'), '$origin')");
($ret, $out, $err) = $router->psql('app', "CALL shardid.apply_ddl('public.posts', '$seen')");
is($ret, 0, 'the router\'s re-CALL succeeds: b, finished already, is not run again') or diag($err);
is(with_column($_, 'seen'), '5/5', "node $_: the template and every shard have the column (once: no error)") for qw(a b);
is($router->safe_psql('app', q{SELECT targets_done || ' ' || (finished_at IS NOT NULL) FROM shardid.ddl_progress WHERE command LIKE '%seen%' AND NOT abandoned}),
	'3 true', 'the router\'s change is finished on every node (a, b and c)');

# --- no wedge from the router ------------------------------------------------------
# A change that fails on the first node before any node has it (a copy on a
# has the column already) is not kept on the router either.
$node{a}->safe_psql('app', 'ALTER TABLE shard_0000.posts ADD COLUMN clash integer');
($ret, $out, $err) = $router->psql('app', "CALL shardid.apply_ddl('public.posts', 'ALTER TABLE %s ADD COLUMN clash integer')");
like($err, qr/node "a": column "clash" of relation "posts" already exists/, 'the first node refuses the change');
is($router->safe_psql('app', q{SELECT abandoned || ' ' || targets_done FROM shardid.ddl_progress WHERE command LIKE '%clash%'}),
	'true 0', 'the router keeps nothing open: the change is closed, no node has it');
is($node{a}->safe_psql('app', q{SELECT count(*) FROM shardid.ddl_changes WHERE command LIKE '%clash%'}), '0', 'nor does node a');
# A change part of the way (a and b's first shards have it, b's shard 6 not)
# stays open; abandon_ddl() on the router closes it there and on every node.
$node{b}->safe_psql('app', 'ALTER TABLE shard_0006.posts ADD COLUMN half integer');
($ret, $out, $err) = $router->psql('app', "CALL shardid.apply_ddl('public.posts', 'ALTER TABLE %s ADD COLUMN half integer', 1)");
like($err, qr/node "b": column "half" of relation "posts" already exists/, 'b refuses the change at shard 6');
($ret, $out, $err) = $router->psql('app', "\\set VERBOSITY verbose\nCALL shardid.apply_ddl('public.posts', 'ALTER TABLE %s ADD COLUMN whole integer')");
like($err, qr/55000: sharded table posts has an unfinished change: ALTER TABLE %s ADD COLUMN half integer.*HINT:.*abandon_ddl\('public\.posts'\)/s,
	'another command is refused, the HINT naming abandon_ddl()');
is($router->safe_psql('app', q{SELECT string_agg(node || ' ' || targets_with || ' ' || targets_without || ' ' || without::text, '; ' ORDER BY node) FROM shardid.abandon_ddl('public.posts')}),
	'b 3 2 {shard_0006,shard_0007}', 'abandon_ddl() closes b\'s change, saying which tables lack it (a had finished)');
is($router->safe_psql('app', q{SELECT abandoned FROM shardid.ddl_progress WHERE command LIKE '%half%'}), 't', 'the router\'s change is abandoned');
$router->safe_psql('app', "CALL shardid.apply_ddl('public.posts', 'ALTER TABLE %s ADD COLUMN whole integer')");
is(with_column($_, 'whole'), '5/5', "node $_: the next command ran") for qw(a b);

# --- a node with only the extension has nothing to change ----------------------------
my $empty = data_node('d');
my $empty_connstr = $empty->connstr('app');
$router->safe_psql('app', "SELECT shardid.add_node('d', \$\$$empty_connstr\$\$)");
($ret, $out, $err) = $router->psql('app', "CALL shardid.apply_ddl('public.posts', 'ALTER TABLE %s ADD COLUMN flags integer')");
is($ret, 0, 'a router change with a node that has only the extension succeeds') or diag($err);
is(with_column($_, 'flags'), '5/5', "node $_ has the change") for qw(a b);
is($router->safe_psql('app', q{SELECT targets_done || '/' || targets_total || ' ' || (finished_at IS NOT NULL) FROM shardid.ddl_progress WHERE command LIKE '%flags%'}),
	'4/4 true', 'recorded on every node, d with nothing to change');
$router->safe_psql('app', "SELECT shardid.remove_node('d')");
$empty->stop;

# --- the options travel whole: connections from the router (issue 47) -------------
$node{c} = $bare;
# apply_ddl(connections => 3) on the router builds up to 3 tables of a node
# at once, each on a router connection of its own to that node: every
# shard's build on a waits for an advisory lock a session on a holds (the
# template, empty, is built first and alone), and 3 builds, not 1 nor the
# default 4, are seen running there together. A loopback means nothing on
# the router: refused (22023) before anything changes.
$node{$_}->safe_psql('app', q{
CREATE FUNCTION public.slow_key(k bigint) RETURNS bigint LANGUAGE plpgsql IMMUTABLE
    AS $$ BEGIN IF k > 0 THEN PERFORM pg_catalog.pg_advisory_xact_lock_shared(4242); END IF; RETURN k; END $$;
}) for qw(a b c);
($ret, $out, $err) = $router->psql('app', "\\set VERBOSITY verbose\nCALL shardid.apply_ddl('public.posts', 'ALTER TABLE %s ADD COLUMN lb integer', loopback => 'dbname=app')");
like($err, qr/ERROR:\s+22023: .*loopback/, 'apply_ddl(loopback => ...) on the router: refused (22023)');
my $lock_a = $node{a}->background_psql('app');
$lock_a->query_safe('SELECT pg_advisory_lock(4242)');
my $rcall = $router->background_psql('app', on_error_stop => 0);
$rcall->query_until(qr/calling/,
	"\\echo calling\nCALL shardid.apply_ddl('public.posts', 'CREATE INDEX CONCURRENTLY posts_slow ON %s (public.slow_key(user_id))', connections => 3);\n");
my $builds = q{SELECT count(*) FROM pg_stat_activity
 WHERE datname = 'app' AND application_name = 'shardid_apply_ddl' AND state = 'active' AND query LIKE 'CREATE INDEX CONCURRENTLY posts_slow%'};
ok($node{a}->poll_query_until('app', "SELECT ($builds) = 3"), 'from the router, connections => 3: node a builds 3 tables at once');
is($node{a}->safe_psql('app', $builds), '3', 'and no more than 3');
$lock_a->query_safe('SELECT pg_advisory_unlock(4242)');
$lock_a->quit;
$rcall->query('SELECT 1');
unlike($rcall->{stderr}, qr/ERROR/, 'the router\'s CALL ends without an error') or diag($rcall->{stderr});
$rcall->quit;
# (the template and the registered shards: retired copies are not changed)
is($node{$_}->safe_psql('app', q{
SELECT count(*) FILTER (WHERE EXISTS (SELECT FROM pg_index AS x JOIN pg_class AS i ON i.oid = x.indexrelid
                                       WHERE x.indrelid = c.oid AND i.relname = 'posts_slow' AND x.indisvalid))
       || '/' || count(*)
  FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
 WHERE c.relname = 'posts' AND c.relkind = 'r'
   AND (n.nspname = 'public' OR n.nspname IN (SELECT r.schema_name FROM shardid.shard_registry AS r))}),
	'5/5', "node $_: the template and every shard have the index, valid") for qw(a b);
is($router->safe_psql('app', q{SELECT targets_done || '/' || targets_total || ' ' || (finished_at IS NOT NULL) FROM shardid.ddl_progress WHERE command LIKE '%posts_slow%'}),
	'3/3 true', 'the router\'s change is finished on every node');

$router->stop;
$node{$_}->stop for qw(a b c);

# --- one node, 4096 shards, default lock settings: interrupted and re-CALLed ---
my $big = PostgreSQL::Test::Cluster->new('big');
$big->init;
$big->append_conf('postgresql.conf', "log_statement = none\nlog_min_messages = warning\n");
$big->start;
# (the major's own default: 64 up to 18, 128 from 19)
is($big->safe_psql('postgres', "SELECT setting = boot_val FROM pg_settings WHERE name = 'max_locks_per_transaction'"),
	't', 'default max_locks_per_transaction');
$big->safe_psql('postgres', 'CREATE DATABASE app');
$t0 = time;
$big->safe_psql('app', q{
CREATE EXTENSION shardid;
CREATE TABLE public.posts (id bigint PRIMARY KEY, user_id bigint NOT NULL, body text NOT NULL);
});
$big->safe_psql('app', 'CALL shardid.create_shards_proc(0, 4095)');
$big->safe_psql('app', "CALL shardid.create_table_proc('public.posts')");
note(sprintf('4096 shards and their tables: %.1f s', time - $t0));

# Runs CALL apply_ddl() in a session of its own and ends that session with
# pg_terminate_backend() once $at tables are done; returns the done count.
sub interrupt_apply_ddl
{
	my ($db, $command, $at) = @_;
	my ($bg, $pid) = background_call($big, $db, "CALL shardid.apply_ddl('public.posts', \$cmd\$$command\$cmd\$);");
	$big->poll_query_until($db, "SELECT count(*) >= $at FROM shardid.ddl_applied WHERE done")
	  or die "apply_ddl did not reach $at tables";
	$big->safe_psql($db, "SELECT pg_terminate_backend($pid)");
	$big->poll_query_until($db, "SELECT NOT EXISTS (SELECT FROM pg_stat_activity WHERE pid = $pid)")
	  or die 'the session did not end';
	# psql, not interactive, exits when its connection is lost
	eval { $bg->quit };
	return $big->safe_psql($db, 'SELECT count(*) FROM shardid.ddl_applied WHERE done');
}

my $add = q{ALTER TABLE %s ADD COLUMN mood text DEFAULT 'ok'};
$t0 = time;
my $done = interrupt_apply_ddl('app', $add, 600);
ok($done >= 600 && $done < 4097, "terminated after $done of 4097 tables");
is(column_and_index($big, 'app', 'mood', '-'), "$done/4097 0/4097",
	'the tables that have the column are exactly those the ledger says are done');
is($big->safe_psql('app', 'SELECT finished_at IS NULL FROM shardid.ddl_changes'), 't', 'the change is unfinished');
($ret, $out, $err) = $big->psql('app', "\\set VERBOSITY verbose\nCALL shardid.apply_ddl('public.posts', 'ALTER TABLE %s ADD COLUMN other int')");
like($err, qr/ERROR:\s+55000: sharded table posts has an unfinished change/, 'another command is refused meanwhile (55000)');
($ret, $out, $err) = $big->psql('app', "CALL shardid.apply_ddl('public.posts', \$cmd\$$add\$cmd\$)");
is($ret, 0, 'the re-CALL succeeds');
like($err, qr/finished: ${\(4097 - $done)} tables changed now, $done of 4097 had it already/,
	'the re-CALL changed only the tables the first CALL had not');
note(sprintf('ADD COLUMN over 4097 tables, interrupted and re-CALLed: %.1f s', time - $t0));
is(column_and_index($big, 'app', 'mood', '-'), '4097/4097 0/4097', 'every table has the column');
is($big->safe_psql('app', q{
SELECT count(*) || ' ' || count(*) FILTER (WHERE done) || ' ' || count(DISTINCT target) || ' '
       || (SELECT count(*) FROM shardid.ddl_changes WHERE finished_at IS NOT NULL)
  FROM shardid.ddl_applied}),
	'4097 4097 4097 1', 'the ledger is complete: one done row per table, the change finished');
is($big->safe_psql('app', q{SELECT count(*) FROM pg_attribute WHERE attname = 'mood' AND NOT attisdropped AND attrelid IN (SELECT oid FROM pg_class WHERE relname = 'posts')}),
	'4097', 'the column exists once per table');

# CREATE INDEX CONCURRENTLY over 512 shards, interrupted mid-way.
$big->safe_psql('postgres', 'CREATE DATABASE cic');
$big->safe_psql('cic', q{
CREATE EXTENSION dblink;
CREATE EXTENSION shardid;
CREATE TABLE public.posts (id bigint PRIMARY KEY, user_id bigint NOT NULL, body text NOT NULL);
});
$big->safe_psql('cic', 'CALL shardid.create_shards_proc(0, 511)');
$big->safe_psql('cic', "CALL shardid.create_table_proc('public.posts')");
my $cic = 'CREATE INDEX CONCURRENTLY posts_by_user ON %s (user_id)';
$t0 = time;
$done = interrupt_apply_ddl('cic', $cic, 100);
ok($done >= 100 && $done < 513, "CONCURRENTLY: terminated after $done of 513 tables");
($ret, $out, $err) = $big->psql('cic', "CALL shardid.apply_ddl('public.posts', '$cic')");
is($ret, 0, 'the CONCURRENTLY re-CALL succeeds') or diag($err);
note(sprintf('CREATE INDEX CONCURRENTLY over 513 tables, interrupted and re-CALLed: %.1f s', time - $t0));
is(column_and_index($big, 'cic', '-', 'posts_by_user'), '0/513 513/513', 'every table has the index, valid');
is($big->safe_psql('cic', q{
SELECT count(*) || ' ' || count(*) FILTER (WHERE NOT x.indisvalid)
  FROM pg_index AS x JOIN pg_class AS c ON c.oid = x.indrelid WHERE c.relname = 'posts' AND NOT x.indisprimary}),
	'513 0', 'one index besides the key per table, none invalid');
is($big->safe_psql('cic', q{
SELECT count(*) FILTER (WHERE done) || ' ' || count(*) || ' ' || (SELECT count(*) FROM shardid.ddl_changes WHERE finished_at IS NOT NULL)
  FROM shardid.ddl_applied}),
	'513 513 1', 'the ledger is complete');

# CONCURRENTLY on several connections at once (connections => 4): each
# shard's build calls an index expression that waits for an advisory lock
# the test holds (the template, built first and alone, has a row that does
# not wait), so the builds are seen running together from another session
# (pg_stat_activity of the loopback connections,
# pg_stat_progress_create_index) however slow the machine. The CALL is
# ended while they wait: several tables are left running (interrupted),
# the lock is released, and the re-CALL
# retries those first (an invalid index dropped and built again, or a build
# that had ended counted) and finishes: every table has the index once,
# valid, and the ledger is complete.
$big->safe_psql('postgres', 'CREATE DATABASE par');
$big->safe_psql('par', q{
CREATE EXTENSION dblink;
CREATE EXTENSION shardid;
CREATE TABLE public.posts (id bigint PRIMARY KEY, user_id bigint NOT NULL, body text NOT NULL);
CREATE FUNCTION public.slow_key(k bigint) RETURNS bigint LANGUAGE plpgsql IMMUTABLE
    AS $$ BEGIN IF k > 0 THEN PERFORM pg_catalog.pg_advisory_xact_lock_shared(4242); END IF; RETURN k; END $$;
});
$big->safe_psql('par', 'CALL shardid.create_shards_proc(0, 15)');
$big->safe_psql('par', "CALL shardid.create_table_proc('public.posts')");
$big->safe_psql('par', q{
DO $$ DECLARE s name; BEGIN
    FOR s IN SELECT schema FROM shardid.shards UNION ALL SELECT 'public' LOOP
        EXECUTE format('INSERT INTO %I.posts (id, user_id, body) VALUES (1, %s, ''x'')', s, (s <> 'public')::int);
    END LOOP;
END $$;
});
my $slow = 'CREATE INDEX CONCURRENTLY posts_slow ON %s (public.slow_key(user_id))';
my $holder = $big->background_psql('par');
$holder->query_safe('SELECT pg_advisory_lock(4242)');
my ($bg, $pid) = background_call($big, 'par', "CALL shardid.apply_ddl('public.posts', \$cmd\$$slow\$cmd\$, connections => 4);");
ok( $big->poll_query_until(
		'postgres', q{
SELECT count(*) >= 2 FROM pg_stat_activity
 WHERE datname = 'par' AND application_name = 'shardid_apply_ddl' AND state = 'active'
   AND query LIKE 'CREATE INDEX CONCURRENTLY posts_slow%'}),
	'CONCURRENTLY: two or more tables build at once, each on a loopback connection of its own');
ok($big->poll_query_until('postgres', q{SELECT count(*) >= 2 FROM pg_stat_progress_create_index WHERE datname = 'par'}),
	'pg_stat_progress_create_index shows them together');
$big->safe_psql('par', "SELECT pg_terminate_backend($pid)");
$big->poll_query_until('postgres', "SELECT NOT EXISTS (SELECT FROM pg_stat_activity WHERE pid = $pid)")
  or die 'the session did not end';
eval { $bg->quit };
# the loopback connections notice within a second (client_connection_check_interval)
ok( $big->poll_query_until(
		'postgres', q{SELECT NOT EXISTS (SELECT FROM pg_stat_activity WHERE datname = 'par' AND application_name = 'shardid_apply_ddl')}),
	'the builds end with the CALL');
my $left = $big->safe_psql('par', q{
SELECT cardinality(running) || ' ' || interrupted || ' ' || (targets_done < 17) FROM shardid.ddl_progress WHERE command LIKE '%posts_slow%'});
like($left, qr/^([2-9]|1[0-6]) true true$/, "the interrupted change has several tables running, none driving them ($left)");
$holder->query_safe('SELECT pg_advisory_unlock(4242)');
$holder->quit;
($ret, $out, $err) = $big->psql('par', "CALL shardid.apply_ddl('public.posts', '$slow', connections => 4)");
is($ret, 0, 'the re-CALL of the parallel CONCURRENTLY change succeeds') or diag($err);
# a build the end of the CALL stopped left an invalid index, dropped and
# built again; one that had ended before its connection noticed counts as done
like($err, qr/(dropping an index left invalid by an interrupted run|the interrupted run had made the change).*\n(.*\n)*.*finished: /,
	'it retries the tables the interrupted builds left running first');
is($big->safe_psql('par', q{
SELECT count(*) || ' ' || count(*) FILTER (WHERE x.indisvalid) || ' ' || count(DISTINCT c.oid)
  FROM pg_index AS x JOIN pg_class AS i ON i.oid = x.indexrelid JOIN pg_class AS c ON c.oid = x.indrelid
 WHERE i.relname = 'posts_slow'}),
	'17 17 17', 'every table has the index once, valid');
is($big->safe_psql('par', q{
SELECT count(*) FILTER (WHERE done) || ' ' || count(*) || ' ' || (SELECT count(*) FROM shardid.ddl_changes WHERE finished_at IS NOT NULL)
  FROM shardid.ddl_applied}),
	'17 17 1', 'the ledger is complete');

$big->stop;
done_testing();
