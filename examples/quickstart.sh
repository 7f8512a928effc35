#!/usr/bin/env bash
# examples/quickstart.sh — build and install shardid, make a private
# PostgreSQL 15 cluster, and walk through logical shards, inserts and
# decoded IDs. Run as root on Debian 12. The cluster is Debian's
# pg_virtualenv (postgresql-common): a throw-away cluster run by "postgres",
# dropped when the tour ends.
set -euo pipefail
cd "$(dirname "$0")/.."
source lib/deps.sh
install_deps

make -s
make -s install >/dev/null
pg_virtualenv -v "$SHARDID_PG" bash -ec '
	echo "private PostgreSQL $PGVERSION on $PGHOST, port $PGPORT"
	createdb demo
	psql -X -v ON_ERROR_STOP=1 -d demo -f examples/quickstart.sql
'
