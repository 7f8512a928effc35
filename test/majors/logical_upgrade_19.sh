#!/usr/bin/env bash
# test/majors/logical_upgrade_19.sh [OLD NEW] — docs/upgrades.md's upgrade to
# PostgreSQL 19 with logical replication, without and with sequence
# replication, from PostgreSQL OLD (18, Debian forky's) to NEW (19, forky +
# experimental), in their Debian root (lib/roots.sh: one for both). Every server
# listens on 127.0.0.1; clients run on this host.
# majors: 18 19
#
# Without sequences (the recipe for 18 -> 19): the old server has a
# configured layout, four logical shards with two sharded tables, shard 2's
# generator an hour ahead of the clock, and a writer inserting while the new
# server copies the shard schemas (FOR TABLES IN SCHEMA) and catches up.
# After the cut-over and sync_generators(), every new ID of every shard is
# above every copied one, and every row arrived exactly once.
#
# With sequences: 18 has no FOR ALL SEQUENCES (the old server refuses it), so
# sequence replication starts with a 19 publisher: the upgraded server
# publishes FOR ALL TABLES, ALL SEQUENCES to a second 19 server (the next
# major's upgrade, or new hardware) while a writer inserts. There next_id()
# refuses the synchronised generators (55000) until the cut-over (REFRESH
# SEQUENCES, DROP SUBSCRIPTION, sync_generators()), after which every
# generator issues above every copied ID.
#
# Run as root (test/matrix runs it after the per-major suites, with the
# majors of its "# majors:" line as arguments).
set -euo pipefail
cd "$(dirname "$0")/../.."
OLD=${1:-18}
NEW=${2:-19}
[ "$NEW" -ge 19 ] || { echo "logical_upgrade_19.sh: sequence replication needs a PostgreSQL 19 server, not $NEW" >&2; exit 2; }
source lib/checks.sh
source lib/server.sh
source lib/roots.sh
source test/majors/lib/upgrade.sh
command -v psql >/dev/null || fail "no psql on this host"
export PGUSER=postgres
work=$(mktemp -d /tmp/shardid-upgrade-19.XXXXXX)

cleanup() { pg_stop_all; root_leave_all; rm -rf "$work"; }
trap cleanup EXIT

prepare_root "$OLD"
prepare_root "$NEW"
trap cleanup EXIT # (root_enter sets its own EXIT trap)
start_root_server "$OLD" old "wal_level=logical"
OLD_PORT=$port
start_root_server "$NEW" new "wal_level=logical"
NEW_PORT=$port
old() { q -h 127.0.0.1 -p "$OLD_PORT" -d app "$@"; }
new() { q -h 127.0.0.1 -p "$NEW_PORT" -d app "$@"; }

# --- the application on PostgreSQL $OLD -------------------------------------------
app_create old
echo "ok - PostgreSQL $OLD: layout 12/11 bits, 4 shards, 1200 rows, shard 2 an hour ahead"

# --- without sequences: PostgreSQL $OLD -> $NEW -----------------------------------
err=$(old -c "CREATE PUBLICATION shardid_all FOR ALL TABLES, ALL SEQUENCES" 2>&1 || true)
case "$err" in
	*"syntax error"*) ok "PostgreSQL $OLD refuses FOR ALL SEQUENCES: its sequences cannot be replicated" ;;
	*) fail "PostgreSQL $OLD accepted or failed otherwise on FOR ALL SEQUENCES: $err" ;;
esac

# 1. schema, then the layout, registry and marker, on the new server
copy_schema old "$OLD_PORT" new "$work"

# 2. publication of the shard schemas; 3. subscription while the application
# writes; 4. catch-up
publish_shards old "$work"
copy_while_writing old "$OLD_PORT" new "$work"
# an 18 publisher gives no sequence to synchronise
expect "4. sequences the subscription synchronises" \
	"$(new -c "SELECT count(*) FROM pg_subscription_rel AS r JOIN pg_class AS c ON c.oid = r.srrelid WHERE c.relkind = 'S'")" 0

# 5. cut-over
cut_over_checked old "$OLD_PORT" new

# 6. the generators, raised above the copied rows
sync_checked new
err=$(psql -X -q -h 127.0.0.1 -p "$NEW_PORT" -d app -v VERBOSITY=verbose -c "SELECT shardid.configure('2021-01-01')" 2>&1 || true)
case "$err" in *"55000: the layout cannot change"*) ;; *) fail "configure() on the upgraded server: $err" ;; esac

# 7. the application on PostgreSQL $NEW
issues_above new after-upgrade
ok "7. PostgreSQL $NEW: every shard issues above its copied IDs (shard 2 still an hour ahead); layout frozen"

# --- with sequences: PostgreSQL $NEW -> $NEW, FOR ALL TABLES, ALL SEQUENCES -------
start_root_server "$NEW" next
NEXT_PORT=$port
next() { q -h 127.0.0.1 -p "$NEXT_PORT" -d app "$@"; }

# the schema, and the layout before subscribing: the publisher's copy of
# layout_config is then the row already there (the other configuration
# tables, shardid.ids_issued and the generators come by replication)
dump "$NEW_PORT" --schema-only --no-publications --no-subscriptions >"$work/schema-next.sql"
dump "$NEW_PORT" --data-only -t shardid.layout_config >"$work/layout-next.sql"
next -f "$work/schema-next.sql" >/dev/null
next -f "$work/layout-next.sql" >/dev/null
new -c "CREATE PUBLICATION shardid_all FOR ALL TABLES, ALL SEQUENCES" >/dev/null
writer new "$work/writer-new.log" during-next
subscribe next "$NEW_PORT" shardid_all
wait_until next "SELECT count(*) > 0 AND bool_and(srsubstate = 'r') FROM pg_subscription_rel" \
	"every table and sequence is synchronised"
writer_stop
gens=$(next -c "SELECT count(*) FROM pg_subscription_rel AS r JOIN pg_class AS c ON c.oid = r.srrelid
                 JOIN pg_namespace AS n ON n.oid = c.relnamespace
                WHERE c.relkind = 'S' AND n.nspname LIKE 'shard\_%'")
expect "the 4 shard generators are synchronised" "$gens" 4
err=$(psql -X -q -h 127.0.0.1 -p "$NEXT_PORT" -d app -v VERBOSITY=verbose \
	-c "INSERT INTO shard_0002.photos (user_id, caption) VALUES (0, 'too early')" 2>&1 || true)
case "$err" in
	*"55000: sequence shard_0002.id_seq is synchronized by logical replication"*'subscription "shardid_all"'*) ;;
	*) fail "next_id() on a synchronised generator: $err" ;;
esac
ok "while subscribed, next_id() refuses the synchronised generators (55000, the subscription named)"

lsn=$(cut_over new shardid_all)
next -c 'ALTER SUBSCRIPTION shardid_all REFRESH SEQUENCES' >/dev/null
wait_until next "SELECT bool_and(srsubstate = 'r') FROM pg_subscription_rel" "REFRESH SEQUENCES is done"
next -c 'DROP SUBSCRIPTION shardid_all' >/dev/null
new -c 'BEGIN READ WRITE; DROP PUBLICATION shardid_all; COMMIT;' >/dev/null
same_rows new next
expect "the registry came by replication" "$(next -c 'SELECT count(*) FROM shardid.shards')" 4
for s in 0 1 2 3; do
	expect "shard $s's generator holds its publisher's last state" \
		"$(next -c "SELECT last_value FROM shard_000$s.id_seq")" "$(new -c "SELECT last_value FROM shard_000$s.id_seq")"
done
expect "sync_generators() after REFRESH SEQUENCES returns rows" "$(next -c 'SELECT count(*) FROM shardid.sync_generators()')" 0
issues_above next after-next
ok "with FOR ALL SEQUENCES, cut-over at $lsn: every shard issues above its copied IDs"
echo "logical_upgrade_19: all checks passed"
