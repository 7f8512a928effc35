# shellcheck shell=bash
# lib/checks.sh — how the bash checks report (the release checks, the tests
# across majors, bench/routing, bench/planner): source it; it defines fail,
# ok, expect and q. (Tests of servers are TAP tests in test/tap/.)

# fail MESSAGE — report a failed check and stop the script.
fail() { echo "FAIL: $*" >&2; exit 1; }

# ok MESSAGE — report a passed check.
ok() { echo "ok - $*"; }

# expect NAME ACTUAL EXPECTED — pass if ACTUAL is EXPECTED, else fail.
expect() { [ "$2" = "$3" ] || fail "$1: got '$2', expected '$3'"; ok "$1 ($2)"; }

# q PSQL-ARGS... — run SQL with errors fatal, unaligned tuples-only output.
q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
