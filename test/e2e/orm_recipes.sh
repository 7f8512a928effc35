#!/usr/bin/env bash
# test/e2e/orm_recipes.sh — the ORM recipes of docs/applications.md, each on
# its own database of one private server, each inserting, reading back and
# checking that the ID is exact and decodes to the right shard, and showing
# the traps the page warns about:
#   Django (Debian's python3-django: BigAutoField + RunSQL DEFAULT on a
#   generator sequence of its own; AlterField and loaddata traps; IDs as
#   strings; a sharded table changed by apply_ddl() in a migration), SQLAlchemy (python3-sqlalchemy: server_default, RETURNING,
#   return_defaults, schema_translate_map), Alembic (python3-alembic:
#   apply_ddl() in op.get_context().autocommit_block(), a column and an
#   index CONCURRENTLY on a sharded table, up and down; the trap: in
#   Alembic's transaction, 25001), and node-postgres, knex, kysely,
#   sequelize, typeorm and drizzle at the versions of
#   clients/js/recipes/package-lock.json (npm ci from the npm registry, on
#   Debian's nodejs and npm).
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
source test/lib/e2e.sh
source test/lib/apps.sh
PATH=$(pg_config --bindir):$PATH
export PATH

JS=0
apps_js_available && JS=1
apps_need python3 python3-psycopg python3-psycopg2 python3-sqlalchemy python3-django python3-alembic
[ $JS = 0 ] || apps_need nodejs npm

pg_start recipes
work=$(mktemp -d /tmp/shardid-recipes.XXXXXX)
trap 'pg_stop_all; rm -rf "$work"' EXIT
for db in django sqlalchemy alembic js; do
	createdb "$db"
	q -d "$db" -c "CREATE EXTENSION shardid"
done
# the Django and Alembic recipes' apply_ddl() migrations build an index
# CONCURRENTLY over a loopback connection
q -d django -c "CREATE EXTENSION dblink"
q -d alembic -c "CREATE EXTENSION dblink"
export PYTHONPATH=$top/clients/python

echo "--- django $("$PYTHON" -c 'import django; print(django.get_version())')"
cp -r clients/python/recipes/django_recipe "$work/django_recipe"
(cd "$work/django_recipe" && PGDATABASE=django "$PYTHON" test_django_recipe.py) >"$work/django.log" 2>&1 ||
	{ cat "$work/django.log"; fail "django recipe"; }
grep -E "^(django|trap|recipe)" "$work/django.log"
ok "django recipe: $(grep -E '^Ran' "$work/django.log")"

echo "--- sqlalchemy"
(cd clients/python/recipes && PGDATABASE=sqlalchemy "$PYTHON" test_sqlalchemy_recipe.py) >"$work/sqlalchemy.log" 2>&1 ||
	{ cat "$work/sqlalchemy.log"; fail "sqlalchemy recipe"; }
head -n 1 "$work/sqlalchemy.log"
ok "sqlalchemy recipe: $(grep -E '^Ran' "$work/sqlalchemy.log")"

echo "--- alembic $("$PYTHON" -c 'import alembic; print(alembic.__version__)')"
cp -r clients/python/recipes/alembic_recipe "$work/alembic_recipe"
(cd "$work/alembic_recipe" && PGDATABASE=alembic "$PYTHON" test_alembic_recipe.py) >"$work/alembic.log" 2>&1 ||
	{ cat "$work/alembic.log"; fail "alembic recipe"; }
grep -oE "(alembic [0-9]|trap:|recipe:).*" "$work/alembic.log"
ok "alembic recipe: $(grep -E '^Ran' "$work/alembic.log")"

[ $JS = 1 ] || apps_js_skipped "the JavaScript recipes"
echo "--- node $("$NODE" --version), npm $(npm --version)"
q -d js >/dev/null <<'SQL'
CREATE SEQUENCE public.photos_gen AS bigint;
CREATE TABLE public.photos (id bigint PRIMARY KEY DEFAULT shardid.next_id(5, 'public.photos_gen'::regclass), caption text);
CREATE SEQUENCE public.photos_sync_gen AS bigint;
CREATE TABLE public.photos_sync (id bigint PRIMARY KEY DEFAULT shardid.next_id(5, 'public.photos_sync_gen'::regclass), caption text);
SQL
mkdir -p "$work/js/recipes"
cp clients/js/shardid-ids.mjs "$work/js/"
cp clients/js/recipes/package.json clients/js/recipes/package-lock.json clients/js/recipes/recipes.test.mjs "$work/js/recipes/"
# a TLS proxy's certificate authority, if this machine trusts one, for npm's registry
[ ! -f /etc/ssl/certs/ca-certificates.crt ] || export NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
(cd "$work/js/recipes" && npm ci --no-audit --no-fund --prefer-offline) >"$work/npm.log" 2>&1 ||
	{ cat "$work/npm.log"; fail "npm ci"; }
ok "npm ci: $(grep -oE 'added [0-9]+ packages' "$work/npm.log") at the lockfile's versions"
(cd "$work/js/recipes" && PGDATABASE=js "$NODE" --test --test-reporter=tap recipes.test.mjs) >"$work/js.log" 2>&1 ||
	{ cat "$work/js.log"; fail "js recipes"; }
grep -E "^(not )?ok [0-9]+ -" "$work/js.log"
grep -q "^# skipped 0$" "$work/js.log" || { cat "$work/js.log"; fail "js recipes were skipped"; }
ok "js recipes: $(grep -E '^# (pass|fail)' "$work/js.log" | tr '\n' ' ')"
echo "orm_recipes: all checks passed"
