#!/usr/bin/env bash
# test/majors/logical_upgrade.sh [OLD NEW] — "Upgrade to a new PostgreSQL
# major with logical replication" (README), step by step, from PostgreSQL
# OLD on this host (15, Debian 12's) to PostgreSQL NEW in its Debian root
# (lib/roots.sh; 17, trixie's, by default). Both servers listen on
# 127.0.0.1; the new server subscribes to the old one.
# majors: 15 17
#
# The old server has a configured layout, four logical shards with two
# sharded tables, one generator an hour ahead of the clock, and a writer
# that keeps inserting while the new server copies and catches up. After
# the cut-over and sync_generators(), every new ID of every shard is above
# every replicated one, and every row arrived exactly once.
#
# Run as root (test/matrix runs it after the per-major suites, with the
# majors of its "# majors:" line as arguments).
set -euo pipefail
cd "$(dirname "$0")/../.."
OLD=${1:-15}
NEW=${2:-17}
[ "$OLD" = 15 ] || { echo "logical_upgrade.sh: the old server is this host's PostgreSQL 15, not $OLD" >&2; exit 2; }
export SHARDID_PG=$OLD
source lib/deps.sh
source lib/checks.sh
source lib/server.sh
source lib/roots.sh
source test/majors/lib/upgrade.sh
# the checkout's build on the host
if ! built_by_matrix "$OLD"; then
	install_deps
	make -s clean >/dev/null
	make -s -j"$(nproc)" >/dev/null
	make -s install >/dev/null
fi

work=$(mktemp -d /tmp/shardid-upgrade.XXXXXX)
cleanup() { pg_stop_all; root_leave_all; rm -rf "$work"; }
trap cleanup EXIT
prepare_root "$NEW"
trap cleanup EXIT # (root_enter and pg_start set their own EXIT traps)

# --- the old server: PostgreSQL $OLD on the host --------------------------------
rc=0
pg_start old "listen_addresses = '127.0.0.1'" "wal_level = logical" || rc=$?
trap cleanup EXIT
[ $rc = 0 ] || fail "the old server did not start"
OLD_PORT=$PGPORT
old() { q -h 127.0.0.1 -p "$OLD_PORT" -d app "$@"; }

# --- the new server: PostgreSQL $NEW in its root --------------------------------
start_root_server "$NEW" upgrade-new
NEW_PORT=$port
new() { q -h 127.0.0.1 -p "$NEW_PORT" -d app "$@"; }

# --- the application on the old server -----------------------------------------
q -h 127.0.0.1 -p "$OLD_PORT" -d postgres -c 'CREATE DATABASE app'
app_create old

# --- 1. schema, layout and shard registry on the new server --------------------
copy_schema old "$OLD_PORT" new "$work"

# --- 2. publication of the shard schemas on the old server ---------------------
publish_shards old "$work"

# --- 3. subscription on the new server, while the application writes; 4. copy --
copy_while_writing old "$OLD_PORT" new "$work"

# --- 5. cut-over: writes stop on the old server, the new one confirms its WAL --
cut_over_checked old "$OLD_PORT" new

# --- 6. sync_generators() on the new server ------------------------------------
sync_checked new

# --- 7. the application writes to the new server -------------------------------
issues_above new after
ok "7. 160 new rows on PostgreSQL $NEW: every shard's new IDs above all its replicated ones"
echo "logical_upgrade: all checks passed"
