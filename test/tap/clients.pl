# clients.pl — the client decoders (clients/python, clients/js) agree with
# the server: IDs made by next_id() and make_id() under the default layout
# and under a configured one (in a second database), most above 2^53, are
# written with their server-side decodes and short codes to a JSON fixture,
# and both clients' own test suites run against it (SHARDID_FIXTURE) under
# Debian's python3-pytest and node --test. Then the examples of
# docs/applications.md ("Decoding IDs in the application") run with psycopg
# and node-postgres, and the packed clients/js installs as an application
# installs it.
#
# The JavaScript parts are skipped, saying why, where nodejs is not
# Debian's (NodeSource's on this project's Debian 12 host): the Debian
# roots of test/matrix run them.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use File::Path qw(make_path);
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use ShardidTest;
use ShardidApps;
use Test::More;

need_packages(qw(python3 python3-pytest python3-psycopg));
my $no_js = js_unavailable(qw(node-pg npm));

is(system("dpkg -S \$(readlink -f $PYTHON) >/dev/null 2>&1"), 0, "$PYTHON is from a Debian package");

my $node = PostgreSQL::Test::Cluster->new('clients');
$node->init;
$node->append_conf('postgresql.conf', "log_statement = none\n");
$node->start;
my $work = PostgreSQL::Test::Utils::tempdir;

$node->safe_psql('postgres', 'CREATE DATABASE default_db');
$node->safe_psql('postgres', 'CREATE DATABASE configured_db');
$node->safe_psql('default_db', 'CREATE EXTENSION shardid');
$node->safe_psql('configured_db', "CREATE EXTENSION shardid; SELECT shardid.configure('2020-02-02 02:02:02.202+00', 12, 11)");

# ids_json(DB, NAME) — the layout of DB and its IDs, decoded by the server, as JSON.
sub ids_json
{
	my ($db, $name) = @_;
	return $node->safe_psql($db, q{
CREATE SEQUENCE public.gen;
CREATE TABLE public.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(5, 'public.gen'));
INSERT INTO public.t SELECT FROM generate_series(1, 2100);   -- two milliseconds at least
INSERT INTO public.t
SELECT shardid.make_id(x.ts, x.shard, x.seq)
  FROM shardid.layout() AS l,
       LATERAL (VALUES (l.epoch, 0, 0), (l.epoch, 0, 1), (l.epoch, l.max_shard, 0),
                       (l.epoch + interval '1 ms', l.max_shard, l.ids_per_ms::int - 1),
                       (l.epoch + interval '1 day', 3, 4),
                       ('2039-01-19 03:14:08+00', 1, 2),
                       (l.last_time, 0, 0), (l.last_time, l.max_shard, l.ids_per_ms::int - 1)
       ) AS x(ts, shard, seq)
ON CONFLICT DO NOTHING;
SELECT pg_catalog.json_build_object(
         'name', :'name',
         'epoch_ms', (extract(epoch FROM l.epoch) * 1000)::bigint,
         'shard_bits', l.shard_bits, 'seq_bits', l.seq_bits,
         'ids', (SELECT pg_catalog.json_agg(pg_catalog.json_build_object(
                          'id', t.id::text,
                          'unix_ms', (extract(epoch FROM d.ts) * 1000)::bigint,
                          'shard', d.shard, 'seq', d.seq,
                          'code', shardid.to_shortcode(t.id),
                          'time_to_id', shardid.time_to_id(d.ts)::text) ORDER BY t.id)
                   FROM public.t, shardid.id_decode(t.id) AS d))
  FROM shardid.layout() AS l;
}, extra_params => [ '-v', "name=$name" ]);
}
my $default_json = ids_json('default_db', 'default');
my $configured_json = ids_json('configured_db', 'configured');

# The server's own view of the fixture, checked before the clients see it.
my $check = $node->safe_psql('configured_db', q{
SELECT count(*), count(*) FILTER (WHERE id > 2^53), min(id), max(id), bool_and(shardid.from_shortcode(shardid.to_shortcode(id)) = id)
  FROM public.t});
like($check, qr/^2108\|210[0-9]\|0\|9223372036854775807\|t$/,
	'configured layout: count, above 2^53, min, max, codes round-trip');
note("configured layout: $check (count, above 2^53, min, max, codes)");

# Codes the server refuses, with the SQLSTATE it gives; the clients must refuse them too.
my @bad_codes = ('', 'AB', 'a!b', 'Dg B', 'I__________', 'BAAAAAAAAAAA');
for my $code (@bad_codes)
{
	my ($rc, $out, $err) = $node->psql('default_db', "SELECT shardid.from_shortcode(:'code')",
		extra_params => [ '-v', "code=$code", '-v', 'VERBOSITY=verbose' ]);
	like($err, qr/ERROR:\s+(22P02|22003)/, "the server refuses code '$code' (22P02/22003)");
}

my $fixture = "$work/fixture.json";
open my $fh, '>', $fixture or die "$fixture: $!";
print $fh qq({"layouts": [$default_json, $configured_json], "bad_codes": ) . JSON::PP->new->encode(\@bad_codes) . "}\n";
close $fh;

note('python: ' . (run_cmd({}, $PYTHON, '--version'))[1]);
pytest_ok('python client agrees with the server',
	{ cwd => "$TOP/clients/python", env => { SHARDID_FIXTURE => $fixture } }, 'test_shardid_ids.py');

# The examples of docs/applications.md: printed there as they are here.
my $docs = PostgreSQL::Test::Utils::slurp_file("$TOP/docs/applications.md");
for my $f ('clients/python/example_app.py', 'clients/js/example-app.mjs')
{
	ok(index($docs, PostgreSQL::Test::Utils::slurp_file("$TOP/$f")) >= 0, "docs/applications.md shows $f as it is");
}

# ... and run against a table like the README's, with psycopg and node-postgres.
$node->safe_psql('default_db', q{
CREATE SEQUENCE public.photos_gen AS bigint;
CREATE TABLE public.photos (id bigint PRIMARY KEY DEFAULT shardid.next_id(5, 'public.photos_gen'), caption text);
});

# expected(FORMAT, ID) — the example's output: its first line from the
# server's decode of ID, then the row read back.
sub expected
{
	my ($fmt, $id) = @_;
	return $node->safe_psql('default_db', q{
SELECT format(:'fmt', id, to_char(shardid.id_time(id) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS'),
              shardid.id_shard(id), shardid.to_shortcode(id))
  FROM public.photos WHERE id = :'id'::bigint AND caption = 'dog'
}, extra_params => [ '-v', "fmt=$fmt", '-v', "id=$id" ]);
}

my %env = pg_env($node, 'default_db');
my ($rc, $out) = run_cmd({ cwd => "$TOP/clients/python", env => \%env }, $PYTHON, 'example_app.py');
is($rc, 0, 'the python example runs') or diag($out);
chomp $out;
my ($id) = $out =~ /^\{"id": "(\d+)"/;
$id //= 0;
is($out, expected('{"id": "%s", "created_at": "%s+00:00", "shard": %s, "url": "/p/%s"}', $id)
	  . qq(\n{"id": "$id", "caption": "dog"}),
	'python example: the decode, shard and short code of the server, and the row read back');
note('python example (psycopg ' . (run_cmd({}, $PYTHON, '-c', 'import psycopg; print(psycopg.__version__)'))[1] =~ s/\n//r
	  . '): ' . (split /\n/, $out)[0]);

SKIP:
{
	skip "the JavaScript client: $no_js", 9 if $no_js;

	is(system("dpkg -S \$(readlink -f $NODE) >/dev/null 2>&1"), 0, "$NODE is from a Debian package");
	note('node: ' . (run_cmd({}, $NODE, '--version'))[1]);
	node_test_ok('js client agrees with the server',
		{ cwd => "$TOP/clients/js", env => { SHARDID_FIXTURE => $fixture } }, 'shardid-ids.test.mjs');

	# node-postgres is an ES module import: give the copy a node_modules/pg, as npm would
	js_dir("$work/js");
	($rc, $out) = run_cmd({ cwd => "$work/js", env => \%env }, $NODE, 'example-app.mjs');
	is($rc, 0, 'the node example runs') or diag($out);
	chomp $out;
	($id) = $out =~ /^\{"id":"(\d+)"/;
	$id //= 0;
	is($out, expected('{"id":"%s","createdAt":"%sZ","shard":%s,"url":"/p/%s"}', $id) . qq(\n{"id":"$id","caption":"dog"}),
		'node example: the decode, shard and short code of the server, and the row read back');
	note('node example (node-postgres): ' . (split /\n/, $out)[0]);

	# The package as an application installs it (docs/applications.md):
	# packed, then installed from the tarball. npm installs a directory as a
	# symlink, and the router's import of 'pg' then resolves beside the
	# link's target, not in the application ("Cannot find package 'pg'"); a
	# tarball is copied.
	($rc, my $tarball) = run_cmd({ cwd => $work }, 'npm', 'pack', '--silent', "$TOP/clients/js");
	is($rc, 0, 'npm pack clients/js') or diag($tarball);
	chomp $tarball;
	$tarball = (split /\n/, $tarball)[-1] // '';
	make_path("$work/app");
	PostgreSQL::Test::Utils::append_to_file("$work/app/package.json", qq({"name": "app", "private": true, "type": "module"}\n));
	($rc, $out) = run_cmd({ cwd => "$work/app" }, 'npm', 'install', '--offline', '--no-audit', '--no-fund', '--silent', "$work/$tarball");
	is($rc, 0, "npm install $tarball") or diag($out);
	ok(-d "$work/app/node_modules/shardid-ids" && !-l "$work/app/node_modules/shardid-ids",
		"npm installed a copy of $tarball, not a link");
	symlink('/usr/share/nodejs/pg', "$work/app/node_modules/pg") or die "symlink: $!";    # npm install pg, offline
	PostgreSQL::Test::Utils::append_to_file("$work/app/app.mjs", <<'JS');
import { decode } from 'shardid-ids';
import { ShardMap } from 'shardid-ids/router';
const m = new ShardMap({ router: process.env.ROUTER, nodes: { a: process.env.ROUTER } });
try {
  console.log(String(decode(4035735874804122624n).shard), await m.schemaForShard(5));
} finally {
  await m.close();
}
JS
	($rc, $out) = run_cmd({ cwd => "$work/app",
			env => { ROUTER => sprintf('host=%s port=%s user=%s dbname=default_db', $node->host, $node->port, $env{PGUSER}) } },
		$NODE, 'app.mjs');
	is("$rc $out", "0 1 shard_0005\n",
		"the installed package ($tarball): shardid-ids and shardid-ids/router import, pg found");
}

done_testing();
