# multi_server.pl — shardid on three servers: a router (PL/Proxy where it
# is installed, else its functions call the nodes over dblink, as on
# PostgreSQL 19) and two data nodes holding 64 logical shards. Inserts and
# reads through the router, a fan-out of the newest rows in ID order, a
# frozen shard, an unplaced shard, then moves a shard with
# bin/shardid-move-shard --offline while a writer keeps inserting, and
# checks that no row was lost or duplicated and that the moved shard's IDs
# continue above its old ones. Also: the move tool's refusals, and a shard
# that no longer matches its templates.
use strict;
use warnings;

use File::Basename qw(dirname);
use FindBin;
use lib $FindBin::RealBin;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use ShardidTest;
use Test::More;

my $move_cli = dirname(__FILE__) . '/../../bin/shardid-move-shard';

# --- data nodes: same template, functions; shards 0-31 on a, 32-63 on b ---
my $node_functions = q{
CREATE FUNCTION public.user_shard(i_user bigint) RETURNS integer
    LANGUAGE sql IMMUTABLE AS 'SELECT (i_user % 64)::integer';
CREATE FUNCTION public.insert_post(i_user bigint, i_body text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE new_id bigint;
BEGIN
    EXECUTE format('INSERT INTO %I.posts (user_id, body) VALUES ($1, $2) RETURNING id',
                   shardid.shard_schema(public.user_shard(i_user)))
        INTO new_id USING i_user, i_body;
    RETURN new_id;
END $$;
CREATE FUNCTION public.get_post(i_id bigint, OUT id bigint, OUT user_id bigint, OUT body text)
    RETURNS SETOF record LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE format('SELECT p.id, p.user_id, p.body FROM %I.posts AS p WHERE p.id = $1',
                                shardid.shard_schema(shardid.id_shard(i_id))) USING i_id;
END $$;
-- The newest i_limit posts of the given shards (all on this node).
CREATE FUNCTION public.newest_posts(i_shards integer[], i_limit integer, OUT id bigint, OUT user_id bigint, OUT body text)
    RETURNS SETOF record LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE (
        SELECT string_agg(format('(SELECT p.id, p.user_id, p.body FROM %I.posts AS p ORDER BY p.id DESC LIMIT %s)',
                                 shardid.shard_schema(s), i_limit), ' UNION ALL ')
               || format(' ORDER BY 1 DESC LIMIT %s', i_limit)
          FROM unnest(i_shards) AS s);
END $$;
} . post_ids_sql('node');

# wal_level = replica, as the bash suite's servers had: the dump-based
# --offline move (move_online covers the online one).
my %node = map { $_ => data_node($_, logical => 0, conf => "wal_level = replica\n") } qw(a b);
my %range = (a => [ 0, 31 ], b => [ 32, 63 ]);
for my $n (qw(a b))
{
	$node{$n}->safe_psql('app', qq{
CREATE TABLE public.posts (id bigint PRIMARY KEY, user_id bigint NOT NULL, body text NOT NULL);
SELECT shardid.create_shards($range{$n}[0], $range{$n}[1]);
SELECT shardid.create_table('public.posts');
} . $node_functions);
}

# --- router: nodes, placement, routing functions -----------------------------
# Through PL/Proxy where it is installed; else (19) over dblink, to the
# connect string PL/Proxy would use (ShardidTest::router_dblink_sql).
my $plproxy = have_extension('plproxy');
my $routing;
if ($plproxy)
{
	note('router: PL/Proxy');
	$routing = q{
CREATE FUNCTION public.insert_post(i_user bigint, i_body text) RETURNS bigint AS $$
    CLUSTER 'shardid'; RUN ON public.user_shard(i_user);
$$ LANGUAGE plproxy;
CREATE FUNCTION public.get_post(i_id bigint, OUT id bigint, OUT user_id bigint, OUT body text) RETURNS SETOF record AS $$
    CLUSTER 'shardid'; RUN ON shardid.id_shard(i_id);
$$ LANGUAGE plproxy;
CREATE FUNCTION public.newest_posts(i_shards integer[], i_limit integer, OUT id bigint, OUT user_id bigint, OUT body text)
    RETURNS SETOF record AS $$
    CLUSTER 'shardid'; SPLIT i_shards; RUN ON i_shards;
$$ LANGUAGE plproxy;
} . post_ids_sql('plproxy');
}
else
{
	chomp(my $version = `pg_config --version`);
	note("router: no PL/Proxy for $version, routing over dblink");
	$routing = router_dblink_sql() . q{
CREATE FUNCTION public.insert_post(i_user bigint, i_body text) RETURNS bigint LANGUAGE sql AS $$
    SELECT t.id FROM public.dblink(public.shard_conn(public.user_shard(i_user)),
                                   format('SELECT public.insert_post(%s, %L)', i_user, i_body)) AS t(id bigint)
$$;
CREATE FUNCTION public.get_post(i_id bigint, OUT id bigint, OUT user_id bigint, OUT body text) RETURNS SETOF record
    LANGUAGE sql AS $$
    SELECT t.* FROM public.dblink(public.shard_conn(shardid.id_shard(i_id)),
                                  format('SELECT * FROM public.get_post(%s)', i_id)) AS t(id bigint, user_id bigint, body text)
$$;
CREATE FUNCTION public.newest_posts(i_shards integer[], i_limit integer, OUT id bigint, OUT user_id bigint, OUT body text)
    RETURNS SETOF record LANGUAGE sql AS $$
    SELECT t.* FROM (SELECT public.shard_connstr(s) AS c, array_agg(s) AS ss FROM unnest(i_shards) AS s GROUP BY 1) AS g,
           LATERAL public.dblink(g.c, format('SELECT * FROM public.newest_posts(%L, %s)', g.ss, i_limit))
                AS t(id bigint, user_id bigint, body text)
$$;
} . post_ids_sql('dblink');
}
my $router = router_node('router', \%node, plproxy => 1);
my $R = $router->connstr('app');
$router->safe_psql('app', q{
SELECT shardid.place_shards('a', 0, 31);
SELECT shardid.place_shards('b', 32, 63);
CREATE FUNCTION public.user_shard(i_user bigint) RETURNS integer
    LANGUAGE sql IMMUTABLE AS 'SELECT (i_user % 64)::integer';
} . $routing . writer_sql());

# sql(NODE, SQL) — the result of SQL in NODE's database app (errors fatal).
sub sql
{
	my ($node, $query) = @_;
	return $node->safe_psql('app', $query);
}

# int_of(TEXT) — TEXT, when it is an integer (to interpolate into SQL); else die.
sub int_of
{
	my ($v) = @_;
	die "not an integer: '" . ($v // 'undef') . "'" unless defined $v && $v =~ /^-?[0-9]+$/;
	return $v;
}

# move(ARGS...) — run bin/shardid-move-shard --router ROUTER --offline ARGS;
# returns its exit status and its output (stdout and stderr).
sub move
{
	my @args = @_;
	my $out = '';
	IPC::Run::run([ $move_cli, '--router', $R, '--offline', @args ], '>&', \$out);
	return ($? >> 8, $out);
}

is(sql($router, "SELECT count(*) || ' ' || count(*) FILTER (WHERE node = 'a') FROM shardid.placement"),
	'64 32', 'placed shards: 64, 32 of them on a');
if ($plproxy)
{
	is(sql($router, q{SELECT count(*) FROM pg_foreign_server s, pg_options_to_table(s.srvoptions) o WHERE s.srvname = 'shardid' AND o.option_name ~ '^p[0-9]+$'}),
		'8192', 'partitions of cluster shardid: 8192');
}
else
{
	is(sql($router, 'SELECT count(*) FROM pg_foreign_server'), '0', 'no PL/Proxy: no cluster, no foreign server');
}

# --- insert through the router for 640 users, 3 posts each ------------------
sql($router, q{
INSERT INTO public.written (id, key)
SELECT public.insert_post(u, 'post ' || k || ' of ' || u), u
  FROM generate_series(1, 3) AS k, generate_series(1000, 1639) AS u
 ORDER BY k, u;
});
is(sql($router, 'SELECT count(*) FROM written'), '1920', 'rows written through the router: 1920');
my $rows_on = q{SELECT sum((xpath('/row/c/text()', query_to_xml(format('SELECT count(*) AS c FROM %I.posts', schema), false, true, '')))[1]::text::int) FROM shardid.shards};
is(sql($node{a}, $rows_on) . '/' . sql($node{b}, $rows_on), '960/960', 'rows on node a, node b: 960/960');
is(sql($router, 'SELECT count(*) FROM written WHERE shardid.id_shard(id) = user_shard(key)'),
	'1920', "every ID decodes to its user's shard");
is(sql($router, 'SELECT count(*) FROM written w, LATERAL get_post(w.id) g WHERE g.id = w.id AND g.user_id = w.key'),
	'1920', 'every row read back through the router by ID');

# --- fan-out: newest rows of all shards, merged in ID (time) order -----------
my $newest = sql($router, q{SELECT string_agg(id::text, ',' ORDER BY id DESC) FROM (SELECT id FROM newest_posts(shardid.placed_shards(), 25) ORDER BY id DESC LIMIT 25) t});
is($newest, sql($router, q{SELECT string_agg(id::text, ',' ORDER BY id DESC) FROM (SELECT id FROM written ORDER BY id DESC LIMIT 25) t}),
	'fan-out newest 25 = newest 25 written');
is(sql($router, q{SELECT count(DISTINCT shardid.id_shard(id) < 32) || ' ' || bool_and(t >= coalesce(nt, t)) FROM (SELECT id, shardid.id_time(id) t, lead(shardid.id_time(id)) OVER (ORDER BY id DESC) nt FROM newest_posts(shardid.placed_shards(), 25) ORDER BY id DESC LIMIT 25) x}),
	'2 true', 'fan-out newest 25 come from both nodes, times non-increasing');

# --- unplaced shard: a clear error, not a wrong node -------------------------
my ($ret, $out, $err) = $router->psql('app', 'SELECT * FROM get_post(shardid.make_id(now(), 100, 0))');
isnt($ret, 0, 'a read of unplaced shard 100 fails');
like($err, qr/shard 100 is not placed on any node/, 'unplaced shard 100: the error names it');
note("unplaced shard 100: $err");

# --- a frozen shard: writes fail with 25006, reads go on ----------------------
sql($router, 'SELECT shardid.freeze_shard(7)');
($ret, $out, $err) = $router->psql('app', "\\set VERBOSITY verbose\nSELECT insert_post(7, 'frozen')");
isnt($ret, 0, 'frozen shard 7 takes no write');
like($err, qr/ERROR:\s+25006/, 'write to frozen shard 7 refused with 25006');
is(sql($router, 'SELECT count(*) FROM written w, LATERAL get_post(w.id) g WHERE shardid.id_shard(w.id) = 7'),
	'30', 'frozen shard still readable');
sql($router, 'SELECT shardid.unfreeze_shard(7)');
is(sql($router, q{WITH x AS (INSERT INTO written (id, key) SELECT insert_post(7, 'thawed'), 7 RETURNING id) SELECT shardid.id_shard(id) FROM x}),
	'7', 'unfrozen shard takes writes');

# --- move tool refusals ------------------------------------------------------
# These nodes run with wal_level = replica: the dump-based --offline move.
my ($rc, $move_out) = move('--shard', 5, '--to', 'a');
isnt($rc, 0, 'move to the node that holds the shard fails');
like($move_out, qr/already on node "a"/, 'move to the node that holds the shard refused');
($rc, $move_out) = move('--shard', 5, '--to', 'nowhere');
isnt($rc, 0, 'move to an unknown node fails');
like($move_out, qr/node "nowhere" does not exist/, 'move to an unknown node refused');
($rc, $move_out) = move('--shard', 100, '--to', 'b');
isnt($rc, 0, 'move of an unplaced shard fails');
like($move_out, qr/shard 100 is not placed/, 'move of an unplaced shard refused');

# --- a shard that no longer matches its templates: refused, nothing changes ----
# Shard 6 gets a column whose type node b lacks: b's templates make no such column.
sql($node{a}, q{CREATE TYPE public.mood AS ENUM ('ok'); ALTER TABLE shard_0006.posts ADD COLUMN mood public.mood});
($rc, $move_out) = move('--shard', 6, '--to', 'b');
isnt($rc, 0, 'move of a diverged shard fails');
like($move_out,
	qr/\Qshard 6 on node "a" has diverged from its templates: table posts: column mood: public.mood on node "a" only\E/,
	'a shard that diverged from its templates is refused, the difference named');
is(sql($router, q{SELECT node || ' ' || frozen FROM shardid.placement WHERE shard = 6}) . ' '
	  . sql($node{b}, q{SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0006'}) . ' '
	  . sql($node{a}, 'SELECT schema FROM shardid.shards WHERE shard = 6') . ' '
	  . sql($router, 'SELECT count(*) FROM shardid.shard_moves'),
	'a false 0 shard_0006 0', 'after the refused move: placement, frozen, schema on b, registry on a, moves');
is(sql($router, q{WITH x AS (INSERT INTO written (id, key) SELECT insert_post(6, 'after failed move'), 6 RETURNING id) SELECT shardid.id_shard(id) FROM x}),
	'6', 'shard 6 takes writes after the refused move');
sql($node{a}, 'ALTER TABLE shard_0006.posts DROP COLUMN mood; DROP TYPE public.mood');

# --- move shard 5 from a to b while a writer keeps inserting -------------------
my $old_max5 = int_of(sql($router, 'SELECT max(id) FROM written WHERE shardid.id_shard(id) = 5'));
my $before = int_of(sql($router, 'SELECT count(*) FROM written'));
# Every other write goes to shard 5 (users 5, 69, 133), the rest elsewhere.
my $writer_out = '';
my $writer = IPC::Run::start(
	[
		$router->installed_command('psql'), '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $R,
		'-c', 'CALL writer(ARRAY[5, 1001, 69, 1040, 133, 1063], 3000, 0.003)'
	],
	'>&', \$writer_out,
	IPC::Run::timeout(10 * $PostgreSQL::Test::Utils::timeout_default));
$router->poll_query_until('app', "SELECT count(*) >= $before + 60 FROM written")
  or diag('the writer wrote fewer than 60 rows before the move');
my $at_start = int_of(sql($router, "SELECT count(*) - $before FROM written"));
($rc, $move_out) = move('--shard', 5, '--to', 'b');
note("move: $move_out");
is($rc, 0, 'move of shard 5 from a to b under the writer: done') or diag($move_out);
my $at_end = int_of(sql($router, "SELECT count(*) - $before FROM written"));
ok($at_start >= 60 && $at_end < 3000,
	"the writer ran across the move ($at_start of 3000 rows written when it started, $at_end when it ended)");
$writer->finish;
is($? >> 8, 0, 'the writer finished without an error') or diag($writer_out);
my $total = int_of(sql($router, 'SELECT count(*) FROM written'));
is($total - $before, 3000, 'writer finished all its inserts');
note('writer retries during the move: ' . sql($router, 'SELECT sum(retries) FROM written'));
is(sql($router, "SELECT count(*) > 0 FROM written WHERE shardid.id_shard(id) = 5 AND n > $before"),
	't', 'writes to shard 5 during the run, before/after the move');

is(sql($router, q{SELECT node || ' ' || frozen FROM shardid.placement WHERE shard = 5}), 'b false', 'shard 5 placed on b, not frozen');
is(sql($node{b}, 'SELECT schema FROM shardid.shards WHERE shard = 5'), 'shard_0005', 'node b registers shard 5');
is(sql($node{a}, 'SELECT count(*) FROM shardid.shards WHERE shard = 5') . ' '
	  . sql($node{a}, q{SELECT count(*) FILTER (WHERE nspname = 'shard_0005') || ' ' || count(*) FILTER (WHERE nspname LIKE 'shard_0005_moved_%') FROM pg_namespace}),
	'0 0 1', 'node a: shard 5 unregistered, old copy retired');
($ret, $out, $err) = $node{a}->psql('app', q{DO $$ BEGIN EXECUTE format('INSERT INTO %I.posts (user_id, body) VALUES (5, ''x'')', (SELECT nspname FROM pg_namespace WHERE nspname LIKE 'shard_0005_moved_%')); END $$});
isnt($ret, 0, 'the retired copy takes no write');
like($err, qr/shard 5 moved to node b/, 'the retired copy refuses writes, naming where the shard went');

# Nothing lost, nothing duplicated, nothing extra: the rows on the nodes are
# exactly the IDs the application got back.
is(sql($router, q{SELECT count(*) || ' ' || count(DISTINCT i) FROM post_ids(shardid.placed_shards()) AS i}),
	"$total $total", 'rows on the nodes = IDs written (count, distinct)');
is(sql($router, q{SELECT (SELECT count(*) FROM (SELECT id FROM written EXCEPT SELECT * FROM post_ids(shardid.placed_shards())) x) || ' ' || (SELECT count(*) FROM (SELECT * FROM post_ids(shardid.placed_shards()) EXCEPT SELECT id FROM written) y)}),
	'0 0', 'IDs on the nodes missing from / extra to the written ones');
is(sql($router, 'SELECT count(*) FROM written w, LATERAL get_post(w.id) g WHERE g.id = w.id AND g.user_id = w.key'),
	$total, 'every ID still resolves through the router');
# The moved shard's generator continued: in write order, every shard-5 ID
# is above the one before, across the move.
is(sql($router, "SELECT count(*) FILTER (WHERE id <= prev) || ' ' || bool_and(id > $old_max5) FILTER (WHERE n > $before) FROM (SELECT n, id, lag(id) OVER (ORDER BY n) prev FROM written WHERE shardid.id_shard(id) = 5) t"),
	'0 true', 'shard 5 IDs increase in write order across the move');
my $post = int_of(sql($router, q{SELECT insert_post(5, 'after the move')}));
is(sql($router, "SELECT $post > (SELECT max(id) FROM written WHERE shardid.id_shard(id) = 5)") . ' '
	  . sql($node{b}, "SELECT count(*) FROM shard_0005.posts WHERE id = $post"),
	't 1', 'a new shard-5 ID after the move is above all of them, made on b');
$newest = sql($router, q{SELECT string_agg(id::text, ',' ORDER BY id DESC) FROM (SELECT id FROM newest_posts(shardid.placed_shards(), 10) ORDER BY id DESC LIMIT 10) t});
is((split /,/, $newest)[0], $post, 'fan-out after the move starts with the newest post');

done_testing();
