# test/lib/e2e.sh — shared by the end-to-end scripts in test/e2e: private
# servers (server.sh), and the two helpers every script uses.
source "$(dirname "${BASH_SOURCE[0]}")/server.sh"

# fail MESSAGE — report a failed check and stop the script (servers stop on exit).
fail() { echo "FAIL: $*" >&2; exit 1; }

# q PSQL-ARGS... — run SQL with errors fatal, unaligned tuples-only output.
q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
