#!/usr/bin/env bash
# test/e2e/update.sh — ALTER EXTENSION shardid UPDATE from every released
# version gives exactly a fresh install of the version in development:
#   - released scripts (src/sql/released/shardid--*.sql) are byte for byte as
#     shipped, and the installed scripts are the checkout's;
#   - a database on the old version, in use (layout configured, shards,
#     sharded tables, IDs issued, nodes when PL/Proxy is there), is updated;
#   - its extension picture (test/lib/extension_snapshot.sql: members,
#     function definitions, tables, views, types, comments, grants) equals
#     a fresh install's in another database, or the diff is printed;
#   - every configuration table, generator sequence and user table holds
#     what it held before, the layout stays frozen, and new IDs continue
#     above the old ones on every generator.
# Starts its own server; exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
source test/lib/e2e.sh

# Released scripts never change: each release adds its install script here
# and the upgrade script that led to it.
sha256sum --quiet -c - <<'EOF' || fail "a released install script changed (see above); released scripts are frozen"
4c229c925e4af8b9dcac944cb78b5fb9f4167bf3cc4aebe4e5da9cf103218c87  src/sql/released/shardid--0.1.sql
84cb95f69dd7a8927fa2b8b86d86df61f44c40385a7f374e8a1302c72ee4bd26  src/sql/released/shardid--0.2.sql
f6da0be6ce415c436a29c01d5c44bae3b7e3b2744a3b4ed356a7fec88f9d2300  src/sql/released/shardid--0.1--0.2.sql
EOF
echo "ok - released install scripts unchanged"

# Every upgrade script refuses to run outside ALTER EXTENSION.
for f in src/sql/released/shardid--*--*.sql build/shardid--*--*.sql; do
	[ -e "$f" ] || continue
	to=${f##*--}; to=${to%.sql}
	head -n 20 "$f" | grep -qxF "\echo Use \"ALTER EXTENSION shardid UPDATE TO '$to'\" to load this file. \quit" ||
		fail "$f lacks its guard line: \echo Use \"ALTER EXTENSION shardid UPDATE TO '$to'\" to load this file. \quit"
done
echo "ok - upgrade scripts start with their psql guard"

# The built upgrade scripts create each object once (src/sql/include.awk
# skips an object the update part already includes).
for f in build/shardid--*--*.sql; do
	[ -e "$f" ] || fail "no built upgrade script in build/: run make first"
	dup=$(grep -oiE '^CREATE (OR REPLACE )?(FUNCTION|PROCEDURE|VIEW) [a-z_.]+ *\([^)]*' "$f" | sort | uniq -d)
	[ -z "$dup" ] || fail "$f creates these more than once: $dup"
done
echo "ok - built upgrade scripts create each function, procedure and view once"

new=$(sed -n "s/^default_version = '\(.*\)'/\1/p" shardid.control)
[ -n "$new" ] || fail "no default_version in shardid.control"
extdir=$(pg_config --sharedir)/extension
for f in src/sql/released/shardid--*.sql build/shardid--*.sql; do
	cmp -s "$f" "$extdir/$(basename "$f")" ||
		fail "$extdir/$(basename "$f") is not the checkout's $f: run make install first"
done
echo "ok - installed scripts are the checkout's"

# The released versions: every install script but the development one.
olds=()
for f in src/sql/released/shardid--*.sql; do
	v=${f#src/sql/released/shardid--}; v=${v%.sql}
	case $v in *--*|"$new") ;; *) olds+=("$v") ;; esac
done
[ ${#olds[@]} -gt 0 ] || fail "no released install script in src/sql/released/"

pg_start update
work=$(mktemp -d /tmp/shardid-update.XXXXXX)
trap 'rm -rf "$work"; pg_stop_all' EXIT	# after pg_start, which sets its own

createdb fresh_db
q -d fresh_db -c "CREATE EXTENSION shardid"
[ "$(q -d fresh_db -c "SELECT extversion FROM pg_extension WHERE extname = 'shardid'")" = "$new" ] ||
	fail "CREATE EXTENSION shardid did not install $new"
q -d fresh_db -f test/lib/extension_snapshot.sql > "$work/fresh.txt"
echo "fresh $new install: $(grep -c ' | member$' "$work/fresh.txt") member objects"

plproxy=$(q -d fresh_db -c "SELECT count(*) FROM pg_available_extensions WHERE name = 'plproxy'")

for old in "${olds[@]}"; do
	db="from_${old//./_}"
	createdb "$db"
	echo "--- $old -> $new"
	q -d "$db" -v old="$old" >/dev/null <<'SQL'
CREATE EXTENSION shardid VERSION :'old';
SELECT shardid.configure('2020-02-02 02:02:02.202+00', 11, 12);
SELECT shardid.create_shards(0, 3);
CREATE TABLE public.photos (id bigint PRIMARY KEY, user_id bigint NOT NULL, caption text);
CREATE TABLE public.likes (id bigint PRIMARY KEY, photo_id bigint NOT NULL);
SELECT shardid.create_table('public.photos');
SELECT shardid.create_table('public.likes');
INSERT INTO shard_0000.photos (user_id, caption) SELECT g, 'photo ' || g FROM generate_series(1, 300) g;
INSERT INTO shard_0001.photos (user_id, caption) SELECT g, 'photo ' || g FROM generate_series(1, 5000) g;
INSERT INTO shard_0002.likes (photo_id) SELECT g FROM generate_series(1, 700) g;
SELECT shardid.detach_shard(3);
-- a generator outside the shard helpers
CREATE SEQUENCE public.gen;
CREATE TABLE public.items (id bigint PRIMARY KEY DEFAULT shardid.next_id(42, 'public.gen'), v int);
INSERT INTO public.items (v) SELECT g FROM generate_series(1, 2000) g;
SQL
	# nodes: with add_node() where PL/Proxy is installed (0.1 and 0.2 need
	# it there), else (19) into the tables as add_node() would
	if [ "$plproxy" = 1 ]; then
		q -d "$db" >/dev/null <<-'SQL'
		CREATE EXTENSION plproxy;
		SELECT shardid.add_node('a', 'host=/nonexistent/a port=5432 dbname=app');
		SELECT shardid.add_node('b', 'host=/nonexistent/b port=5432 dbname=app');
		SELECT shardid.place_shards('a', 0, 1);
		SELECT shardid.place_shards('b', 2, 2);
		SQL
		echo "ok - $old in use: layout, 4 shards (one detached), 3 tables with IDs, 2 nodes"
	else
		q -d "$db" >/dev/null <<-'SQL'
		INSERT INTO shardid.nodes (node, connstr) VALUES ('a', 'host=/nonexistent/a port=5432 dbname=app'),
		                                                 ('b', 'host=/nonexistent/b port=5432 dbname=app');
		INSERT INTO shardid.shard_placement (shard, node) VALUES (0, 'a'), (1, 'a'), (2, 'b');
		SQL
		echo "ok - $old in use: layout, 4 shards (one detached), 3 tables with IDs, 2 nodes (no PL/Proxy here: placed by INSERT)"
	fi

	# What must survive, as queries fixed before the update: every
	# configuration table (its columns as of the old version), every
	# sequence's state, every user table's IDs, the layout.
	q -d "$db" > "$work/$db.capture.sql" <<'SQL'
SELECT format('SELECT %L, t::text FROM (SELECT %s FROM %s) AS t ORDER BY 2;', c.oid::regclass,
              (SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) FROM pg_attribute AS a
                WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), c.oid::regclass)
  FROM pg_extension AS e, unnest(e.extconfig) AS x(cfg) JOIN pg_class AS c ON c.oid = x.cfg
 WHERE e.extname = 'shardid' AND c.relkind <> 'S'
UNION ALL
SELECT format('SELECT %L, last_value, is_called FROM %s;', c.oid::regclass, c.oid::regclass)
  FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
 WHERE c.relkind = 'S' AND n.nspname NOT IN ('pg_catalog', 'information_schema')
UNION ALL
SELECT format('SELECT %L, count(*), min(id), max(id), md5(string_agg(id::text, %L ORDER BY id)) FROM %s;',
              c.oid::regclass, ',', c.oid::regclass)
  FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
 WHERE c.relkind = 'r' AND n.nspname <> ALL (ARRAY['pg_catalog', 'information_schema', 'shardid'])
   AND EXISTS (SELECT FROM pg_attribute AS a WHERE a.attrelid = c.oid AND a.attname = 'id')
UNION ALL
SELECT 'SELECT ''layout'', epoch, shard_bits, seq_bits, in_use FROM shardid.layout();'
ORDER BY 1
SQL
	q -d "$db" -f "$work/$db.capture.sql" > "$work/$db.before.txt"
	grep -q '^layout|2020-02-02 02:02:02.202+00|11|12|t$' "$work/$db.before.txt" ||
		fail "$old: layout not configured and in use before the update"

	q -d "$db" -c "ALTER EXTENSION shardid UPDATE"
	got=$(q -d "$db" -c "SELECT extversion FROM pg_extension WHERE extname = 'shardid'")
	[ "$got" = "$new" ] || fail "$old: ALTER EXTENSION shardid UPDATE left version $got, expected $new"
	echo "ok - ALTER EXTENSION shardid UPDATE: $old -> $got"

	q -d "$db" -f test/lib/extension_snapshot.sql > "$work/$db.txt"
	if ! diff -U 3 --label "fresh install of $new" --label "$old updated to $new" \
		"$work/fresh.txt" "$work/$db.txt" > "$work/$db.diff"; then
		echo "The updated extension differs from a fresh install ('-' fresh $new, '+' $old updated):" >&2
		cat "$work/$db.diff" >&2
		echo "Each line is '<member object> | <property>'. Make src/sql/updates/*--$new.sql (with the objects it re-creates) and src/sql/install/*.sql agree." >&2
		fail "$old updated to $new is not a fresh $new install"
	fi
	echo "ok - $old updated equals a fresh $new install ($(wc -l < "$work/fresh.txt") catalog lines compared)"

	q -d "$db" -f "$work/$db.capture.sql" > "$work/$db.after.txt"
	if ! diff -u --label "before the update" --label "after the update" \
		"$work/$db.before.txt" "$work/$db.after.txt" >&2; then
		fail "$old: data or generator state changed in the update"
	fi
	echo "ok - $(wc -l < "$work/$db.before.txt") rows of configuration tables, sequence states, user tables and layout unchanged"

	err=$(psql -X -q -d "$db" -c '\set VERBOSITY verbose' -c "SELECT shardid.configure('2021-01-01')" 2>&1 || true)
	echo "$err" | grep -q 55000 || fail "$old: configure() after the update was not refused with 55000: $err"
	echo "ok - the layout stays frozen (configure refused, 55000)"
	# ... and no longer by the marker alone: the update started the freeze
	# record, which setval() and sequence replication cannot reset
	rec=$(q -d "$db" -c "SELECT count(*) || '|' || min(epoch_ms) || '|' || min(shard_bits) || '|' || min(seq_bits)
	                      FROM shardid.layout_freeze")
	[ "$rec" = "1|1580608922202|11|12" ] || fail "$old: freeze record after the update: $rec"
	q -d "$db" -c "SELECT setval('shardid.ids_issued', 1, false)" >/dev/null
	err=$(psql -X -q -d "$db" -c '\set VERBOSITY verbose' -c "SELECT shardid.configure('2021-01-01')" 2>&1 || true)
	echo "$err" | grep -q 55000 || fail "$old: configure() after setval(ids_issued) was not refused: $err"
	q -d "$db" -c "SELECT setval('shardid.ids_issued', 1, true)" >/dev/null
	echo "ok - the update wrote the freeze record ($rec): configure refused with the marker reset"

	# New IDs continue above the old ones, on the same shard.
	check=$(q -d "$db" <<'SQL'
CREATE TEMP TABLE old_max AS
SELECT 0 AS shard, 'shard_0000.photos' AS t, max(id) AS m FROM shard_0000.photos
UNION ALL SELECT 1, 'shard_0001.photos', max(id) FROM shard_0001.photos
UNION ALL SELECT 2, 'shard_0002.likes', max(id) FROM shard_0002.likes
UNION ALL SELECT 42, 'public.items', max(id) FROM public.items;
-- new rows are told apart by a NULL caption or a negative value
CREATE TEMP TABLE new_ids AS
WITH a AS (INSERT INTO shard_0000.photos (user_id) SELECT g FROM generate_series(1, 100) g RETURNING id),
     b AS (INSERT INTO shard_0001.photos (user_id) SELECT g FROM generate_series(1, 100) g RETURNING id),
     c AS (INSERT INTO shard_0002.likes (photo_id) SELECT -g FROM generate_series(1, 100) g RETURNING id),
     d AS (INSERT INTO public.items (v) SELECT -g FROM generate_series(1, 100) g RETURNING id)
SELECT 'shard_0000.photos' AS t, id FROM a UNION ALL SELECT 'shard_0001.photos', id FROM b
UNION ALL SELECT 'shard_0002.likes', id FROM c UNION ALL SELECT 'public.items', id FROM d;
SELECT string_agg(format('%s:%s', o.t, (SELECT count(*) FROM new_ids AS n
                                         WHERE n.t = o.t AND n.id > o.m AND shardid.id_shard(n.id) = o.shard)),
                  ' ' ORDER BY o.t)
  FROM old_max AS o;
SQL
)
	[ "$check" = "public.items:100 shard_0000.photos:100 shard_0001.photos:100 shard_0002.likes:100" ] ||
		fail "$old: new IDs above the old ones on their shard: $check"
	echo "ok - 4 generators continue above their old IDs on their shard: $check"
done
echo "update: all checks passed"
