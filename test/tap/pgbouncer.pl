# pgbouncer.pl — Debian's pgbouncer in transaction mode in front of a server
# with shards 0-3 (docs/applications.md, "Poolers"):
#   1. 20,000 inserts from 8 pgbench clients into schema-qualified shard
#      tables (shard_000N.photos), through 2 server connections: all
#      distinct, each in its shard, each ID decoding to it;
#   2. the traps up to PostgreSQL 17: a session-level SET search_path leaks
#      to the next client of the same server connection, and a search_path
#      given as a startup option is dropped (ignore_startup_parameters =
#      options) so the row lands in the template table; from 18 (the server
#      reports search_path) pgbouncer 1.26 keeps each client's own;
#   3. prepared statements per client (test/apps/test_pgbouncer.py under
#      pytest, test/apps/pgbouncer.test.mjs under node --test): psycopg 3
#      with prepare_threshold=None and node-postgres' unnamed statements
#      work on every version; named prepared statements (psycopg's default
#      after 5 executions, a named node-postgres query) fail before
#      pgbouncer 1.21 and work from 1.21 on with max_prepared_statements.
# The node-postgres part is skipped, saying why, where nodejs is not
# Debian's (the Debian roots of test/matrix run it).
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use ShardidTest;
use ShardidApps;
use Test::More;

need_packages(qw(pgbouncer python3 python3-pytest python3-psycopg));
my $no_js = js_unavailable('node-pg');

# a template with a serial of its own, as many are written: what the
# shards' copies replace with shardid.next_id()
my $server = data_node('bouncer_pg', logical => 0, sql => q{
SELECT shardid.create_shards(0, 3);
CREATE TABLE public.photos (id bigserial PRIMARY KEY, caption text);
SELECT shardid.create_table('public.photos');
});
my $pg18 = $server->safe_psql('app', "SELECT current_setting('server_version_num')::int >= 180000") eq 't';

my (undef, $version_out) = run_cmd({}, 'pgbouncer', '--version');
my ($version) = $version_out =~ /^PgBouncer (\d+(?:\.\d+)*)/m;
die "pgbouncer --version: $version_out" unless defined $version;
my @v = split /\./, $version;
my $named_ok = ($v[0] > 1 || ($v[0] == 1 && ($v[1] // 0) >= 21)) ? 1 : 0;

my $dir = PostgreSQL::Test::Utils::tempdir_short;
my $port = PostgreSQL::Test::Cluster::get_free_port();
my $user = getpwuid($<);
my $target = sprintf('host=%s port=%s dbname=app', $server->host, $server->port);
PostgreSQL::Test::Utils::append_to_file("$dir/users.txt", qq{"$user" ""\n});
PostgreSQL::Test::Utils::append_to_file("$dir/pgbouncer.ini", <<"INI" . ($named_ok ? "max_prepared_statements = 100\n" : ''));
[databases]
app = $target pool_size=2
app_one = $target pool_size=1
app_opt = $target pool_size=1
[pgbouncer]
listen_addr =
unix_socket_dir = $dir
listen_port = $port
auth_type = trust
auth_file = $dir/users.txt
pool_mode = transaction
max_client_conn = 200
ignore_startup_parameters = extra_float_digits, options
logfile = $dir/pgbouncer.log
INI
my $bouncer_out = '';
my $bouncer = IPC::Run::start([ 'pgbouncer', "$dir/pgbouncer.ini" ], '<', \undef, '>', \$bouncer_out, '2>&1');
END { local $?; $bouncer->kill_kill if $bouncer; }
for (1 .. 100)
{
	last if -S "$dir/.s.PGSQL.$port";
	select(undef, undef, undef, 0.1);
}
ok(-S "$dir/.s.PGSQL.$port", "pgbouncer $version listens")
  or BAIL_OUT('pgbouncer did not start: '
	  . (-e "$dir/pgbouncer.log" ? PostgreSQL::Test::Utils::slurp_file("$dir/pgbouncer.log") : "no $dir/pgbouncer.log"));
my $B = "host=$dir port=$port user=$user";
note("pgbouncer $version, transaction mode, 2 server connections for app");

# --- 1. pgbench through pgbouncer, schema-qualified --------------------------
my @scripts;
for my $s (0 .. 3)
{
	PostgreSQL::Test::Utils::append_to_file("$dir/s$s.sql", "INSERT INTO shard_000$s.photos (caption) VALUES ('pgbench');\n");
	push @scripts, '-f', "$dir/s$s.sql";
}
my ($rc, $out) = run_cmd({}, 'pgbench', '-n', '-d', "$B dbname=app", '-c', 8, '-j', 2, '-t', 2500, '-M', 'extended', @scripts);
is($rc, 0, 'pgbench through pgbouncer: 8 clients, 2,500 transactions each') or diag($out);
note($1) if $out =~ /^(tps.*)$/m;
is($server->safe_psql('app', q{
SELECT count(*) || ' ' || count(DISTINCT id) || ' ' || count(*) FILTER (WHERE shardid.id_shard(id) = s)
  FROM (SELECT id, 0 AS s FROM shard_0000.photos UNION ALL SELECT id, 1 FROM shard_0001.photos
        UNION ALL SELECT id, 2 FROM shard_0002.photos UNION ALL SELECT id, 3 FROM shard_0003.photos) t}),
	'20000 20000 20000',
	"20,000 inserts through pgbouncer: rows, distinct IDs, IDs in their shard's table decoding to it");

# --- 2. the search_path traps ------------------------------------------------
($rc, $out) = run_cmd({}, 'psql', '-X', '-q', '-d', "$B dbname=app_one", '-c', 'SET search_path = shard_0002, public');  # one client, then gone
is($rc, 0, 'a client sets search_path through pgbouncer') or diag($out);
($rc, $out) = run_cmd({}, 'psql', '-X', '-q', '-d', "$B dbname=app_one", '-c', "INSERT INTO photos (caption) VALUES ('leaked')");  # another client
is($rc, 0, "the next client's unqualified insert") or diag($out);
# PostgreSQL 18 reports search_path to the client (GUC_REPORT), and the
# pgbouncer of those Debian suites (1.26) then gives each client its own:
# the leak is a trap of the older servers.
my $leaked = $server->safe_psql('app', "SELECT count(*) FROM shard_0002.photos WHERE caption = 'leaked'");
if ($pg18)
{
	is($leaked, '0', 'a SET search_path of one client stays with that client (PostgreSQL 18 reports search_path)');
}
else
{
	is($leaked, '1', "a SET search_path of one client routes the next client's unqualified insert (shard_0002)");
}
($rc, $out) = run_cmd({ env => { PGOPTIONS => '-c search_path=shard_0003' } },
	'psql', '-X', '-q', '-d', "$B dbname=app_opt", '-c', "INSERT INTO photos (caption) VALUES ('options')");
is($rc, 0, 'a client with a search_path startup option inserts') or diag($out);
my $options = $server->safe_psql('app', q{
SELECT (SELECT count(*) || ' ' || coalesce(max(id)::text, '-') FROM public.photos WHERE caption = 'options')
       || '/' ||
       (SELECT count(*) || ' ' || coalesce(bool_and(shardid.id_shard(id) = 3)::text, '-') FROM shard_0003.photos WHERE caption = 'options')});
# The same servers and pgbouncer take a search_path startup option as the
# client's own setting; older ones drop it with the other options.
if ($pg18)
{
	is($options, '0 -/1 true',
		"a search_path startup option is kept (PostgreSQL 18 reports search_path): the row is in shard 3's table with a shard 3 ID");
}
else
{
	is($options, '1 1/0 -', "a search_path startup option is dropped: the row is in the template table, with the template's ID");
}

# --- 3. prepared statements per client ---------------------------------------
pytest_ok('psycopg through pgbouncer', { cwd => "$TOP/test/apps", env => { BOUNCER => $B, NAMED_OK => $named_ok } },
	'test_pgbouncer.py');

SKIP:
{
	skip "the node-postgres checks: $no_js", 2 if $no_js;
	my $js = js_dir(PostgreSQL::Test::Utils::tempdir . '/js');
	system('cp', "$TOP/test/apps/pgbouncer.test.mjs", "$js/") == 0 or die "cp: $?";
	node_test_ok('node-postgres through pgbouncer',
		{ cwd => $js, env => { BOUNCER_HOST => $dir, BOUNCER_PORT => $port, PGUSER => $user, NAMED_OK => $named_ok } },
		'pgbouncer.test.mjs');
}
is($server->safe_psql('app', 'SELECT count(*) = count(DISTINCT id) AND bool_and(shardid.id_shard(id) = 2) FROM shard_0002.photos'),
	't', 'every ID of shard 2 decodes to shard 2, distinct');

done_testing();
