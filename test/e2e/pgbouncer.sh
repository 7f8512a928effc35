#!/usr/bin/env bash
# test/e2e/pgbouncer.sh — Debian's pgbouncer in transaction mode in front of
# a server with shards 0-3 (docs/applications.md, "Poolers"):
#   1. 20,000 inserts from 8 pgbench clients into schema-qualified shard
#      tables (shard_000N.photos), through 2 server connections: all
#      distinct, each in its shard, each ID decoding to it;
#   2. the traps up to PostgreSQL 17: a session-level SET search_path leaks
#      to the next client of the same server connection, and a search_path
#      given as a startup option is dropped (ignore_startup_parameters =
#      options) so the row lands in the template table; from 18 (the server
#      reports search_path) pgbouncer 1.26 keeps each client's own;
#   3. prepared statements per client: psycopg 3 with prepare_threshold=None
#      and node-postgres' unnamed statements work on every version; named
#      prepared statements (psycopg's default after 5 executions, a named
#      node-postgres query) fail before pgbouncer 1.21 and work from 1.21 on
#      with max_prepared_statements.
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
source test/lib/e2e.sh
source test/lib/apps.sh
PATH=$(pg_config --bindir):$PATH
export PATH

JS=0
apps_js_available && JS=1
apps_need pgbouncer python3 python3-psycopg
[ $JS = 0 ] || apps_need nodejs node-pg

pg_start bouncer_pg
SERVER_HOST=$PGHOST SERVER_PORT=$PGPORT
createdb app
q -d app >/dev/null <<'SQL'
CREATE EXTENSION shardid;
SELECT shardid.create_shards(0, 3);
-- a template with a serial of its own, as many are written: what the
-- shards' copies replace with shardid.next_id()
CREATE TABLE public.photos (id bigserial PRIMARY KEY, caption text);
SELECT shardid.create_table('public.photos');
SQL

version=$(pgbouncer --version | sed -n 's/^PgBouncer \([0-9.]*\).*/\1/p' | head -n 1)
named_ok=0
dpkg --compare-versions "$version" ge 1.21 && named_ok=1
dir=$bouncer_pg_DIR/pgbouncer
mkdir -p "$dir"
port=$(pg_free_port)
echo '"postgres" ""' >"$dir/users.txt"
{
	echo "[databases]"
	echo "app = host=$SERVER_HOST port=$SERVER_PORT dbname=app pool_size=2"
	echo "app_one = host=$SERVER_HOST port=$SERVER_PORT dbname=app pool_size=1"
	echo "app_opt = host=$SERVER_HOST port=$SERVER_PORT dbname=app pool_size=1"
	echo "[pgbouncer]"
	echo "listen_addr ="
	echo "unix_socket_dir = $dir"
	echo "listen_port = $port"
	echo "auth_type = trust"
	echo "auth_file = $dir/users.txt"
	echo "pool_mode = transaction"
	echo "max_client_conn = 200"
	echo "ignore_startup_parameters = extra_float_digits, options"
	echo "logfile = $dir/pgbouncer.log"
	echo "pidfile = $dir/pgbouncer.pid"
	[ $named_ok = 0 ] || echo "max_prepared_statements = 100"
} >"$dir/pgbouncer.ini"
chown -R postgres: "$dir"
as_postgres pgbouncer -d -q "$dir/pgbouncer.ini" || { cat "$dir/pgbouncer.log"; fail "pgbouncer did not start"; }
stop_bouncer() { [ ! -f "$dir/pgbouncer.pid" ] || kill "$(cat "$dir/pgbouncer.pid")" 2>/dev/null || true; }
trap 'stop_bouncer; pg_stop_all' EXIT
for _ in $(seq 50); do [ -S "$dir/.s.PGSQL.$port" ] && break; sleep 0.1; done
B="host=$dir port=$port user=postgres"
echo "# pgbouncer $version, transaction mode, 2 server connections for app"
srv() { q -h "$SERVER_HOST" -p "$SERVER_PORT" -d app "$@"; }

# --- 1. pgbench through pgbouncer, schema-qualified --------------------------
work=$(mktemp -d /tmp/shardid-bouncer.XXXXXX)
trap 'stop_bouncer; pg_stop_all; rm -rf "$work"' EXIT
for s in 0 1 2 3; do echo "INSERT INTO shard_000$s.photos (caption) VALUES ('pgbench');" >"$work/s$s.sql"; done
pgbench -n -d "$B dbname=app" -c 8 -j 2 -t 2500 -M extended \
	-f "$work/s0.sql" -f "$work/s1.sql" -f "$work/s2.sql" -f "$work/s3.sql" >"$work/pgbench.log" 2>&1 ||
	{ cat "$work/pgbench.log"; fail "pgbench through pgbouncer"; }
echo "# $(grep -E '^tps' "$work/pgbench.log" | head -n 1)"
expect "20,000 inserts through pgbouncer: rows, distinct IDs, IDs in their shard's table decoding to it" \
	"$(srv <<'SQL'
SELECT count(*) || ' ' || count(DISTINCT id) || ' ' || count(*) FILTER (WHERE shardid.id_shard(id) = s)
  FROM (SELECT id, 0 AS s FROM shard_0000.photos UNION ALL SELECT id, 1 FROM shard_0001.photos
        UNION ALL SELECT id, 2 FROM shard_0002.photos UNION ALL SELECT id, 3 FROM shard_0003.photos) t
 WHERE true
SQL
)" "20000 20000 20000"

# --- 2. the search_path traps ------------------------------------------------
psql -X -q -d "$B dbname=app_one" -c "SET search_path = shard_0002, public" # one client, then gone
psql -X -q -d "$B dbname=app_one" -c "INSERT INTO photos (caption) VALUES ('leaked')" # another client
# PostgreSQL 18 reports search_path to the client (GUC_REPORT), and the
# pgbouncer of those Debian suites (1.26) then gives each client its own:
# the leak is a trap of the older servers.
if [ "$(srv <<<"SELECT current_setting('server_version_num')::int >= 180000")" = t ]; then
	expect "a SET search_path of one client stays with that client (PostgreSQL 18 reports search_path)" \
		"$(srv <<<"SELECT count(*) FROM shard_0002.photos WHERE caption = 'leaked'")" 0
else
	expect "a SET search_path of one client routes the next client's unqualified insert (shard_0002)" \
		"$(srv <<<"SELECT count(*) FROM shard_0002.photos WHERE caption = 'leaked'")" 1
fi
PGOPTIONS="-c search_path=shard_0003" psql -X -q -d "$B dbname=app_opt" -c "INSERT INTO photos (caption) VALUES ('options')"
options=$(srv <<<"SELECT count(*) || ' ' || coalesce(max(id)::text, '-') FROM public.photos WHERE caption = 'options'")/$(srv <<<"SELECT count(*) || ' ' || coalesce(bool_and(shardid.id_shard(id) = 3)::text, '-') FROM shard_0003.photos WHERE caption = 'options'")
# The same servers and pgbouncer take a search_path startup option as the
# client's own setting; older ones drop it with the other options.
if [ "$(srv <<<"SELECT current_setting('server_version_num')::int >= 180000")" = t ]; then
	expect "a search_path startup option is kept (PostgreSQL 18 reports search_path): the row is in shard 3's table with a shard 3 ID" \
		"$options" "0 -/1 true"
else
	expect "a search_path startup option is dropped: the row is in the template table, with the template's ID" \
		"$options" "1 1/0 -"
fi

# --- 3. prepared statements per client ---------------------------------------
export B named_ok
"$PYTHON" - <<'PY' || fail "psycopg through pgbouncer"
import os, threading
import psycopg

B, named_ok = os.environ["B"] + " dbname=app", os.environ["named_ok"] == "1"

def writer(prepare_threshold, errors, n=60):
    try:
        with psycopg.connect(B, autocommit=True, prepare_threshold=prepare_threshold) as conn:
            for i in range(n):
                conn.execute("INSERT INTO shard_0001.photos (caption) VALUES (%s)", (f"psycopg {prepare_threshold}",))
    except psycopg.Error as e:
        errors.append(e)

def run(prepare_threshold):
    errors = []
    threads = [threading.Thread(target=writer, args=(prepare_threshold, errors)) for _ in range(6)]
    for t in threads: t.start()
    for t in threads: t.join()
    return errors

errors = run(None)
assert not errors, errors
print("ok - psycopg prepare_threshold=None: 360 inserts from 6 clients over 2 server connections")
errors = run(0)  # prepare every statement: named server-side prepared statements
if named_ok:
    assert not errors, errors
    print("ok - psycopg named prepared statements work with max_prepared_statements (pgbouncer >= 1.21)")
else:
    states = sorted({e.sqlstate for e in errors})
    assert errors and set(states) <= {"26000", "42P05"}, (states, errors)
    print(f"ok - psycopg named prepared statements fail before pgbouncer 1.21 ({len(errors)} of 6 clients: {', '.join(states)})")
PY

[ $JS = 1 ] || apps_js_skipped "the node-postgres checks"
mkdir -p "$work/js"
apps_js_dir "$work/js"
cat >"$work/js/bouncer.mjs" <<'JS'
import pg from 'pg';
const [host, port, namedOk] = process.argv.slice(2);
const pool = new pg.Pool({ host, port: Number(port), user: 'postgres', database: 'app', max: 8 });
pool.on('error', () => {});
const insert = (name) => pool.query({ name, text: 'INSERT INTO shard_0002.photos (caption) VALUES ($1) RETURNING id', values: [`pg ${name ?? 'unnamed'}`] });
const unnamed = await Promise.all([...Array(400).keys()].map(() => insert(undefined)));
if (unnamed.length !== 400) throw new Error('unnamed');
console.log(`ok - node-postgres unnamed statements: 400 inserts from 8 clients, ids like ${unnamed[0].rows[0].id}`);
const results = await Promise.allSettled([...Array(200).keys()].map(() => insert('photo_insert')));
const failed = results.filter((r) => r.status === 'rejected').map((r) => r.reason.code);
if (namedOk === '1') {
  if (failed.length) throw new Error(`named statements failed: ${failed}`);
  console.log('ok - node-postgres named statements work with max_prepared_statements (pgbouncer >= 1.21)');
} else {
  if (!failed.length || failed.some((c) => c !== '26000' && c !== '42P05')) throw new Error(`named statements: ${failed}`);
  console.log(`ok - node-postgres named statements fail before pgbouncer 1.21 (${failed.length} of 200: ${[...new Set(failed)]})`);
}
await pool.end();
JS
(cd "$work/js" && "$NODE" bouncer.mjs "$dir" "$port" "$named_ok") || fail "node-postgres through pgbouncer"
expect "every ID of shard 2 decodes to shard 2, distinct" \
	"$(srv <<<"SELECT count(*) = count(DISTINCT id) AND bool_and(shardid.id_shard(id) = 2) FROM shard_0002.photos")" t
echo "pgbouncer: all checks passed"
