#!/usr/bin/env bash
# test/e2e/clients.sh — the client decoders (clients/python, clients/js) agree
# with the server: IDs made by next_id() and make_id() under the default
# layout and under a configured one (in a second database), most above 2^53,
# are written with their server-side decodes and short codes to a JSON
# fixture, and both clients' own test suites run against it with Debian's
# python3 and nodejs. Then the examples of docs/applications.md ("Decoding
# IDs in the application") run
# with psycopg and node-postgres.
set -euo pipefail
cd "$(dirname "$0")/../.."
source test/lib/e2e.sh

# Debian's interpreters, not whatever else is first in PATH. A machine
# whose nodejs package comes from another archive (NodeSource's, on this
# project's Debian 12 host) cannot take Debian's node-pg: the clients do not
# depend on the PostgreSQL major, so they are tested in the Debian roots of
# test/matrix (17, 18) and skipped here.
PYTHON=/usr/bin/python3 NODE=/usr/bin/node
node_version=$(dpkg-query -W -f='${Version}' nodejs 2>/dev/null || true)
if [[ "$node_version" == *nodesource* ]]; then
	echo "SKIP: nodejs $node_version is NodeSource's build, not Debian's (the client tests run in the Debian roots)"
	exit 77
fi
need=()
for p in python3 python3-psycopg nodejs node-pg npm; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
	[ "$(id -u)" = 0 ] || fail "Debian packages missing: ${need[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
fi

for bin in "$PYTHON" "$NODE"; do
	dpkg -S "$(readlink -f "$bin")" >/dev/null 2>&1 || fail "$bin is not from a Debian package"
done

pg_start clients
work=$(mktemp -d /tmp/shardid-clients.XXXXXX)
trap 'pg_stop_all; rm -rf "$work"' EXIT

# ids_json DB NAME — the layout of DB and its IDs, decoded by the server, as JSON.
ids_json() {
	q -d "$1" -v name="$2" <<'SQL'
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
SQL
}

createdb default_db
createdb configured_db
q -d default_db -c "CREATE EXTENSION shardid"
q -d configured_db -c "CREATE EXTENSION shardid" \
	-c "SELECT shardid.configure('2020-02-02 02:02:02.202+00', 12, 11)" >/dev/null
default_json=$(ids_json default_db default)
configured_json=$(ids_json configured_db configured)

# The server's own view of the fixture, checked before the clients see it.
check=$(q -d configured_db -c "
	SELECT count(*), count(*) FILTER (WHERE id > 2^53), min(id), max(id), bool_and(shardid.from_shortcode(shardid.to_shortcode(id)) = id)
	  FROM public.t")
case "$check" in
	2108\|210[0-9]\|0\|9223372036854775807\|t) echo "ok - configured layout: $check (count, above 2^53, min, max, codes)" ;;
	*) fail "configured layout IDs: $check" ;;
esac

# Codes the server refuses, with the SQLSTATE it gives; the clients must refuse them too.
bad_codes=("" "AB" "a!b" "Dg B" "I__________" "BAAAAAAAAAAA")
for code in "${bad_codes[@]}"; do
	err=$(psql -X -q -d default_db -v code="$code" -v VERBOSITY=verbose \
		<<<"SELECT shardid.from_shortcode(:'code')" 2>&1 || true)
	echo "$err" | grep -Eq "ERROR: +(22P02|22003)" || fail "server did not refuse code '$code': $err"
done
echo "ok - the server refuses ${#bad_codes[@]} bad codes (22P02/22003)"
bad_json=$(printf '%s\n' "${bad_codes[@]}" | "$PYTHON" -c 'import json, sys; print(json.dumps(sys.stdin.read().split("\n")[:-1]))')

fixture=$work/fixture.json
printf '{"layouts": [%s, %s], "bad_codes": %s}\n' "$default_json" "$configured_json" "$bad_json" > "$fixture"
export SHARDID_FIXTURE=$fixture

echo "--- python: $("$PYTHON" --version)"
(cd clients/python && "$PYTHON" -m unittest -v test_shardid_ids) > "$work/python.log" 2>&1 ||
	{ cat "$work/python.log"; fail "python client tests"; }
grep -q "skipped" "$work/python.log" && { cat "$work/python.log"; fail "python fixture tests were skipped"; }
tail -3 "$work/python.log"
echo "ok - python client agrees with the server"

echo "--- node: $("$NODE" --version)"
(cd clients/js && "$NODE" --test --test-reporter=tap shardid-ids.test.mjs) > "$work/node.log" 2>&1 ||
	{ cat "$work/node.log"; fail "node client tests"; }
grep -q "^# skipped 0$" "$work/node.log" || { cat "$work/node.log"; fail "node fixture tests were skipped"; }
grep -E "^# (tests|pass|fail)" "$work/node.log"
echo "ok - js client agrees with the server"

# The examples of docs/applications.md: printed there as they are here,
# and run against a table like the README's, with psycopg and node-postgres.
for f in clients/python/example_app.py clients/js/example-app.mjs; do
	"$PYTHON" -c 'import sys; sys.exit(open(sys.argv[1]).read() not in open("docs/applications.md").read())' "$f" ||
		fail "docs/applications.md does not show $f as it is"
done
echo "ok - docs/applications.md shows both examples as tested"
q -d default_db -c "CREATE SEQUENCE public.photos_gen AS bigint" \
	-c "CREATE TABLE public.photos (id bigint PRIMARY KEY DEFAULT shardid.next_id(5, 'public.photos_gen'), caption text)"
# expected OUTPUT-FORMAT ID — the example's first line, from the server's decode of ID
expected() {
	q -d default_db -v id="$2" -v fmt="$1" <<'SQL'
SELECT format(:'fmt', id, to_char(shardid.id_time(id) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS'),
              shardid.id_shard(id), shardid.to_shortcode(id))
  FROM public.photos WHERE id = :'id'::bigint AND caption = 'dog'
SQL
}
out=$(cd clients/python && PGDATABASE=default_db "$PYTHON" example_app.py) || fail "python example: $out"
id=$(echo "$out" | sed -n '1s/^{"id": "\([0-9]*\)".*/\1/p')
want=$(printf '%s\n%s' "$(expected '{"id": "%s", "created_at": "%s+00:00", "shard": %s, "url": "/p/%s"}' "$id")" \
	"{\"id\": \"$id\", \"caption\": \"dog\"}")
[ -n "$id" ] && [ "$out" = "$want" ] || fail "python example printed '$out', expected '$want'"
echo "ok - python example (psycopg $("$PYTHON" -c 'import psycopg; print(psycopg.__version__)')): $(echo "$out" | head -1)"

# node-postgres is an ES module import: give the copy a node_modules/pg, as npm would
mkdir -p "$work/js/node_modules"
cp clients/js/*.mjs clients/js/package.json "$work/js/"
ln -s /usr/share/nodejs/pg "$work/js/node_modules/pg"
out=$(cd "$work/js" && PGDATABASE=default_db "$NODE" example-app.mjs) || fail "node example: $out"
id=$(echo "$out" | sed -n '1s/^{"id":"\([0-9]*\)".*/\1/p')
want=$(printf '%s\n%s' "$(expected '{"id":"%s","createdAt":"%sZ","shard":%s,"url":"/p/%s"}' "$id")" \
	"{\"id\":\"$id\",\"caption\":\"dog\"}")
[ -n "$id" ] && [ "$out" = "$want" ] || fail "node example printed '$out', expected '$want'"
echo "ok - node example (node-postgres): $(echo "$out" | head -1)"

# The package as an application installs it (docs/applications.md): packed,
# then installed from the tarball. npm installs a directory as a symlink,
# and the router's import of 'pg' then resolves beside the link's target,
# not in the application ("Cannot find package 'pg'"); a tarball is copied.
top=$PWD
tarball=$(cd "$work" && npm pack --silent "$top/clients/js") || fail "npm pack clients/js"
mkdir -p "$work/app"
echo '{"name": "app", "private": true, "type": "module"}' > "$work/app/package.json"
(cd "$work/app" && npm install --offline --no-audit --no-fund --silent "$work/$tarball") ||
	fail "npm install $tarball"
[ -d "$work/app/node_modules/shardid-ids" ] && [ ! -L "$work/app/node_modules/shardid-ids" ] ||
	fail "npm did not install a copy of $tarball"
ln -s /usr/share/nodejs/pg "$work/app/node_modules/pg"	# npm install pg, offline
cat > "$work/app/app.mjs" <<'JS'
import { decode } from 'shardid-ids';
import { ShardMap } from 'shardid-ids/router';
const m = new ShardMap({ router: process.env.ROUTER, nodes: { a: process.env.ROUTER } });
try {
  console.log(String(decode(4035735874804122624n).shard), await m.schemaForShard(5));
} finally {
  await m.close();
}
JS
out=$(cd "$work/app" && ROUTER="host=$PGHOST port=$PGPORT user=$PGUSER dbname=default_db" "$NODE" app.mjs 2>&1) ||
	fail "the installed package: $out"
[ "$out" = "1 shard_0005" ] || fail "the installed package printed '$out', expected '1 shard_0005'"
echo "ok - npm install of the packed clients/js ($tarball): shardid-ids and shardid-ids/router import, pg found"

echo "clients: all checks passed"
