# orm_recipes.pl — the ORM recipes of docs/applications.md, each on its own
# database of one server, each inserting, reading back and checking that
# the ID is exact and decodes to the right shard, and showing the traps the
# page warns about. Their tests live with them (clients/python/recipes,
# clients/js/recipes) and run under Debian's python3-pytest and node --test:
#   Django (Debian's python3-django: BigAutoField + RunSQL DEFAULT on a
#   generator sequence of its own; AlterField and loaddata traps; IDs as
#   strings; a sharded table changed by apply_ddl() in a migration),
#   SQLAlchemy (python3-sqlalchemy: server_default, RETURNING,
#   return_defaults, schema_translate_map), Alembic (python3-alembic:
#   apply_ddl() in op.get_context().autocommit_block(), a column and an
#   index CONCURRENTLY on a sharded table, up and down; the trap: in
#   Alembic's transaction, 25001), and node-postgres, knex, kysely,
#   sequelize, typeorm and drizzle at the versions of
#   clients/js/recipes/package-lock.json (npm ci from the npm registry, on
#   Debian's nodejs and npm).
# The JavaScript recipes are skipped, saying why, where nodejs is not
# Debian's (the Debian roots of test/matrix run them).
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use File::Path qw(make_path);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use ShardidTest;
use ShardidApps;
use Test::More;

need_packages(qw(python3 python3-pytest python3-psycopg python3-psycopg2 python3-sqlalchemy python3-django
	  python3-alembic));
my $no_js = js_unavailable('npm');

my $node = PostgreSQL::Test::Cluster->new('recipes');
$node->init;
$node->append_conf('postgresql.conf', "log_statement = none\n");
$node->start;
for my $db (qw(django sqlalchemy alembic js))
{
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, 'CREATE EXTENSION shardid');
}
# the Django and Alembic recipes' apply_ddl() migrations build an index
# CONCURRENTLY over a loopback connection
$node->safe_psql($_, 'CREATE EXTENSION dblink') for qw(django alembic);

my $work = PostgreSQL::Test::Utils::tempdir;
my %py = (PYTHONPATH => "$TOP/clients/python");

# The Django and Alembic recipes write beside themselves (fixtures, the
# migrations' bytecode): they run in copies.
system('cp', '-r', "$TOP/clients/python/recipes/django_recipe", "$TOP/clients/python/recipes/alembic_recipe", "$work/") == 0
  or die "cp: $?";

pytest_ok('django recipe', { cwd => "$work/django_recipe", env => { %py, pg_env($node, 'django') } },
	'test_django_recipe.py');

pytest_ok('sqlalchemy recipe', { cwd => "$TOP/clients/python/recipes", env => { %py, pg_env($node, 'sqlalchemy') } },
	'test_sqlalchemy_recipe.py');

pytest_ok('alembic recipe', { cwd => "$work/alembic_recipe", env => { %py, pg_env($node, 'alembic') } },
	'test_alembic_recipe.py');

SKIP:
{
	skip "the JavaScript recipes: $no_js", 3 if $no_js;
	note('node ' . (run_cmd({}, $NODE, '--version'))[1] =~ s/\n//r . ', npm ' . (run_cmd({}, 'npm', '--version'))[1] =~ s/\n//r);
	$node->safe_psql('js', q{
CREATE SEQUENCE public.photos_gen AS bigint;
CREATE TABLE public.photos (id bigint PRIMARY KEY DEFAULT shardid.next_id(5, 'public.photos_gen'::regclass), caption text);
CREATE SEQUENCE public.photos_sync_gen AS bigint;
CREATE TABLE public.photos_sync (id bigint PRIMARY KEY DEFAULT shardid.next_id(5, 'public.photos_sync_gen'::regclass), caption text);
});
	make_path("$work/js/recipes");
	system('cp', "$TOP/clients/js/shardid-ids.mjs", "$work/js/") == 0 or die "cp: $?";
	system('cp', map({ "$TOP/clients/js/recipes/$_" } qw(package.json package-lock.json recipes.test.mjs)), "$work/js/recipes/") == 0
	  or die "cp: $?";
	# a TLS proxy's certificate authority, if this machine trusts one, for npm's registry
	my %ca = -f '/etc/ssl/certs/ca-certificates.crt' ? (NODE_EXTRA_CA_CERTS => '/etc/ssl/certs/ca-certificates.crt') : ();
	my ($rc, $out) = run_cmd({ cwd => "$work/js/recipes", env => \%ca }, 'npm', 'ci', '--no-audit', '--no-fund', '--prefer-offline');
	is($rc, 0, "npm ci: the lockfile's versions") or diag($out);
	note("npm ci: $1 at the lockfile's versions") if $out =~ /(added \d+ packages)/;
	node_test_ok('js recipes', { cwd => "$work/js/recipes", env => { %ca, pg_env($node, 'js') } }, 'recipes.test.mjs');
}

done_testing();
