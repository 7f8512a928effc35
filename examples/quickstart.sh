#!/usr/bin/env bash
# examples/quickstart.sh — build and install shardid, start a private
# PostgreSQL 15, and walk through logical shards, inserts and decoded IDs.
# Run as root on Debian 12; the server runs as "postgres" and is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
source test/lib/deps.sh
source test/lib/server.sh
install_deps

make -s
make -s install >/dev/null
pg_start quickstart
echo "private PostgreSQL on socket $PGHOST, port $PGPORT"
createdb demo

psql -X -v ON_ERROR_STOP=1 -d demo -f examples/quickstart.sql
