#!/usr/bin/env bash
# test/e2e/shard_dump_restore.sh — moves one logical shard between databases
# with pg_dump -n: the restored shard keeps generating IDs above its old ones,
# attach_shard() registers it, detach_shard() forgets it at the source.
# Starts its own server; exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
source test/lib/e2e.sh
pg_start shard-move

createdb source_db
createdb target_db
q -d source_db >/dev/null <<'SQL'
CREATE EXTENSION shardid;
SELECT shardid.create_shards(4, 6);
CREATE TABLE public.photos (id bigint PRIMARY KEY, caption text);
SELECT shardid.create_table('public.photos');
INSERT INTO shard_0005.photos (caption) SELECT 'before ' || g FROM generate_series(1, 5000) g;
SQL
old_max=$(q -d source_db -c "SELECT max(id) FROM shard_0005.photos")
old_state=$(q -d source_db -c "SELECT last_value FROM shard_0005.id_seq")
echo "source: 5000 rows, max id $old_max, generator state $old_state"

# The target already has the extension (and a shard of its own).
q -d target_db >/dev/null <<'SQL'
CREATE EXTENSION shardid;
SELECT shardid.create_shard(9);
CREATE TABLE public.photos (id bigint PRIMARY KEY, caption text);
SELECT shardid.create_table('public.photos');
SQL

dump=$(mktemp /tmp/shard_0005.XXXXXX.sql)
trap 'rm -f "$dump"; pg_stop_all' EXIT
pg_dump -d source_db -n shard_0005 -f "$dump"
grep -q "shardid.next_id(5, 'shard_0005.id_seq'::regclass)" "$dump" || fail "dump lacks the next_id DEFAULT"
q -d target_db -f "$dump" >/dev/null

rows=$(q -d target_db -c "SELECT count(*) FROM shard_0005.photos")
[ "$rows" = 5000 ] || fail "restored $rows rows, expected 5000"
state=$(q -d target_db -c "SELECT last_value FROM shard_0005.id_seq")
[ "$state" = "$old_state" ] || fail "restored generator state $state, expected $old_state"

# Register the restored schema, then write to it.
attached=$(q -d target_db -c "SELECT shardid.attach_shard(5)")
[ "$attached" = 0 ] || fail "attach_shard created $attached tables, expected 0"
[ "$(q -d target_db -c "SELECT shardid.shard_schema(5)")" = shard_0005 ] || fail "shard_schema(5) after attach"
q -d target_db -c "INSERT INTO shard_0005.photos (caption) SELECT 'after ' || g FROM generate_series(1, 5000) g"
check=$(q -d target_db -c "
    SELECT count(*), min(id) > $old_max, bool_and(shardid.id_shard(id) = 5), count(DISTINCT id) = count(*)
      FROM shard_0005.photos WHERE caption LIKE 'after %'")
[ "$check" = "5000|t|t|t" ] || fail "new IDs on the target: $check (count|above old max|shard 5|unique)"
total=$(q -d target_db -c "SELECT count(DISTINCT id) FROM shard_0005.photos")
[ "$total" = 10000 ] || fail "$total distinct IDs in shard_0005, expected 10000"
view=$(q -d target_db -c "SELECT last_id > $old_max FROM shardid.shards WHERE shard = 5")
[ "$view" = t ] || fail "shardid.shards on the target: last_id above old max = '$view'"

# A table created later reaches the moved shard too.
q -d target_db -c "CREATE TABLE public.tags (id bigint PRIMARY KEY, tag text); SELECT shardid.create_table('public.tags')" >/dev/null
tag=$(q -d target_db -c "INSERT INTO shard_0005.tags (tag) VALUES ('x') RETURNING id > $old_max AND shardid.id_shard(id) = 5")
[ "$tag" = t ] || fail "shard_0005.tags on the target: $tag"

# At the source, the shard is forgotten and dropped.
q -d source_db -c "SELECT shardid.detach_shard(5); DROP SCHEMA shard_0005 CASCADE" >/dev/null 2>&1
left=$(q -d source_db -c "SELECT string_agg(shard::text, ',' ORDER BY shard) FROM shardid.shards")
[ "$left" = "4,6" ] || fail "source still lists shards '$left', expected 4,6"

echo "ok: shard 5 moved, 5000 rows kept, 5000 new IDs above $old_max"

# The whole database, dumped and restored into a new one: the event trigger
# that keeps registered templates (shardid_template_drop) is part of the
# extension, so the dump leaves it out and CREATE EXTENSION brings it back.
whole=$(mktemp /tmp/source_db.XXXXXX.dump)
trap 'rm -f "$dump" "$whole"; pg_stop_all' EXIT
pg_dump -Fc -d source_db -f "$whole"
pg_restore -f - "$whole" | grep -q "EVENT TRIGGER" && fail "the dump holds an event trigger"
createdb restored_db
pg_restore --exit-on-error -d restored_db "$whole"
[ "$(q -d restored_db -c "SELECT string_agg(table_name, ',') FROM shardid.sharded_tables")" = photos ] ||
	fail "restored_db: the registry of sharded tables was not restored"
[ "$(q -d restored_db -c "SELECT evtname FROM pg_event_trigger")" = shardid_template_drop ] ||
	fail "restored_db lacks the event trigger"
err=$(q -d restored_db -c "DROP TABLE public.photos" 2>&1) && fail "restored_db: the template was dropped"
grep -q "shardid.drop_table('public.photos')" <<<"$err" || fail "restored_db: DROP TABLE refused with '$err'"
[ "$(q -d restored_db -c "SELECT shardid.drop_table('public.photos')")" = 2 ] || fail "restored_db: drop_table"
q -d restored_db -c "DROP TABLE public.photos" >/dev/null
echo "ok: pg_dump/pg_restore of the whole database keeps the template guard (extension member, not dumped)"
